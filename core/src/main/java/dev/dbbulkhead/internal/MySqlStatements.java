package dev.dbbulkhead.internal;

import dev.dbbulkhead.internal.TransactionControl.Effect;
import dev.dbbulkhead.internal.TransactionControl.Finding;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What SQL text that {@code work} sends may do inside the transaction the barrier owns, read as MySQL and MariaDB read
 * it ({@code sql/sql_lex.cc}): the MySQL side of {@link TransactionControl}, with the same findings.
 * <ul>
 * <li><b>Transaction control</b>, refused: {@code COMMIT}, {@code ROLLBACK} (but {@code ROLLBACK [WORK] TO}),
 * {@code BEGIN}, {@code START TRANSACTION}, {@code XA ...} and {@code SET autocommit}.</li>
 * <li><b>Implicit commits</b>, refused: MySQL commits the open transaction <em>before</em> these run, even when they
 * then fail, so what work did before would be committed while the caller is told it rolled back: DDL
 * ({@code CREATE}, {@code ALTER}, {@code DROP}, {@code RENAME}, {@code TRUNCATE}; but {@code CREATE} and
 * {@code DROP TEMPORARY TABLE}), account management ({@code GRANT}, {@code REVOKE}, {@code SET PASSWORD}),
 * {@code LOCK TABLES}, {@code UNLOCK TABLES}, {@code ANALYZE}, {@code CHECK}, {@code OPTIMIZE} and
 * {@code REPAIR TABLE}, {@code CACHE INDEX}, {@code LOAD INDEX}, {@code FLUSH}, {@code RESET}, {@code INSTALL} and
 * {@code UNINSTALL}, replication control. {@code PREPARE} and {@code EXECUTE} are refused too: the text they run
 * cannot be read.</li>
 * <li><b>Session state</b>, refused: {@code USE}, a {@code SET} of a system variable ({@code SET LOCAL} is
 * {@code SET SESSION} on MySQL: there is no transaction-scoped {@code SET}), anywhere in a {@code SET} list and however
 * its name is spelled, {@code SET NAMES}, {@code CREATE TEMPORARY TABLE} (MySQL has no {@code ON COMMIT DROP}),
 * {@code HANDLER}, {@code GET_LOCK(...)} (its name quoted too), {@code LOCK INSTANCE} and {@code BACKUP}. User
 * variables ({@code SET @x = ...}, {@code @x := ...}, {@code INTO @x}) are allowed, and the ones work assigned are set
 * back to {@code NULL} when the transaction ends ({@link #assignedVariables}).</li>
 * <li><b>A procedure</b> ({@code CALL}, also as JDBC's {@code {call ...}}), allowed: it may end the transaction
 * inside with {@code COMMIT} or {@code ROLLBACK}, which the transaction runner finds out afterwards
 * ({@link Dialect.MySql#transactionEnds}).</li>
 * </ul>
 *
 * <p>Its lexical rules: {@code #} comments to the end of the line; {@code --} is a comment only when a space or a
 * control character follows; {@code /* *}{@code /} comments do not nest, and {@code /*!}, {@code /*!NNNNN} and
 * MariaDB's {@code /*M!} are executed, so their text is read as SQL; strings in {@code '...'} and {@code "..."} (an
 * identifier with {@code ANSI_QUOTES}) with doubled quotes and, unless {@code NO_BACKSLASH_ESCAPES}, backslash escapes
 * (as the session's {@code sql_mode} says, read once from the first connection); backtick identifiers; no dollar
 * quotes. Statements split at every {@code ;} outside those. Thread-safe (stateless).
 */
final class MySqlStatements {
    private MySqlStatements() {}

    private static final String IMPLICIT = "MySQL and MariaDB commit the open transaction before it runs (even when "
            + "it then fails), so what work did before would be committed while the caller is told it rolled back; "
            + "run it outside work, in a transaction of its own";
    private static final Set<String> IMPLICIT_COMMITS = Set.of(
            "ALTER",
            "RENAME",
            "TRUNCATE",
            "GRANT",
            "REVOKE",
            "ANALYZE",
            "CHECK",
            "OPTIMIZE",
            "REPAIR",
            "CACHE",
            "FLUSH",
            "RESET",
            "INSTALL",
            "UNINSTALL",
            "CHANGE",
            "STOP",
            "PURGE",
            "BINLOG");
    private static final String SET_ADVICE = "MySQL has no transaction-scoped SET (SET LOCAL is SET SESSION there): "
            + "give the setting to one statement instead, with SET STATEMENT name = value FOR ... on MariaDB or the "
            + "hint /*+ SET_VAR(name = value) */ on MySQL 8";
    private static final Finding GET_LOCK = new Finding(
            Effect.SESSION_STATE,
            "GET_LOCK(...)",
            "a named lock is held "
                    + "by the session, not the transaction: lock a row with SELECT ... FOR UPDATE instead, which is "
                    + "released when the transaction ends");
    /** The scopes a system variable's assignment may name before it. */
    private static final Set<String> SCOPES = Set.of("GLOBAL", "SESSION", "LOCAL", "PERSIST", "PERSIST_ONLY");
    /** A procedure may COMMIT or ROLLBACK inside: allowed, and its effect on the transaction checked afterwards. */
    static final Finding PROCEDURE = new Finding(Effect.SESSION_RISK, "CALL", null);

    private static final Finding TEMPORARY_TABLE = new Finding(
            Effect.SESSION_STATE,
            "CREATE TEMPORARY TABLE",
            "MySQL keeps a temporary table for the session (there is no ON COMMIT DROP): use a derived table or a "
                    + "common table expression (WITH) instead");

    /**
     * The first refusal in {@code sql}, else {@code null}, read as a session whose {@code sql_mode} has
     * {@code NO_BACKSLASH_ESCAPES} ({@code !backslashes}) and {@code ANSI_QUOTES} ({@code ansiQuotes}) or not.
     */
    static @Nullable Finding inspect(String sql, boolean backslashes, boolean ansiQuotes) {
        return sql == null ? null : new Lexer(sql, backslashes, ansiQuotes).scan();
    }

    /**
     * The user variables that {@code sql} assigns, lower-cased as the server compares them: the targets of a
     * {@code SET} list, of {@code SELECT ... INTO @a, @b}, and any {@code @x :=}. Empty when the text has no {@code @}.
     * They outlive the transaction on the server, so the runner sets them back to {@code NULL} when it ends.
     */
    static Set<String> assignedVariables(String sql, boolean backslashes, boolean ansiQuotes) {
        if (sql == null || sql.indexOf('@') < 0) {
            return Set.of();
        }
        var names = new LinkedHashSet<String>();
        new Lexer(sql, backslashes, ansiQuotes).assigned(names);
        return names;
    }

    /** {@code SET @`a` = NULL, ...}: what puts {@code names} back as they were before any assignment. */
    static String unsetVariables(Set<String> names) {
        var sql = new StringBuilder("SET ");
        for (String name : names) {
            sql.append(sql.length() > 4 ? ", @`" : "@`")
                    .append(name.replace("`", "``"))
                    .append("` = NULL");
        }
        return sql.toString();
    }

    private static Finding control(String command) {
        return new Finding(Effect.TRANSACTION_CONTROL, command, null);
    }

    private static Finding implicitCommit(String command) {
        return new Finding(Effect.IMPLICIT_COMMIT, command, IMPLICIT);
    }

    private static Finding session(String command, String instead) {
        return new Finding(Effect.SESSION_STATE, command, instead);
    }

    /** One reading of the text, statement by statement. */
    private static final class Lexer {
        private final String sql;
        private final int n;
        /** Whether a backslash escapes the next character in a string. */
        private final boolean backslashes;
        /** Whether {@code "..."} is an identifier (no escapes) rather than a string. */
        private final boolean ansiQuotes;

        private int i;

        Lexer(String sql, boolean backslashes, boolean ansiQuotes) {
            this.sql = sql;
            this.n = sql.length();
            this.backslashes = backslashes;
            this.ansiQuotes = ansiQuotes;
        }

        @Nullable
        Finding scan() {
            Finding risk = null;
            while (i < n) {
                skipSpaceAndComments();
                Finding found = statement();
                Finding inside = skipStatement();
                if (found != null && found.refused()) {
                    return found;
                }
                if (inside != null && inside.refused()) {
                    return inside;
                }
                risk = risk != null ? risk : found != null ? found : inside;
            }
            return risk;
        }

        /** The user variables the text assigns, into {@code names} (see {@link #assignedVariables}). */
        void assigned(Set<String> names) {
            boolean statementStart = true;
            boolean setList = false;
            boolean intoList = false;
            boolean target = false; // the next user variable is assigned: after SET, INTO or their commas
            int depth = 0;
            while (i < n) {
                char c = sql.charAt(i);
                if (c == '@' && sql.startsWith("@@", i)) {
                    i += 2;
                    target = false;
                } else if (c == '@') {
                    int start = i;
                    if (userVariable()) {
                        if (target || followedBy(":=")) {
                            names.add(variableName(start + 1, i));
                        }
                    } else {
                        i++;
                    }
                    target = false;
                } else if (identifierPart(c)) {
                    String word = word();
                    setList |= statementStart && word.equals("SET");
                    intoList = word.equals("INTO");
                    target = intoList || (statementStart && setList);
                } else if (c == ';') {
                    i++;
                    setList = intoList = target = false;
                    depth = 0;
                    statementStart = true;
                    continue;
                } else if (c == ',') {
                    i++;
                    target = (setList && depth == 0) || intoList;
                } else if (c <= ' ' || ((c == '#' || c == '-' || c == '/' || c == '*') && skipComment())) {
                    if (c <= ' ') {
                        i++;
                    }
                    continue;
                } else {
                    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
                    skipToken();
                    target = false;
                    intoList = false;
                }
                statementStart = false;
            }
        }

        /** Whether {@code token} comes next, past space and comments; {@code i} stays where it is. */
        private boolean followedBy(String token) {
            int at = i;
            skipSpaceAndCommentsOnly();
            boolean follows = sql.startsWith(token, i);
            i = at;
            return follows;
        }

        /** A user variable's name from its text after the {@code @}: unquoted, lower-cased. */
        private String variableName(int start, int end) {
            char q = sql.charAt(start);
            String name = q == '\'' || q == '"' || q == '`'
                    ? sql.substring(start + 1, Math.max(start + 1, end - 1))
                            .replace(String.valueOf(q) + q, String.valueOf(q))
                    : sql.substring(start, end);
            return name.toLowerCase(Locale.ROOT);
        }

        /** The statement's first words; {@code i} is left inside it. */
        private @Nullable Finding statement() {
            String first = word();
            return switch (first) {
                case "COMMIT", "BEGIN", "XA" -> control(first);
                case "ROLLBACK" -> {
                    String next = word();
                    next = next.equals("WORK") ? word() : next;
                    yield next.equals("TO") ? null : control(first);
                }
                case "START" -> {
                    String next = word();
                    yield next.equals("TRANSACTION") ? control("START TRANSACTION") : implicitCommit("START " + next);
                }
                case "SET" -> set();
                case "USE" -> session("USE", "qualify the names with their database (db.table) inside work instead");
                case "LOCK", "UNLOCK" -> {
                    String next = word();
                    yield next.startsWith("TABLE")
                            ? implicitCommit(first + " TABLES")
                            : first.equals("LOCK") && next.equals("INSTANCE")
                                    ? session(
                                            "LOCK INSTANCE",
                                            "a backup lock is held by the session: take it outside work")
                                    : null;
                }
                case "BACKUP" ->
                    session("BACKUP " + word(), "a backup lock is held by the session: take it outside work");
                case "CREATE" -> create();
                case "DROP" -> "TEMPORARY".equals(word()) ? null : implicitCommit("DROP");
                case "PREPARE", "EXECUTE" ->
                    session(
                            first,
                            "the text it runs cannot be read by the guard: send the "
                                    + "statement itself (a PreparedStatement)");
                case "HANDLER" -> session(first, "read the table with SELECT inside work instead");
                case "CALL" -> PROCEDURE;
                case "LOAD" -> "INDEX".equals(word()) ? implicitCommit("LOAD INDEX") : null;
                default -> IMPLICIT_COMMITS.contains(first) ? implicitCommit(first) : null;
            };
        }

        /**
         * {@code SET ...}: transaction characteristics, and lists of user variables only. A list is read assignment by
         * assignment ({@code SET @x = 1, autocommit = 1} commits on the server): the first one that is not a user
         * variable is refused, however its name is spelled ({@code @@session.x}, {@code SESSION x}, backticks).
         */
        private @Nullable Finding set() {
            int at = i;
            String second = word();
            switch (second) {
                case "TRANSACTION" -> {
                    return null;
                }
                case "STATEMENT" -> {
                    return setStatement();
                }
                case "PASSWORD", "DEFAULT" -> {
                    return implicitCommit("SET " + second);
                }
                default -> i = at;
            }
            while (true) {
                skipSpaceAndComments();
                if (i >= n || sql.charAt(i) == ';') {
                    return null;
                }
                if (!userVariable()) {
                    return systemVariable();
                }
                skipExpression();
                if (i >= n || sql.charAt(i) != ',') {
                    return null;
                }
                i++;
            }
        }

        /** A system variable's assignment at {@code i}, after {@code SET} or a comma: refused. */
        private Finding systemVariable() {
            String name;
            if (sql.startsWith("@@", i)) {
                i += 2;
                name = name();
                skipSpaceAndComments();
                if (i < n && sql.charAt(i) == '.') {
                    i++;
                    name = name();
                }
            } else {
                name = name();
                if (SCOPES.contains(name)) {
                    name = name();
                }
            }
            if (name.equals("AUTOCOMMIT")) {
                return control("SET autocommit");
            }
            return session("SET " + (name.isEmpty() ? "..." : name.toLowerCase(Locale.ROOT)), SET_ADVICE);
        }

        /** Past a user variable's name at {@code i} ({@code @x}, {@code @'x'}, {@code @`x`}), if one is there. */
        private boolean userVariable() {
            if (i + 1 >= n || sql.charAt(i) != '@') {
                return false;
            }
            char c = sql.charAt(i + 1);
            if (c == '\'' || c == '"' || c == '`') {
                i++;
                skipToken();
                return true;
            }
            if (!variablePart(c)) {
                return false;
            }
            i++;
            while (i < n && variablePart(sql.charAt(i))) {
                i++;
            }
            return true;
        }

        /** Past an expression, to the {@code ,} or {@code ;} that ends it outside parentheses (or the end). */
        private void skipExpression() {
            int depth = 0;
            while (i < n) {
                char c = sql.charAt(i);
                if ((c == ',' && depth == 0) || c == ';') {
                    return;
                }
                if (c == '(') {
                    depth++;
                } else if (c == ')') {
                    depth = Math.max(0, depth - 1);
                }
                if (c == '\'' || c == '"' || c == '`') {
                    skipToken();
                } else if (!((c == '#' || c == '-' || c == '/' || c == '*') && skipComment())) {
                    i++;
                }
            }
        }

        /**
         * A name at {@code i}: a word, or a backticked (or, with ANSI_QUOTES, double-quoted) identifier; upper-cased.
         */
        private String name() {
            skipSpaceAndComments();
            if (i < n && (sql.charAt(i) == '`' || (ansiQuotes && sql.charAt(i) == '"'))) {
                int start = i;
                skipToken();
                return sql.substring(start + 1, Math.max(start + 1, i - 1)).toUpperCase(Locale.ROOT);
            }
            return word();
        }

        /**
         * MariaDB's {@code SET STATEMENT name = value, ... FOR statement}: the setting ends with it; the statement is
         * read.
         */
        private @Nullable Finding setStatement() {
            while (i < n) {
                skipSpaceAndComments();
                if (i >= n || sql.charAt(i) == ';') {
                    return null;
                }
                int start = i;
                if (identifierPart(sql.charAt(i))) {
                    String w = word();
                    if (w.equals("FOR")) {
                        skipSpaceAndComments();
                        return statement();
                    }
                } else {
                    skipToken();
                }
                if (i == start) {
                    i++;
                }
            }
            return null;
        }

        /** {@code CREATE [OR REPLACE] [TEMPORARY] ...}: a temporary table is session state, anything else DDL. */
        private Finding create() {
            String next = word();
            if (next.equals("OR")) {
                word(); // REPLACE
                next = word();
            }
            return next.equals("TEMPORARY") ? TEMPORARY_TABLE : implicitCommit("CREATE " + next);
        }

        /** The word at {@code i} (after space and comments), upper-cased, and {@code i} past it; "" if none. */
        private String word() {
            skipSpaceAndComments();
            int start = i;
            while (i < n && identifierPart(sql.charAt(i))) {
                i++;
            }
            return sql.substring(start, i).toUpperCase(Locale.ROOT);
        }

        private void skipSpaceAndComments() {
            while (i < n) {
                char c = sql.charAt(i);
                if (c <= ' ' || c == '(' || c == '{' || Character.isWhitespace(c)) {
                    i++;
                } else if (!skipComment()) {
                    return;
                }
            }
        }

        /**
         * Past a comment at {@code i}, if one starts there; an executed one ({@code /*!}, {@code /*!NNNNN},
         * {@code /*M!}) only past its opening, so that its text is read, and its closing is read as a space.
         */
        private boolean skipComment() {
            char c = sql.charAt(i);
            if (c == '#' || (c == '-' && sql.startsWith("--", i) && (i + 2 >= n || sql.charAt(i + 2) <= ' '))) {
                while (i < n && sql.charAt(i) != '\n') {
                    i++;
                }
                return true;
            }
            if (c == '*' && sql.startsWith("*/", i)) {
                i += 2; // the end of an executed comment
                return true;
            }
            if (c != '/' || !sql.startsWith("/*", i)) {
                return false;
            }
            if (sql.startsWith("/*!", i) || sql.startsWith("/*M!", i)) {
                i += sql.charAt(i + 2) == 'M' ? 4 : 3;
                while (i < n && sql.charAt(i) >= '0' && sql.charAt(i) <= '9') {
                    i++;
                }
                return true;
            }
            int end = sql.indexOf("*/", i + 2);
            i = end < 0 ? n : end + 2;
            return true;
        }

        /**
         * Past the next {@code ;} outside strings, identifiers and comments, or to the end; a named lock on the way.
         */
        private @Nullable Finding skipStatement() {
            Finding found = null;
            while (i < n) {
                char c = sql.charAt(i);
                if (identifierPart(c)) {
                    int start = i++;
                    while (i < n && identifierPart(sql.charAt(i))) {
                        i++;
                    }
                    if (i - start == 8
                            && found == null
                            && sql.regionMatches(true, start, "GET_LOCK", 0, 8)
                            && followedBy("(")) {
                        found = GET_LOCK;
                    }
                } else if (c == ';') {
                    i++;
                    break;
                } else if (c == '\'' || c == '"' || c == '`') {
                    int start = i;
                    skipToken();
                    if (found == null
                            && i - start == 10
                            && (c == '`' || (c == '"' && ansiQuotes))
                            && sql.regionMatches(true, start + 1, "GET_LOCK", 0, 8)
                            && followedBy("(")) {
                        found = GET_LOCK; // a quoted name still calls the function
                    }
                } else if (!((c == '#' || c == '-' || c == '/' || c == '*') && skipComment())) {
                    i++;
                }
            }
            return found;
        }

        /** Past one token at {@code i} that is not a word: a quoted run, or one character. */
        private void skipToken() {
            char c = sql.charAt(i);
            if (c == '\'') {
                skipQuoted(c, backslashes);
            } else if (c == '"') {
                skipQuoted(c, backslashes && !ansiQuotes);
            } else if (c == '`') {
                skipQuoted('`', false);
            } else {
                i++;
            }
        }

        private void skipSpaceAndCommentsOnly() {
            while (i < n) {
                if (sql.charAt(i) <= ' ') {
                    i++;
                } else if (!skipComment()) {
                    return;
                }
            }
        }

        /**
         * Past a quoted run from {@code i}; a doubled quote stays inside, and with {@code escapes} a backslashed one.
         */
        private void skipQuoted(char quote, boolean escapes) {
            i = TransactionControl.afterQuoted(sql, i, quote, escapes);
        }
    }

    /** The characters of an unquoted user variable's name: an identifier's, and {@code .}. */
    private static boolean variablePart(char c) {
        return identifierPart(c) || c == '.';
    }

    /** MySQL's identifier characters: letters, digits, {@code _}, {@code $} and anything beyond ASCII. */
    private static boolean identifierPart(char c) {
        return (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || c == '_'
                || c == '$'
                || c > 127;
    }
}
