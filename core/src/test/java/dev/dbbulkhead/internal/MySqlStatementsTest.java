package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.internal.TransactionControl.Effect;
import dev.dbbulkhead.internal.TransactionControl.Finding;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * How the guard reads MySQL and MariaDB text (no database: {@code MariaDbContractTest} runs the refusals on the
 * server, through both drivers, and checks the rows and the next caller's session).
 */
@Tag("no-db")
class MySqlStatementsTest {
    private static Finding read(String sql) {
        return MySqlStatements.inspect(sql, true, false);
    }

    /** More than 200 statements in the shapes applications send (mysql-corpus.sql): none is refused. */
    @Test
    void ordinaryMySqlTextIsNeverRefused() throws IOException {
        List<String> corpus = new ArrayList<>();
        try (InputStream in = MySqlStatementsTest.class.getResourceAsStream("/mysql-corpus.sql")) {
            new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .filter(l -> !l.isBlank() && !l.startsWith("--"))
                    .forEach(corpus::add);
        }
        assertThat(corpus).hasSizeGreaterThanOrEqualTo(200);
        var refused = corpus.stream()
                .filter(sql -> read(sql) != null && read(sql).refused())
                .map(sql -> sql + " -> " + read(sql))
                .toList();
        assertThat(refused).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            COMMIT                                           | COMMIT             | TRANSACTION_CONTROL
            rollback                                         | ROLLBACK           | TRANSACTION_CONTROL
            BEGIN                                            | BEGIN              | TRANSACTION_CONTROL
            START TRANSACTION WITH CONSISTENT SNAPSHOT        | START TRANSACTION  | TRANSACTION_CONTROL
            XA START 'x'                                     | XA                 | TRANSACTION_CONTROL
            SET autocommit = 1                               | SET autocommit     | TRANSACTION_CONTROL
            SET @@SESSION.autocommit = 1                     | SET autocommit     | TRANSACTION_CONTROL
            /*!COMMIT*/                                      | COMMIT             | TRANSACTION_CONTROL
            /*!50000 COMMIT */                               | COMMIT             | TRANSACTION_CONTROL
            /*M!100000 COMMIT */                             | COMMIT             | TRANSACTION_CONTROL
            SELECT 1 /*!; COMMIT */                          | COMMIT             | TRANSACTION_CONTROL
            SELECT 1; -- c\\nCOMMIT                          | COMMIT             | TRANSACTION_CONTROL
            CREATE TABLE t (id INT)                          | CREATE TABLE       | IMPLICIT_COMMIT
            CREATE OR REPLACE VIEW v AS SELECT 1             | CREATE VIEW        | IMPLICIT_COMMIT
            ALTER TABLE t ADD c INT                          | ALTER              | IMPLICIT_COMMIT
            DROP TABLE IF EXISTS nothing                     | DROP               | IMPLICIT_COMMIT
            TRUNCATE t                                       | TRUNCATE           | IMPLICIT_COMMIT
            RENAME TABLE a TO b                              | RENAME             | IMPLICIT_COMMIT
            LOCK TABLES t WRITE                              | LOCK TABLES        | IMPLICIT_COMMIT
            UNLOCK TABLES                                    | UNLOCK TABLES      | IMPLICIT_COMMIT
            ANALYZE TABLE t                                  | ANALYZE            | IMPLICIT_COMMIT
            GRANT SELECT ON *.* TO u                         | GRANT              | IMPLICIT_COMMIT
            SET PASSWORD = 'x'                               | SET PASSWORD       | IMPLICIT_COMMIT
            LOAD INDEX INTO CACHE t                          | LOAD INDEX         | IMPLICIT_COMMIT
            START SLAVE                                      | START SLAVE        | IMPLICIT_COMMIT
            USE other                                        | USE                | SESSION_STATE
            SET SESSION sql_mode = ''                        | SET sql_mode       | SESSION_STATE
            SET LOCAL wait_timeout = 5                       | SET wait_timeout   | SESSION_STATE
            SET @@session.time_zone = '+00:00'               | SET time_zone      | SESSION_STATE
            SET NAMES utf8mb4                                | SET names          | SESSION_STATE
            CREATE TEMPORARY TABLE s (a INT)                 | CREATE TEMPORARY TABLE | SESSION_STATE
            SELECT GET_LOCK('k', 1)                          | GET_LOCK(...)      | SESSION_STATE
            PREPARE s FROM 'COMMIT'                          | PREPARE            | SESSION_STATE
            HANDLER t OPEN                                   | HANDLER            | SESSION_STATE
            SET @x = 1, autocommit = 1                       | SET autocommit     | TRANSACTION_CONTROL
            SET @x := 1, @@session.autocommit = 1            | SET autocommit     | TRANSACTION_CONTROL
            SET `autocommit` = 1                             | SET autocommit     | TRANSACTION_CONTROL
            SET @@session.`AutoCommit` = 1                   | SET autocommit     | TRANSACTION_CONTROL
            SET @x = GREATEST(1, 2), wait_timeout = 55       | SET wait_timeout   | SESSION_STATE
            SET @x = 'a, b' , /* c */ SESSION wait_timeout = 5 | SET wait_timeout | SESSION_STATE
            SET @x = 1 /*!, wait_timeout = 77 */             | SET wait_timeout   | SESSION_STATE
            SET SESSION wait_timeout = 60, net_read_timeout = 31 | SET wait_timeout | SESSION_STATE
            SET @x = 1, NAMES latin1                         | SET names          | SESSION_STATE
            SELECT `get_lock`('x', 0)                        | GET_LOCK(...)      | SESSION_STATE
            SELECT `GET_LOCK` /* c */ ('y', 0)               | GET_LOCK(...)      | SESSION_STATE
            LOCK INSTANCE FOR BACKUP                         | LOCK INSTANCE      | SESSION_STATE
            BACKUP STAGE START                               | BACKUP STAGE       | SESSION_STATE
            """)
    void whatEndsTheTransactionOrOutlivesItIsRefused(String sql, String command, Effect effect) {
        Finding finding = read(sql.replace("\\n", "\n"));
        assertThat(finding).as(sql).isNotNull();
        assertThat(finding.command()).isEqualTo(command);
        assertThat(finding.effect()).isEqualTo(effect);
        assertThat(finding.refusal().getSQLState()).isEqualTo("25000");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            SET @a = 1, @b = 'x, autocommit = 1', @c = CONCAT('a', 'b')
            SET @a := (SELECT MAX(id) FROM t), @b = 2
            SELECT `get_lock` FROM t
            SELECT "get_lock"('x', 0)
            UNLOCK INSTANCE
            """)
    void userVariablesAndMereNamesPass(String sql) {
        assertThat(read(sql)).as(sql).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            SET @a = 1, @B = f(@c, @d)                       | a, b
            SELECT @x := 1, @y                               | x
            SELECT 1, 2 INTO @m, @n                          | m, n
            SELECT a INTO @m FROM t WHERE b = @k             | m
            INSERT INTO t VALUES (@tenant)                   | ''
            SET @`x y` = 1, @'q''s' = 2                       | x y, q's
            SELECT @@session.wait_timeout, '@a := 1', `@b`   | ''
            SELECT 1; SET @z = 2; SELECT @w                  | z
            SET STATEMENT max_statement_time = 1 FOR SELECT @s := 1 | s
            """)
    void theUserVariablesAssignedAreFound(String sql, String names) {
        assertThat(MySqlStatements.assignedVariables(sql, true, false))
                .as(sql)
                .containsExactlyElementsOf(names.isEmpty() ? List.of() : List.of(names.split(", ")));
    }

    /** Texts made of the pieces the readers care about, cut anywhere: read without an exception, every time. */
    @Test
    void anyTextIsReadWithoutFailing() {
        String[] pieces = {
            "SET",
            "@",
            "@@",
            "`",
            "'",
            "\"",
            ",",
            "=",
            ":=",
            "INTO",
            "x",
            " ",
            "/*!",
            "*/",
            "#",
            "\n",
            ";",
            "(",
            ")",
            "get_lock",
            "autocommit",
            "SESSION",
            ".",
            "\\",
            "STATEMENT",
            "FOR",
            "--"
        };
        var random = new java.util.Random(42);
        for (int n = 0; n < 20_000; n++) {
            var text = new StringBuilder();
            for (int k = random.nextInt(12); k >= 0; k--) {
                text.append(pieces[random.nextInt(pieces.length)]);
            }
            String sql = text.toString();
            for (boolean backslashes : new boolean[] {true, false}) {
                MySqlStatements.inspect(sql, backslashes, !backslashes);
                MySqlStatements.assignedVariables(sql, backslashes, !backslashes);
                Shapes.of(sql, true);
                Shapes.of(sql, false);
            }
        }
    }

    @Test
    void theUnsetStatementQuotesEveryName() {
        assertThat(MySqlStatements.unsetVariables(new java.util.LinkedHashSet<>(List.of("a", "x`y"))))
                .isEqualTo("SET @`a` = NULL, @`x``y` = NULL");
    }

    @Test
    void aCommitAfterAHashCommentOrInsideSetStatementIsFound() {
        assertThat(read("SELECT 1;#c\nCOMMIT").command()).isEqualTo("COMMIT");
        assertThat(read("SET STATEMENT max_statement_time=1 FOR COMMIT").command())
                .isEqualTo("COMMIT");
        assertThat(read("SET STATEMENT max_statement_time=1 FOR CREATE TABLE t (a INT)")
                        .effect())
                .isEqualTo(Effect.IMPLICIT_COMMIT);
    }

    @Test
    void aProcedureIsARiskToBeCheckedNotARefusal() {
        assertThat(read("CALL refresh_totals(42)")).isSameAs(MySqlStatements.PROCEDURE);
        assertThat(read("{call refresh_totals(?)}")).isSameAs(MySqlStatements.PROCEDURE);
        assertThat(read("CALL p(); COMMIT").command())
                .as("a refusal after it still wins")
                .isEqualTo("COMMIT");
    }

    @Test
    void theSessionsSqlModeDecidesHowStringsAreRead() {
        String text = "SELECT 'it\\'s; COMMIT; --'";
        assertThat(MySqlStatements.inspect(text, true, false))
                .as("backslash escapes (the default)")
                .isNull();
        assertThat(MySqlStatements.inspect(text, false, false))
                .as("NO_BACKSLASH_ESCAPES")
                .isNotNull();
        String quoted = "SELECT \"a\\\"; COMMIT; --\"";
        assertThat(MySqlStatements.inspect(quoted, true, false)).as("a string").isNull();
        assertThat(MySqlStatements.inspect(quoted, true, true))
                .as("ANSI_QUOTES: an identifier")
                .isNotNull();
    }

    @Test
    void theRefusalsSayWhyOnMySql() {
        assertThat(read("CREATE TABLE t (id INT)").refusal().getMessage())
                .contains("commit the open transaction before it runs")
                .contains("outside work");
        assertThat(read("SET SESSION sql_mode = ''").refusal().getMessage())
                .contains("SET STATEMENT")
                .contains("SET_VAR")
                .doesNotContain("search_path");
    }
}
