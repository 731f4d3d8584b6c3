package dev.dbbulkhead.internal;

import java.sql.SQLException;
import java.util.Locale;

/**
 * Finds transaction-control commands in SQL text that {@code work} sends: {@code COMMIT}, {@code END},
 * {@code ROLLBACK} (but {@code ROLLBACK TO [SAVEPOINT]}), {@code ABORT}, {@code BEGIN}, {@code START TRANSACTION}
 * and {@code PREPARE TRANSACTION}, at the start of any statement of a multi-statement string. {@code COMMIT PREPARED}
 * and {@code ROLLBACK PREPARED} are left to PostgreSQL, which refuses them inside a transaction block.
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
 * (more places than needed: a {@code ;} inside parentheses only makes the guard stricter).
 */
final class TransactionControl {
    private TransactionControl() {}

    /** Refuses {@code sql} with SQLState 25000 when it ends or starts a transaction. */
    static void check(String sql) throws SQLException {
        if (sql == null) {
            return;
        }
        String command = find(sql);
        if (command != null) {
            throw new SQLException(GuardedConnection.OWNED + "send " + command + " as SQL; it commits when work "
                    + "returns and rolls back when work throws (savepoints, and ROLLBACK TO SAVEPOINT, are allowed)",
                    "25000");
        }
    }

    /**
     * The first transaction-control command in {@code sql}, upper-cased, or {@code null}: read with backslashes as
     * plain characters in plain strings ({@code standard_conforming_strings} on, the default), and, if the text has a
     * backslash, as escapes too.
     */
    static String find(String sql) {
        String command = new Lexer(sql, true).firstCommand();
        return command != null || sql.indexOf('\\') < 0 ? command : new Lexer(sql, false).firstCommand();
    }

    /** One reading of the text, statement by statement. */
    private static final class Lexer {
        private final String sql;
        private final int n;
        /** Whether backslashes are plain characters in a plain string. */
        private final boolean standardStrings;
        private int i;

        Lexer(String sql, boolean standardStrings) {
            this.sql = sql;
            this.n = sql.length();
            this.standardStrings = standardStrings;
        }

        String firstCommand() {
            while (i < n) {
                skipSpaceAndComments();
                String command = command();
                if (command != null) {
                    return command;
                }
                skipStatement();
            }
            return null;
        }

        /** The command at the start of a statement, if it is a transaction-control one. */
        private String command() {
            String first = word();
            switch (first) {
                case "COMMIT", "END", "ABORT" -> {
                    return first.equals("COMMIT") && "PREPARED".equals(word()) ? null : first;
                }
                case "BEGIN" -> {
                    return first;
                }
                case "START", "PREPARE" -> {
                    return "TRANSACTION".equals(word()) ? first + " TRANSACTION" : null;
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

        /** Past the next {@code ;} outside literals and comments, or to the end. */
        private void skipStatement() {
            while (i < n) {
                char c = sql.charAt(i);
                if (c == ';') {
                    i++;
                    return;
                }
                if (skipComment()) {
                    continue;
                }
                if (c == '\'') {
                    skipQuoted('\'', escapeString());
                } else if (c == '"') {
                    skipQuoted('"', false);
                } else if (c == '$' && !afterIdentifier()) {
                    skipDollarQuoteOrParameter();
                } else if (identifierStart(c)) {
                    i++;
                    while (i < n && identifierPart(sql.charAt(i))) {
                        i++;
                    }
                } else {
                    i++;
                }
            }
        }

        /**
         * Whether the quote at {@code i} opens a string whose backslashes escape: an {@code E} before it that follows a
         * character ending an identifier (pgJDBC's rule: a space, an operator or a quote), or any string when
         * backslashes escape in plain ones (the second reading, which also covers an {@code E} the server reads as
         * its own token after another character).
         */
        private boolean escapeString() {
            return !standardStrings || i >= 2 && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e')
                    && endsIdentifier(sql.charAt(i - 2));
        }

        private boolean afterIdentifier() {
            return i > 0 && identifierPart(sql.charAt(i - 1));
        }

        /** Past a quoted run from {@code i}; a doubled quote stays inside, and with {@code escapes} a backslashed one. */
        private void skipQuoted(char quote, boolean escapes) {
            i++;
            while (i < n) {
                char c = sql.charAt(i);
                if (escapes && c == '\\') {
                    i += 2;
                } else if (c == quote) {
                    i++;
                    if (i >= n || sql.charAt(i) != quote) {
                        return;
                    }
                    i++;
                } else {
                    i++;
                }
            }
        }

        /** Past {@code $tag$ ... $tag$} or {@code $$ ... $$} from {@code i}; past the {@code $} alone otherwise. */
        private void skipDollarQuoteOrParameter() {
            int close = i + 1;
            if (close < n && dollarTagStart(sql.charAt(close))) {
                close++;
                while (close < n && dollarTagPart(sql.charAt(close))) {
                    close++;
                }
            }
            if (close >= n || sql.charAt(close) != '$') {
                i++;
                return;
            }
            String tag = sql.substring(i, close + 1);
            int end = sql.indexOf(tag, close + 1);
            i = end < 0 ? n : end + tag.length();
        }
    }

    /** PostgreSQL's {@code ident_start}: a letter, {@code _}, or a non-ASCII character. */
    private static boolean identifierStart(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c > 127;
    }

    /** PostgreSQL's {@code ident_cont}: those, digits and {@code $}. */
    private static boolean identifierPart(char c) {
        return identifierStart(c) || c >= '0' && c <= '9' || c == '$';
    }

    /** A space, an operator character or a double quote: what ends an identifier for pgJDBC. */
    private static boolean endsIdentifier(char c) {
        return c == '"' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
                || ",()[].;:+-*/%^<>=~!@#&|`?".indexOf(c) >= 0;
    }

    private static boolean dollarTagStart(char c) {
        return identifierStart(c);
    }

    /** A dollar quote's tag goes on with letters, {@code _}, non-ASCII characters and digits, never {@code $}. */
    private static boolean dollarTagPart(char c) {
        return identifierStart(c) || c >= '0' && c <= '9';
    }
}
