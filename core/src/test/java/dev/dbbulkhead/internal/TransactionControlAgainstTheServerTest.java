package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

/**
 * The guard's reading of SQL against PostgreSQL's own, on generated inputs: strings mixing quotes of every kind,
 * identifiers with {@code $} and {@code e} in them, comments, dollar tags, backslashes and transaction commands, each
 * sent through pgJDBC (which splits it into statements) inside an open transaction, with
 * {@code standard_conforming_strings} on and off. Whenever the server ended that transaction (the driver reports it
 * idle), the guard must have refused the text. Its extra refusals (a {@code BEGIN} inside a transaction only warns, a
 * {@code ;} inside parentheses splits nothing) are counted, not failed.
 */
class TransactionControlAgainstTheServerTest {
    private static final String[] FRAGMENTS = {
        "SELECT 1",
        "SELECT 1 AS x$y$",
        "SELECT name'x\\'",
        "COMMIT",
        "commit",
        "END",
        "ROLLBACK",
        "ABORT",
        "BEGIN",
        "START TRANSACTION",
        "ROLLBACK TO SAVEPOINT s",
        "SAVEPOINT s",
        "SET TRANSACTION READ ONLY",
        "'x\\'",
        "'x'",
        "''''",
        "E'x\\''",
        "e'\\''",
        "name'",
        "U&'x'",
        "N'x'",
        "X'1F'",
        "B'01'",
        "E'",
        "'",
        "$$",
        "$y$",
        "x$y$",
        "$1",
        "$y$ab$y$",
        "\"q\"\"x\"",
        "\"",
        "--",
        "-- c\n",
        "-- c\r",
        "/*",
        "*/",
        "/* /* */",
        "(",
        ")",
        ";",
        "; ",
        "\\",
        "ee'",
        "1e'x'",
    };
    private static final String[] SEPARATORS = {" ", "", "\n", ";", " ; "};

    /** Expressions the server parses whole, each one a trap for a guard that reads quotes or comments wrongly. */
    private static final String[] BALANCED = {
        "1",
        "'x'",
        "''''",
        "E'x\\''",
        "e'\\''",
        "$$;COMMIT$$",
        "$y$ ' $y$",
        "1 AS x$y$",
        "'--'",
        "'/*'",
        "1 AS \"q\"\"x\"",
        "name 'x'",
        "U&'x'",
        "X'1F'",
        "B'01'",
        "1e1",
        "'a' -- c\n",
        "/* /* */ */ 1",
        "'x\\'",
        "'a' -- c\r",
    };

    private static final String[] ENDINGS = {";", " ; ", ";\n", ";\r"};

    private static final String[] COMMANDS = {
        "COMMIT",
        "commit",
        "END",
        "ROLLBACK",
        "ABORT",
        "END WORK",
        "ROLLBACK TRANSACTION",
        "COMMIT AND NO CHAIN",
        "ROLLBACK TO SAVEPOINT s",
        "SAVEPOINT s",
        "SELECT 2"
    };

    /**
     * Half the strings are fragments at random (2 to 12); half are a statement the server parses whole
     * ({@code SELECT} and one to three balanced but tricky expressions), a statement end, a command, and more
     * fragments, so that the server reaches the command often. Seeded.
     */
    private static List<String> generated(long seed, int count) {
        var random = new Random(seed);
        var texts = new ArrayList<String>(count);
        for (int t = 0; t < count; t++) {
            var sb = new StringBuilder();
            if (t % 2 == 0) {
                sb.append("SELECT ").append(pick(random, BALANCED));
                for (int e = random.nextInt(3); e > 0; e--) {
                    sb.append(", ").append(pick(random, BALANCED));
                }
                sb.append(pick(random, ENDINGS)).append(pick(random, COMMANDS));
                fragments(random, sb, random.nextInt(3));
            } else {
                fragments(random, sb, 2 + random.nextInt(11));
            }
            texts.add(sb.toString());
        }
        return texts;
    }

    private static String pick(Random random, String[] choices) {
        return choices[random.nextInt(choices.length)];
    }

    private static void fragments(Random random, StringBuilder sb, int n) {
        for (int p = 0; p < n; p++) {
            if (!sb.isEmpty()) {
                sb.append(pick(random, SEPARATORS));
            }
            sb.append(pick(random, FRAGMENTS));
        }
    }

    /** Whether running {@code sql} inside an open transaction ended it on the server. */
    private static boolean endsTheTransaction(Connection c, String sql) throws SQLException {
        try (var s = c.createStatement()) {
            s.execute("SELECT 1"); // the transaction is open
        }
        assertThat(c.unwrap(BaseConnection.class).getTransactionState()).isEqualTo(TransactionState.OPEN);
        try (var s = c.createStatement()) {
            s.setQueryTimeout(5);
            s.execute(sql);
        } catch (SQLException refusedOrFailed) {
            // what ran before the failure still ran: the state below tells
        }
        boolean ended = c.unwrap(BaseConnection.class).getTransactionState() == TransactionState.IDLE;
        c.rollback();
        return ended;
    }

    @Test
    void whateverTheServerRunsAsTransactionControlTheGuardRefuses() throws Exception {
        int count = Boolean.getBoolean("tests.slow") ? 30_000 : 3_000;
        var missed = new ArrayList<String>();
        int ended = 0;
        int stricter = 0;
        try (Connection c = TestDatabase.get().connect()) {
            c.setAutoCommit(false);
            List<String> texts = generated(27, count);
            for (int t = 0; t < texts.size(); t++) {
                if (t == texts.size() / 2) {
                    try (var s = c.createStatement()) {
                        s.execute("SET standard_conforming_strings = off"); // the second half reads backslashes
                    }
                    c.commit();
                }
                String sql = texts.get(t);
                boolean serverEnded = endsTheTransaction(c, sql);
                boolean refused = TransactionControl.find(sql) != null;
                ended += serverEnded ? 1 : 0;
                stricter += refused && !serverEnded ? 1 : 0;
                if (serverEnded && !refused) {
                    missed.add(sql.replace("\n", "\\n").replace("\r", "\\r"));
                }
            }
        }
        assertThat(ended)
                .as("the generator reaches the server's transaction control")
                .isGreaterThan(count / 10);
        assertThat(missed)
                .as(
                        "texts that ended the transaction on the server but passed the guard (%d ended, the "
                                + "guard also refused %d that did not)",
                        ended, stricter)
                .isEmpty();
    }

    @Test
    void theFindingsOfTheFourthPassAreRefused() {
        // A quote after an identifier's last 'e' is not an E'...' string; a $tag$ inside an identifier opens nothing.
        assertThat(TransactionControl.find("SELECT name'x\\'; COMMIT; SELECT 1 --'"))
                .isEqualTo("COMMIT");
        assertThat(TransactionControl.find("SELECT 1 AS x$y$; COMMIT; SELECT $y$ab$y$"))
                .isEqualTo("COMMIT");
        // A line comment ends at a carriage return too.
        assertThat(TransactionControl.find("SELECT 1; -- note\rCOMMIT")).isEqualTo("COMMIT");
        // With standard_conforming_strings off, a backslash escapes in a plain string: read both ways.
        assertThat(TransactionControl.find("SELECT 'x\\'; COMMIT; --'")).isEqualTo("COMMIT");
        assertThat(TransactionControl.find("SELECT E'x\\'; COMMIT; --'")).isNull();
        assertThat(TransactionControl.find("SELECT $$; COMMIT; $$")).isNull();
        assertThat(TransactionControl.find("ROLLBACK TO SAVEPOINT s")).isNull();
    }
}
