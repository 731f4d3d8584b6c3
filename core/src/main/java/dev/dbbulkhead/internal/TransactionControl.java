package dev.dbbulkhead.internal;

import java.sql.SQLException;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What SQL text that {@code work} sends may do inside the transaction the barrier owns, read as PostgreSQL reads it.
 * Three kinds of findings ({@link Finding}):
 * <ul>
 * <li><b>Transaction control</b>, refused: {@code COMMIT}, {@code END}, {@code ROLLBACK} (but {@code ROLLBACK TO
 * [SAVEPOINT]}), {@code ABORT}, {@code BEGIN}, {@code START TRANSACTION} and {@code PREPARE TRANSACTION}, at the start
 * of any statement of a multi-statement string. {@code COMMIT PREPARED} and {@code ROLLBACK PREPARED} are left to
 * PostgreSQL, which refuses them inside a transaction block.</li>
 * <li><b>Session state</b>, refused: what would outlive the transaction on the pooled connection and reach the next,
 * unrelated caller. {@code SET} and {@code RESET} of a parameter without {@code LOCAL} ({@code SET TRANSACTION} and
 * {@code SET CONSTRAINTS} are transaction-scoped, and allowed), {@code SET SESSION ...}, {@code SET ROLE},
 * {@code SET SESSION AUTHORIZATION}, {@code SET SESSION CHARACTERISTICS}, {@code DISCARD}, {@code PREPARE name},
 * {@code LISTEN}, {@code LOAD}, {@code DECLARE ... WITH HOLD}, {@code CREATE TEMP TABLE} without
 * {@code ON COMMIT DROP} (also a table created by name in {@code pg_temp} or {@code pg_temp_N}, quoted or qualified
 * with the database), a temporary view, sequence, function or type, {@code SELECT ... INTO TEMP},
 * {@code UPDATE [ONLY] [pg_catalog.]pg_settings} (a {@code SET} by another name), and the calls
 * {@code set_config(..., false)} (a literal), {@code pg_advisory_lock}, {@code pg_advisory_lock_shared},
 * {@code pg_try_advisory_lock} and {@code pg_try_advisory_lock_shared} anywhere in a statement. Each refusal names
 * the transaction-scoped spelling ({@code SET LOCAL}, {@code set_config(..., true)}, {@code pg_advisory_xact_lock},
 * {@code ON COMMIT DROP}).</li>
 * <li><b>A risk to the session</b>, allowed: text that may change the session in a way it cannot show: a {@code DO}
 * block whose PL/pgSQL body has dynamic SQL ({@code EXECUTE}) or a statement the guard does not read there
 * ({@code SET}, {@code CREATE}, {@code CALL}, ...; a body in another language), a {@code CALL}, {@code set_config}
 * whose third argument is not a literal (a parameter, an expression), and any text that names {@code pg_temp} (a
 * {@code search_path} that puts it first makes an unqualified {@code CREATE TABLE} temporary). A {@code DO} body
 * that shows none of these is read as the rest of the text is, and costs nothing more.
 * The transaction runner then compares the session before and after ({@link SessionState}) and has the pool discard
 * a connection whose session changed.</li>
 * </ul>
 *
 * <p><b>It reads SQL as PostgreSQL's lexer and pgJDBC's statement splitter do</b> (their character classes, as
 * documented in PostgreSQL's {@code scan.l}), so that nothing that runs as a statement hides inside what it takes for
 * a literal or a comment:
 * <ul>
 * <li>An identifier starts with a letter, {@code _} or a non-ASCII character and goes on with those, digits and
 * {@code $}: a {@code $} inside an identifier ({@code x$y$}) opens no dollar quote, and a quote right after one
 * ({@code name'x'}) is a plain string, not an {@code E'...'} one.</li>
 * <li>{@code E'...'} (or {@code e}) is an escape string only where the {@code E} is a token of its own, after a space,
 * an operator, a parenthesis or a double quote: backslashes escape there. In a plain {@code '...'} string (and
 * {@code U&'...'}, {@code B'...'}, {@code X'...'}, {@code N'...'}) they escape only when
 * {@code standard_conforming_strings} is off; the guard cannot know the session's setting, so it reads the text both
 * ways and refuses it if either reading finds a command.</li>
 * <li>A dollar quote is {@code $$} or {@code $tag$} (a tag starts with a letter, {@code _} or a non-ASCII character and
 * goes on with those and digits) where the {@code $} starts a token; {@code $1} is a parameter.</li>
 * <li>{@code --} comments end at a line feed or a carriage return; {@code /* *}{@code /} comments nest; a doubled
 * quote stays inside a literal or a quoted identifier.</li>
 * </ul>
 * Statements are split at every {@code ;} outside literals, quoted identifiers and comments, at any depth of
 * parentheses: every statement pgJDBC sends, or PostgreSQL runs from a simple query, starts at one of those places
 * (more places than needed: a {@code ;} inside parentheses only makes the guard stricter). Ordinary SQL costs one pass
 * over its characters and allocates nothing.
 */
final class TransactionControl {
    private TransactionControl() {}

    /** What a finding is. */
    enum Effect {
        /** Ends or starts the transaction: refused. */
        TRANSACTION_CONTROL,
        /** Commits the transaction before it runs, as DDL does on MySQL: refused. */
        IMPLICIT_COMMIT,
        /** Changes the session beyond the transaction: refused. */
        SESSION_STATE,
        /** May change the session in a way the text cannot show: allowed, the session is checked afterwards. */
        SESSION_RISK
    }

    /**
     * One thing found in the text: its effect, the command as the guard names it, and, for session state, the
     * transaction-scoped spelling to use instead (null otherwise).
     */
    record Finding(Effect effect, String command, @Nullable String instead) {
        boolean refused() {
            return effect != Effect.SESSION_RISK;
        }

        /** The refusal sent to work: SQLState 25000 (invalid transaction state). */
        SQLException refusal() {
            if (effect == Effect.TRANSACTION_CONTROL) {
                return new SQLException(
                        "db-bulkhead owns this transaction: work must not send " + command + " as "
                                + "SQL; it commits when work returns and rolls back when work throws (savepoints, and "
                                + "ROLLBACK TO SAVEPOINT, are allowed)",
                        "25000");
            }
            if (effect == Effect.IMPLICIT_COMMIT) {
                return new SQLException(
                        "db-bulkhead owns this transaction: work must not send " + command + " as SQL: " + instead,
                        "25000");
            }
            return new SQLException(
                    "db-bulkhead: work must not send " + command + " as SQL: the change would stay "
                            + "on the pooled connection after the transaction and reach the next caller (the session "
                            + "belongs to the pool); " + instead,
                    "25000");
        }
    }

    private static final Finding ADVISORY_LOCK = session(
            "pg_advisory_lock(...)",
            "use pg_advisory_xact_lock(...) instead, which is released when the transaction ends");
    private static final Finding ADVISORY_LOCK_SHARED = session(
            "pg_advisory_lock_shared(...)",
            "use pg_advisory_xact_lock_shared(...) instead, which is released when the transaction ends");
    private static final Finding TRY_ADVISORY_LOCK = session(
            "pg_try_advisory_lock(...)",
            "use pg_try_advisory_xact_lock(...) instead, which is released when the transaction ends");
    private static final Finding TRY_ADVISORY_LOCK_SHARED = session(
            "pg_try_advisory_lock_shared(...)",
            "use pg_try_advisory_xact_lock_shared(...) instead, which is released when the transaction ends");
    private static final Finding SET_CONFIG_SESSION =
            session("set_config(..., false)", "use set_config(..., true) instead, which ends with the transaction");
    private static final Finding SET_CONFIG_UNKNOWN =
            new Finding(Effect.SESSION_RISK, "set_config(..., <expression>)", null);
    private static final Finding DO_BLOCK = new Finding(Effect.SESSION_RISK, "DO", null);
    static final Finding CALL = new Finding(Effect.SESSION_RISK, "CALL", null);
    private static final Finding TEMP_TABLE = session(
            "CREATE TEMP TABLE without ON COMMIT DROP",
            "add ON COMMIT DROP, which drops the table when the transaction ends");
    private static final Finding SELECT_INTO_TEMP =
            session("SELECT ... INTO TEMP", "use CREATE TEMP TABLE ... ON COMMIT DROP AS SELECT ... instead");
    private static final Finding WITH_HOLD =
            session("DECLARE ... WITH HOLD", "declare the cursor WITHOUT HOLD (the default) and read it inside work");

    private static final Finding SETTINGS_UPDATE = session(
            "UPDATE pg_settings",
            "use set_config(name, value, true) or SET LOCAL instead, which ends with the transaction");
    /** Text that names the session's temporary schema: what it creates there may outlive the transaction. */
    private static final Finding PG_TEMP = new Finding(Effect.SESSION_RISK, "pg_temp", null);

    private static Finding session(String command, String instead) {
        return new Finding(Effect.SESSION_STATE, command, instead);
    }

    /** What may be created in the session's temporary schema by naming it ({@code CREATE TABLE pg_temp.t}). */
    private static final Set<String> TEMP_SCHEMA_OBJECTS =
            Set.of("TABLE", "VIEW", "RECURSIVE", "SEQUENCE", "FUNCTION", "PROCEDURE", "TYPE", "DOMAIN", "AGGREGATE");

    /**
     * The command of the first refusal in {@code sql} (transaction control upper-cased, as {@code COMMIT}), or
     * {@code null} when the guard lets it run.
     */
    static @Nullable String find(String sql) {
        Finding finding = inspect(sql);
        return finding != null && finding.refused() ? finding.command() : null;
    }

    /**
     * The first refusal in {@code sql}, else its first risk to the session, else {@code null}: read with backslashes
     * as plain characters in plain strings ({@code standard_conforming_strings} on, the default), and, if the text has
     * a backslash, as escapes too.
     */
    static @Nullable Finding inspect(String sql) {
        return inspect(sql, true);
    }

    /**
     * Transaction control only, read as PostgreSQL reads SQL: for databases whose session rules the guard does not
     * know ({@code SET} means different things on each), so it refuses none of them.
     */
    static @Nullable Finding inspectTransactionControl(String sql) {
        return inspect(sql, false);
    }

    private static @Nullable Finding inspect(String sql, boolean sessionRules) {
        if (sql == null) {
            return null;
        }
        Finding first = new Lexer(sql, true, sessionRules).scan();
        if ((first != null && first.refused()) || sql.indexOf('\\') < 0) {
            return first;
        }
        Finding second = new Lexer(sql, false, sessionRules).scan();
        return (second != null && second.refused()) || first == null ? second : first;
    }

    /**
     * The procedure {@code sql} calls, as {@code {schema or null, name}} folded as PostgreSQL folds names, when the
     * text is one {@code CALL} statement and nothing else in it is a finding; else null.
     */
    static String @Nullable [] calledProcedure(String sql) {
        if (sql == null) {
            return null;
        }
        var lexer = new Lexer(sql, true, true);
        return lexer.calledProcedure();
    }

    /**
     * Whether the PL/pgSQL body {@code source} shows nothing that may change the session: read as a {@code DO}
     * block's body is.
     */
    static boolean plainBody(String source) {
        return new Lexer(source, true, true).body() == null;
    }

    /** What the rest of a statement is read for, beside the calls that every statement is read for. */
    private enum Mode {
        PLAIN(0),
        /** {@code DECLARE}: {@code WITH HOLD}. */
        DECLARE(4),
        /** {@code CREATE TEMP TABLE}: {@code ON COMMIT DROP}. */
        TEMP_TABLE(2),
        /** {@code SELECT} or {@code WITH}: {@code INTO TEMP}. */
        QUERY(4);

        /** The length of the keyword a sequence starts with: other words are skipped unread until one starts. */
        final int startLength;

        Mode(int startLength) {
            this.startLength = startLength;
        }
    }

    /** One reading of the text, statement by statement. */
    private static final class Lexer {
        private final String sql;
        private final int n;
        /** Whether backslashes are plain characters in a plain string. */
        private final boolean standardStrings;
        /** Whether session changes are looked for, beside transaction control. */
        private final boolean sessionRules;

        private int i;
        /** The keyword sequence matched so far in the statement's {@link Mode}; 3 when whole, and it stays. */
        private int matched;
        /** The statement updates {@code pg_settings}: {@code UPDATE [ONLY] [pg_catalog.]pg_settings}. */
        private boolean settings;
        /** The next name is what {@code UPDATE} writes. */
        private boolean updateTarget;

        Lexer(String sql, boolean standardStrings, boolean sessionRules) {
            this.sql = sql;
            this.n = sql.length();
            this.standardStrings = standardStrings;
            this.sessionRules = sessionRules;
        }

        @Nullable
        Finding scan() {
            Finding risk = null;
            while (i < n) {
                skipSpaceAndComments();
                Finding found = statement();
                if (found != null) {
                    if (found.refused()) {
                        return found;
                    }
                    risk = risk == null ? found : risk;
                }
            }
            return risk;
        }

        /** See {@link TransactionControl#calledProcedure}. */
        String @Nullable [] calledProcedure() {
            skipSpaceAndComments();
            if (!"CALL".equals(word())) {
                return null;
            }
            String[] parts = new String[3];
            int count = 0;
            while (count < 3) {
                skipSpaceAndCommentsOnly();
                int start = i;
                if (i < n && sql.charAt(i) == '"') {
                    skipQuoted('"', false);
                    parts[count++] =
                            sql.substring(start + 1, Math.max(start + 1, i - 1)).replace("\"\"", "\"");
                } else if (i < n && identifierStart(sql.charAt(i))) {
                    while (i < n && identifierPart(sql.charAt(i))) {
                        i++;
                    }
                    parts[count++] = sql.substring(start, i).toLowerCase(Locale.ROOT);
                } else {
                    return null;
                }
                skipSpaceAndCommentsOnly();
                if (i >= n || sql.charAt(i) != '.') {
                    break;
                }
                i++;
            }
            if (i >= n || sql.charAt(i) != '(' || skipStatement(Mode.PLAIN) != null || settings) {
                return null;
            }
            skipSpaceAndComments();
            if (i < n) {
                return null; // another statement follows
            }
            return new String[] {count >= 2 ? parts[count - 2] : null, parts[count - 1]};
        }

        /** One statement: its first words, then the rest of it up to the next {@code ;}. */
        @SuppressWarnings("ReferenceEquality") // the constant itself
        private @Nullable Finding statement() {
            String first = word();
            Mode mode = Mode.PLAIN;
            Finding found = null;
            updateTarget = first.equals("UPDATE");
            settings = false;
            if (!sessionRules) {
                first = transactionControl(first);
                skipStatement(Mode.PLAIN);
                return first == null ? null : new Finding(Effect.TRANSACTION_CONTROL, first, null);
            }
            switch (first) {
                case "COMMIT", "END", "ABORT", "BEGIN", "START", "ROLLBACK", "PREPARE" -> {
                    String control = transactionControl(first);
                    if (control != null) {
                        return new Finding(Effect.TRANSACTION_CONTROL, control, null);
                    }
                    if (first.equals("PREPARE")) {
                        found = session(
                                "PREPARE",
                                "use a PreparedStatement instead (the driver prepares it on the "
                                        + "server and keeps it for the session)");
                    }
                }
                case "SET" -> found = set();
                case "RESET" ->
                    found = session(
                            "RESET " + parameter(word()),
                            "use SET LOCAL name TO DEFAULT instead, which ends with the transaction");
                case "DISCARD" ->
                    found = session(
                            "DISCARD",
                            "leave the session to the pool (for temporary tables, "
                                    + "CREATE TEMP TABLE ... ON COMMIT DROP)");
                case "LISTEN" -> found = session("LISTEN", "listen on a connection of its own, outside the pool");
                case "LOAD" ->
                    found = session(
                            "LOAD",
                            "load the library for every session instead "
                                    + "(session_preload_libraries or shared_preload_libraries)");
                case "DO" -> found = doBlock();
                case "CALL" -> found = CALL;
                case "DECLARE" -> mode = Mode.DECLARE;
                case "CREATE" -> {
                    found = create();
                    mode = found == TEMP_TABLE ? Mode.TEMP_TABLE : Mode.PLAIN;
                }
                case "SELECT", "WITH" -> mode = Mode.QUERY;
                default -> {}
            }
            if (found != null && found.refused() && mode == Mode.PLAIN) {
                skipStatement(Mode.PLAIN);
                return found;
            }
            Finding inside = skipStatement(mode);
            if (inside != null && inside.refused()) {
                return inside;
            }
            if (settings) {
                return SETTINGS_UPDATE;
            }
            if (mode == Mode.TEMP_TABLE) {
                return matched == 3 ? inside : TEMP_TABLE;
            }
            if (mode == Mode.DECLARE && matched == 3) {
                return WITH_HOLD;
            }
            if (mode == Mode.QUERY && matched == 3) {
                return SELECT_INTO_TEMP;
            }
            return found != null ? found : inside;
        }

        /** The command at the start of a statement, if it is a transaction-control one. */
        private @Nullable String transactionControl(String first) {
            switch (first) {
                case "COMMIT", "END", "ABORT" -> {
                    if (!first.equals("COMMIT")) {
                        return first;
                    }
                    int at = i;
                    boolean prepared = "PREPARED".equals(word());
                    i = at;
                    return prepared ? null : first;
                }
                case "BEGIN" -> {
                    return first;
                }
                case "START", "PREPARE" -> {
                    int at = i;
                    if ("TRANSACTION".equals(word())) {
                        return first + " TRANSACTION";
                    }
                    i = at;
                    return null;
                }
                case "ROLLBACK" -> {
                    String next = word();
                    if (next.equals("WORK") || next.equals("TRANSACTION")) {
                        next = word();
                    }
                    return next.equals("TO") || next.equals("PREPARED") ? null : first;
                }
                default -> {
                    return null;
                }
            }
        }

        /**
         * {@code SET ...}: allowed when transaction-scoped ({@code LOCAL}, {@code TRANSACTION}, {@code CONSTRAINTS}).
         */
        private @Nullable Finding set() {
            String second = word();
            switch (second) {
                case "LOCAL", "TRANSACTION", "CONSTRAINTS" -> {
                    return null;
                }
                case "ROLE" -> {
                    return session("SET ROLE", "use SET LOCAL ROLE instead, which ends with the transaction");
                }
                case "SESSION" -> {
                    String third = word();
                    return switch (third) {
                        case "CHARACTERISTICS" ->
                            session(
                                    "SET SESSION CHARACTERISTICS",
                                    "use TransactionOptions "
                                            + "(readOnly(), isolation(...)), or SET TRANSACTION as the first "
                                            + "statement, instead");
                        case "AUTHORIZATION" ->
                            session(
                                    "SET SESSION AUTHORIZATION",
                                    "use SET LOCAL SESSION AUTHORIZATION instead, which ends with the transaction");
                        default ->
                            session(
                                    "SET SESSION " + parameter(third),
                                    "use SET LOCAL " + parameter(third) + " instead, which ends with the transaction");
                    };
                }
                default -> {
                    return session(
                            "SET " + parameter(second),
                            "use SET LOCAL " + parameter(second) + " instead, which ends with the transaction");
                }
            }
        }

        private static String parameter(String word) {
            return word.isEmpty() ? "..." : word.toLowerCase(Locale.ROOT);
        }

        /**
         * {@code CREATE [OR REPLACE] [GLOBAL | LOCAL] {TEMP | TEMPORARY} ...}, or an object created in the session's
         * temporary schema by name ({@code CREATE TABLE pg_temp.t}, {@code "pg_temp_3".t}, {@code db.pg_temp.t}): a
         * temporary table must say {@code ON COMMIT DROP} ({@link #TEMP_TABLE} then tells the caller to read the rest);
         * a temporary view, sequence, function or type cannot, and is refused.
         */
        private @Nullable Finding create() {
            boolean temporary = false;
            String word = word();
            for (int modifiers = 0; modifiers < 4; modifiers++) {
                switch (word) {
                    case "OR", "REPLACE", "GLOBAL", "LOCAL", "UNLOGGED" -> word = word();
                    case "TEMP", "TEMPORARY" -> {
                        temporary = true;
                        word = word();
                    }
                    default -> modifiers = 4;
                }
            }
            if (!temporary && TEMP_SCHEMA_OBJECTS.contains(word)) {
                int at = i;
                if (word.equals("RECURSIVE") || !"IF".equals(word())) {
                    i = at;
                } else {
                    word(); // NOT
                    word(); // EXISTS
                }
                temporary = inTemporarySchema();
            }
            if (!temporary) {
                return null;
            }
            return switch (word) {
                case "TABLE" -> TEMP_TABLE;
                case "VIEW", "RECURSIVE", "SEQUENCE" ->
                    session("CREATE TEMP " + word, "use a table created with ON COMMIT DROP, or a subquery, instead");
                case "FUNCTION", "PROCEDURE", "TYPE", "DOMAIN", "AGGREGATE" ->
                    session(
                            "CREATE " + word + " pg_temp.*",
                            "it would stay in the session's temporary schema: create it in a schema of "
                                    + "its own, outside work");
                default -> null;
            };
        }

        /**
         * Whether the qualified name at {@code i} ({@code [db.]schema.name}, each part plain or quoted) is in the
         * session's temporary schema; {@code i} is left past the name.
         */
        private boolean inTemporarySchema() {
            boolean temporary = false;
            for (int part = 0; part < 3; part++) {
                skipSpaceAndCommentsOnly();
                int start = i;
                boolean quoted = i < n && sql.charAt(i) == '"';
                if (quoted) {
                    skipQuoted('"', false);
                } else {
                    while (i < n && identifierPart(sql.charAt(i))) {
                        i++;
                    }
                }
                int end = i;
                skipSpaceAndCommentsOnly();
                if (i >= n || sql.charAt(i) != '.' || end == start) {
                    return temporary;
                }
                i++;
                temporary = quoted ? temporarySchema(start + 1, end - 1, true) : temporarySchema(start, end, false);
            }
            return temporary;
        }

        /**
         * Whether {@code sql[start, end)} names {@code pg_temp} or {@code pg_temp_N} (a quoted name: in lower case).
         */
        private boolean temporarySchema(int start, int end, boolean quoted) {
            if (end - start < 7 || !sql.regionMatches(!quoted, start, "pg_temp", 0, 7)) {
                return false;
            }
            if (end - start == 7) {
                return true;
            }
            if (sql.charAt(start + 7) != '_' || end - start == 8) {
                return false;
            }
            for (int k = start + 8; k < end; k++) {
                if (sql.charAt(k) < '0' || sql.charAt(k) > '9') {
                    return false;
                }
            }
            return true;
        }

        /**
         * {@code DO [LANGUAGE plpgsql] body}: a PL/pgSQL body is read ({@link #body}), so that a block whose text
         * shows no session change costs nothing more than other SQL, one that shows a refused change is refused, and
         * only one that may change the session unseen (dynamic SQL, a {@code SET} statement, ...) is a risk; a body in
         * any other language is a risk. {@code i} is left at the statement's end.
         */
        private @Nullable Finding doBlock() {
            String language = "PLPGSQL";
            int bodyStart = -1;
            int bodyEnd = -1;
            boolean plain = true;
            while (i < n && sql.charAt(i) != ';') {
                char c = sql.charAt(i);
                if (skipComment()) {
                    continue;
                }
                if (c == '$' && !afterIdentifier()) {
                    int open = i;
                    skipDollarQuoteOrParameter();
                    if (i - open > 1) {
                        int tag = sql.indexOf('$', open + 1) + 1;
                        bodyStart = tag;
                        bodyEnd = Math.max(tag, i - (tag - open));
                    }
                } else if (c == '\'') {
                    boolean escaped = escapeString();
                    int open = i;
                    skipQuoted('\'', escaped);
                    bodyStart = open + 1;
                    bodyEnd = Math.max(bodyStart, i - 1);
                    plain = !escaped && !sql.substring(bodyStart, bodyEnd).contains("''");
                } else if (identifierStart(c)) {
                    if (word().equals("LANGUAGE")) {
                        skipSpaceAndComments();
                        if (i < n && (sql.charAt(i) == '\'' || sql.charAt(i) == '"')) {
                            int open = i;
                            skipQuoted(sql.charAt(i), false);
                            language = sql.substring(open + 1, Math.max(open + 1, i - 1))
                                    .toUpperCase(Locale.ROOT);
                        } else {
                            language = word();
                        }
                    }
                } else {
                    i++;
                }
            }
            if (bodyStart < 0 || !plain || !language.equals("PLPGSQL")) {
                return DO_BLOCK;
            }
            Finding found = new Lexer(sql.substring(bodyStart, bodyEnd), standardStrings, true).body();
            return found == null ? null : found.refused() ? found : DO_BLOCK;
        }

        /**
         * A PL/pgSQL body: the calls and names every statement is read for, {@code UPDATE pg_settings}, and what may
         * change the session in a way the body's text cannot show ({@code EXECUTE}'s dynamic SQL, {@code CALL}) or does
         * not say at the start of a statement as the guard reads it ({@code SET} and {@code RESET} as statements,
         * {@code CREATE}, {@code DISCARD}, {@code LISTEN}, {@code LOAD}, {@code PREPARE}, {@code COMMIT},
         * {@code ROLLBACK}): a risk, so the session is compared around the transaction.
         */
        @Nullable
        Finding body() {
            boolean start = true; // a PL/pgSQL statement may start at the next word
            Finding risk = null;
            while (i < n) {
                char c = sql.charAt(i);
                Finding found = null;
                boolean statementStart = false;
                if (identifierStart(c)) {
                    int from = i++;
                    while (i < n && identifierPart(sql.charAt(i))) {
                        i++;
                    }
                    found = sessionWord(from, i, false);
                    if (found == null
                            && (riskyInBody(from, i)
                                    || (start && (is(from, i, "SET") || is(from, i, "RESET") || is(from, i, "DO"))))) {
                        found = DO_BLOCK;
                    }
                    statementStart = is(from, i, "BEGIN")
                            || is(from, i, "THEN")
                            || is(from, i, "ELSE")
                            || is(from, i, "LOOP")
                            || is(from, i, "DECLARE");
                } else if (c == ';') {
                    i++;
                    if (settings) {
                        return SETTINGS_UPDATE;
                    }
                    updateTarget = false;
                    start = true;
                    continue;
                } else if ((c == '-' || c == '/') && skipComment()) {
                    continue;
                } else if (c == '"') {
                    int from = i;
                    skipQuoted('"', false);
                    found = sessionWord(from + 1, i - 1, true);
                } else if (c == '\'' || (c == '$' && !afterIdentifier())) {
                    int from = i;
                    if (c == '\'') {
                        skipQuoted('\'', escapeString());
                    } else {
                        skipDollarQuoteOrParameter();
                    }
                    found = inLiteral(from, i);
                } else {
                    i++;
                    if (c <= ' ' || c == '<' || c == '>') {
                        continue; // space, and a block's <<label>>
                    }
                }
                start = statementStart;
                if (found != null) {
                    if (found.refused()) {
                        return found;
                    }
                    risk = risk == null ? found : risk;
                }
            }
            return settings ? SETTINGS_UPDATE : risk;
        }

        private boolean riskyInBody(int start, int end) {
            return is(start, end, "EXECUTE")
                    || is(start, end, "CALL")
                    || is(start, end, "CREATE")
                    || is(start, end, "DISCARD")
                    || is(start, end, "LISTEN")
                    || is(start, end, "LOAD")
                    || is(start, end, "PREPARE")
                    || is(start, end, "COMMIT")
                    || is(start, end, "ROLLBACK");
        }

        /**
         * A word of a statement, read for the session: a call that changes it ({@link #call}), the temporary schema
         * ({@link #mentioned}), {@code UPDATE pg_settings} ({@link #noteWord}). Only words that start with p, s, u or o
         * can be any of those: the others cost one comparison.
         */
        private @Nullable Finding sessionWord(int start, int end, boolean quoted) {
            int length = end - start;
            if (length <= 0) { // an empty or unterminated quoted name
                updateTarget = false;
                return null;
            }
            Finding found = null;
            switch ((char) (sql.charAt(start) | 0x20)) {
                case 'p' -> {
                    found = call(start, end, quoted);
                    if (found == null && length >= 7) {
                        found = mentioned(start, end, quoted);
                    }
                    if (length == 10 || length == 11) {
                        noteWord(start, end, quoted); // pg_catalog, pg_settings
                        return found;
                    }
                }
                case 's' -> found = length == 10 ? call(start, end, quoted) : null; // set_config
                case 'u' -> {
                    if (length == 6) {
                        noteWord(start, end, quoted); // UPDATE
                        return null;
                    }
                }
                case 'o' -> {
                    if (length == 4) {
                        noteWord(start, end, quoted); // ONLY
                        return null;
                    }
                }
                default -> {}
            }
            updateTarget = false;
            return found;
        }

        /** A name that may reach the session beyond the transaction: the temporary schema ({@link #PG_TEMP}). */
        private @Nullable Finding mentioned(int start, int end, boolean quoted) {
            return temporarySchema(start, end, quoted) ? PG_TEMP : null;
        }

        /** A literal's text: one that names {@code pg_temp} (a search_path, say) is a risk. */
        private @Nullable Finding inLiteral(int start, int end) {
            if (end - start < 9) { // a quote, pg_temp, a quote
                return null;
            }
            for (int k = start; k + 7 <= end; k++) {
                char c = sql.charAt(k);
                if ((c == 'p' || c == 'P') && sql.regionMatches(true, k, "pg_temp", 0, 7)) {
                    return PG_TEMP;
                }
            }
            return null;
        }

        /**
         * Notes {@code UPDATE [ONLY] [pg_catalog.]pg_settings} (but not {@code FOR [NO KEY] UPDATE}, a row lock): a
         * statement that writes the session's settings.
         */
        private void noteWord(int start, int end, boolean quoted) {
            int length = end - start;
            if (length == 11 && sql.regionMatches(!quoted, start, "pg_settings", 0, 11)) {
                settings |= updateTarget;
                updateTarget = false;
            } else if (length == 6 && !quoted && is(start, end, "UPDATE")) {
                updateTarget = !afterRowLock(start);
            } else if (!(updateTarget
                    && ((!quoted && is(start, end, "ONLY"))
                            || (length == 10 && sql.regionMatches(!quoted, start, "pg_catalog", 0, 10))))) {
                updateTarget = false;
            }
        }

        /** Whether the word before {@code start} is {@code FOR} or {@code KEY} ({@code FOR NO KEY UPDATE}). */
        private boolean afterRowLock(int start) {
            int k = start - 1;
            while (k >= 0 && Character.isWhitespace(sql.charAt(k))) {
                k--;
            }
            int end = k + 1;
            if (k < 0 || ((sql.charAt(k) | 0x20) != 'r' && (sql.charAt(k) | 0x20) != 'y')) {
                return false; // the word before ends neither as FOR nor as KEY
            }
            while (k >= 0 && identifierPart(sql.charAt(k))) {
                k--;
            }
            return is(k + 1, end, "FOR") || is(k + 1, end, "KEY");
        }

        /** The word at {@code i} (after space and comments), upper-cased, and {@code i} past it; "" if none. */
        private String word() {
            skipSpaceAndComments();
            int start = i;
            if (i < n && identifierStart(sql.charAt(i))) {
                i++;
                while (i < n && identifierPart(sql.charAt(i))) {
                    i++;
                }
            }
            return sql.substring(start, i).toUpperCase(Locale.ROOT);
        }

        private void skipSpaceAndComments() {
            while (i < n) {
                char c = sql.charAt(i);
                if (Character.isWhitespace(c) || c == '(') {
                    i++;
                } else if (!skipComment()) {
                    return;
                }
            }
        }

        /** Past a comment at {@code i}, if one starts there. */
        private boolean skipComment() {
            if (sql.startsWith("--", i)) {
                while (i < n && sql.charAt(i) != '\n' && sql.charAt(i) != '\r') {
                    i++;
                }
                return true;
            }
            if (sql.startsWith("/*", i)) {
                int depth = 0;
                while (i < n) {
                    if (sql.startsWith("/*", i)) {
                        depth++;
                        i += 2;
                    } else if (sql.startsWith("*/", i)) {
                        i += 2;
                        if (--depth == 0) {
                            return true;
                        }
                    } else {
                        i++;
                    }
                }
                return true;
            }
            return false;
        }

        /**
         * Past the next {@code ;} outside literals and comments, or to the end; on the way, the calls that change the
         * session, and the keywords that {@code mode} looks for (counted in {@link #matched}).
         */
        private @Nullable Finding skipStatement(Mode mode) {
            matched = 0;
            boolean plain = mode == Mode.PLAIN;
            Finding risk = null;
            while (i < n) {
                char c = sql.charAt(i);
                Finding found = null;
                if (identifierStart(c)) {
                    int start = i++;
                    while (i < n && identifierPart(sql.charAt(i))) {
                        i++;
                    }
                    if (sessionRules) {
                        found = sessionWord(start, i, false);
                    }
                    if (!plain && (matched != 0 || i - start == mode.startLength)) {
                        word(mode, start, i, false);
                    }
                } else if (c == ';') {
                    i++;
                    break;
                } else if ((c == '-' || c == '/') && skipComment()) {
                    continue;
                } else if (c == '\'') {
                    int start = i;
                    skipQuoted('\'', escapeString());
                    found = sessionRules ? inLiteral(start, i) : null;
                    other(plain);
                } else if (c == '"') {
                    int start = i;
                    skipQuoted('"', false);
                    if (sessionRules) {
                        found = sessionWord(start + 1, i - 1, true);
                    }
                    if (!plain) {
                        word(mode, start, i, true);
                    }
                } else if (c == '$' && !afterIdentifier()) {
                    int start = i;
                    skipDollarQuoteOrParameter();
                    found = sessionRules ? inLiteral(start, i) : null;
                    other(plain);
                } else {
                    i++;
                    if (c > ' ') {
                        other(plain);
                    }
                }
                if (found != null) {
                    if (found.refused()) {
                        skipStatement(Mode.PLAIN);
                        return found;
                    }
                    risk = risk == null ? found : risk;
                }
            }
            return risk;
        }

        /**
         * A word of a statement read in {@code mode}: {@code DECLARE}'s {@code WITH HOLD}, {@code CREATE TEMP TABLE}'s
         * {@code ON COMMIT DROP}, a query's {@code INTO TEMP[ORARY]} followed by a table's name (not by what follows
         * {@code INSERT INTO temp}, a table that happens to be called so). {@link #matched} counts the sequence;
         * once whole it stays.
         */
        private void word(Mode mode, int start, int end, boolean quoted) {
            switch (mode) {
                case DECLARE -> {
                    if (matched < 3) {
                        matched = is(start, end, "WITH") ? 1 : matched == 1 && is(start, end, "HOLD") ? 3 : 0;
                    }
                }
                case TEMP_TABLE -> {
                    if (matched < 3) {
                        matched = is(start, end, "ON")
                                ? 1
                                : matched == 1 && is(start, end, "COMMIT")
                                        ? 2
                                        : matched == 2 && is(start, end, "DROP") ? 3 : 0;
                    }
                }
                case QUERY -> {
                    if (matched < 3) {
                        matched = !quoted && is(start, end, "INTO")
                                ? 1
                                : matched == 1 && !quoted && (is(start, end, "TEMP") || is(start, end, "TEMPORARY"))
                                        ? 2
                                        : matched == 2 && (quoted || !notATableName(start, end)) ? 3 : 0;
                    }
                }
                default -> {}
            }
        }

        /** What may follow {@code INSERT INTO temp} where a temporary table's name would follow {@code INTO TEMP}. */
        private boolean notATableName(int start, int end) {
            return is(start, end, "VALUES")
                    || is(start, end, "SELECT")
                    || is(start, end, "DEFAULT")
                    || is(start, end, "OVERRIDING")
                    || is(start, end, "AS")
                    || is(start, end, "WITH");
        }

        /** A token that is not a word breaks a sequence being matched (but a whole one). */
        private void other(boolean plain) {
            if (!plain && matched > 0 && matched < 3) {
                matched = 0;
            }
        }

        private boolean is(int start, int end, String keyword) {
            return end - start == keyword.length() && sql.regionMatches(true, start, keyword, 0, keyword.length());
        }

        /**
         * The identifier {@code sql[start, end)} as a function called here (a {@code (} follows): a session-level
         * advisory lock, or {@code set_config} with its third argument read. A quoted identifier names the function
         * only in lower case, as PostgreSQL folds none.
         */
        @SuppressWarnings("ReferenceEquality") // the constant itself
        private @Nullable Finding call(int start, int end, boolean quoted) {
            int length = end - start;
            if (length != 10 && length != 16 && length != 20 && length != 23 && length != 27) {
                return null;
            }
            char c = sql.charAt(start);
            if (c != 's' && c != 'p' && (quoted || (c != 'S' && c != 'P'))) {
                return null;
            }
            Finding found = length == 10 && named(start, "set_config", quoted)
                    ? SET_CONFIG_SESSION
                    : length == 16 && named(start, "pg_advisory_lock", quoted)
                            ? ADVISORY_LOCK
                            : length == 23 && named(start, "pg_advisory_lock_shared", quoted)
                                    ? ADVISORY_LOCK_SHARED
                                    : length == 20 && named(start, "pg_try_advisory_lock", quoted)
                                            ? TRY_ADVISORY_LOCK
                                            : length == 27 && named(start, "pg_try_advisory_lock_shared", quoted)
                                                    ? TRY_ADVISORY_LOCK_SHARED
                                                    : null;
            if (found == null) {
                return null;
            }
            int at = i;
            skipSpaceAndCommentsOnly();
            boolean called = i < n && sql.charAt(i) == '(';
            if (!called) {
                i = at;
                return null;
            }
            if (found != SET_CONFIG_SESSION) {
                i = at;
                return found;
            }
            Finding scope = setConfigScope(i + 1);
            i = at;
            return scope;
        }

        private boolean named(int start, String name, boolean quoted) {
            return sql.regionMatches(!quoted, start, name, 0, name.length());
        }

        private void skipSpaceAndCommentsOnly() {
            while (i < n) {
                if (Character.isWhitespace(sql.charAt(i))) {
                    i++;
                } else if (!skipComment()) {
                    return;
                }
            }
        }

        /**
         * {@code set_config(name, value, is_local)} from just inside its parenthesis: refused when {@code is_local} is
         * a literal false, allowed when a literal true, a risk otherwise (a parameter, an expression).
         */
        private @Nullable Finding setConfigScope(int from) {
            i = from;
            int depth = 0;
            int argument = 0;
            int thirdStart = -1;
            while (i < n) {
                char c = sql.charAt(i);
                if (skipComment()) {
                    continue;
                }
                if (c == '\'') {
                    skipQuoted('\'', escapeString());
                } else if (c == '"') {
                    skipQuoted('"', false);
                } else if (c == '$' && !afterIdentifier()) {
                    skipDollarQuoteOrParameter();
                } else if (c == ';') {
                    break;
                } else {
                    if (c == '(') {
                        depth++;
                    } else if (c == ')' && depth-- == 0) {
                        return argument == 2 ? literalScope(thirdStart, i) : SET_CONFIG_UNKNOWN;
                    } else if (c == ',' && depth == 0 && ++argument == 2) {
                        thirdStart = i + 1;
                    }
                    i++;
                }
            }
            return SET_CONFIG_UNKNOWN;
        }

        private @Nullable Finding literalScope(int start, int end) {
            String text = sql.substring(start, end).strip();
            if (text.length() >= 2
                    && text.charAt(0) == '\''
                    && text.charAt(text.length() - 1) == '\''
                    && text.indexOf('\'', 1) == text.length() - 1) {
                text = text.substring(1, text.length() - 1).strip();
            }
            return switch (text.toLowerCase(Locale.ROOT)) {
                case "true", "t", "yes", "y", "on", "1" -> null;
                case "false", "f", "no", "n", "off", "0" -> SET_CONFIG_SESSION;
                default -> SET_CONFIG_UNKNOWN;
            };
        }

        /**
         * Whether the quote at {@code i} opens a string whose backslashes escape: an {@code E} before it that follows a
         * character ending an identifier (pgJDBC's rule: a space, an operator or a quote), or any string when
         * backslashes escape in plain ones (the second reading, which also covers an {@code E} the server reads as
         * its own token after another character).
         */
        private boolean escapeString() {
            return !standardStrings
                    || (i >= 2
                            && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e')
                            && endsIdentifier(sql.charAt(i - 2)));
        }

        private boolean afterIdentifier() {
            return i > 0 && identifierPart(sql.charAt(i - 1));
        }

        /**
         * Past a quoted run from {@code i}; a doubled quote stays inside, and with {@code escapes} a backslashed one.
         */
        private void skipQuoted(char quote, boolean escapes) {
            i = TransactionControl.afterQuoted(sql, i, quote, escapes);
        }

        /** Past {@code $tag$ ... $tag$} or {@code $$ ... $$} from {@code i}; past the {@code $} alone otherwise. */
        private void skipDollarQuoteOrParameter() {
            i = afterDollarQuote(sql, i);
        }
    }

    /**
     * The index just past {@code $tag$ ... $tag$} or {@code $$ ... $$} opening at {@code start} in {@code sql} (or its
     * end), or just past the {@code $} alone when none opens there (a parameter, {@code $1}). The guard's lexer and
     * the statements' shapes ({@link Shapes}) read dollar quotes by this one rule.
     */
    static int afterDollarQuote(String sql, int start) {
        int n = sql.length();
        int close = start + 1;
        if (close < n && dollarTagStart(sql.charAt(close))) {
            close++;
            while (close < n && dollarTagPart(sql.charAt(close))) {
                close++;
            }
        }
        if (close >= n || sql.charAt(close) != '$') {
            return start + 1;
        }
        String tag = sql.substring(start, close + 1);
        int end = sql.indexOf(tag, close + 1);
        return end < 0 ? n : end + tag.length();
    }

    /**
     * The index just past the quoted run that opens at {@code start} in {@code sql} (or its end): a doubled quote stays
     * inside, and with {@code escapes} a backslashed character. Both databases' readers share it.
     */
    static int afterQuoted(String sql, int start, char quote, boolean escapes) {
        int n = sql.length();
        int i = start + 1;
        while (i < n) {
            char c = sql.charAt(i);
            if (escapes && c == '\\') {
                i += 2;
            } else if (c == quote) {
                i++;
                if (i >= n || sql.charAt(i) != quote) {
                    return i;
                }
                i++;
            } else {
                i++;
            }
        }
        return Math.min(i, n);
    }

    /** PostgreSQL's {@code ident_start}: a letter, {@code _}, or a non-ASCII character. */
    private static boolean identifierStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c > 127;
    }

    /** PostgreSQL's {@code ident_cont}: those, digits and {@code $}. */
    private static boolean identifierPart(char c) {
        return identifierStart(c) || (c >= '0' && c <= '9') || c == '$';
    }

    /** A space, an operator character or a double quote: what ends an identifier for pgJDBC. */
    private static boolean endsIdentifier(char c) {
        return c == '"'
                || c == ' '
                || c == '\t'
                || c == '\n'
                || c == '\r'
                || c == '\f'
                || ",()[].;:+-*/%^<>=~!@#&|`?".indexOf(c) >= 0;
    }

    private static boolean dollarTagStart(char c) {
        return identifierStart(c);
    }

    /** A dollar quote's tag goes on with letters, {@code _}, non-ASCII characters and digits, never {@code $}. */
    private static boolean dollarTagPart(char c) {
        return identifierStart(c) || (c >= '0' && c <= '9');
    }
}
