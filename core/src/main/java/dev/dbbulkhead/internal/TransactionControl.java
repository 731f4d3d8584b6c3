package dev.dbbulkhead.internal;

import java.sql.SQLException;
import java.util.Locale;

/**
 * Finds transaction-control commands in SQL text that {@code work} sends: {@code COMMIT}, {@code END},
 * {@code ROLLBACK} (but {@code ROLLBACK TO [SAVEPOINT]}), {@code ABORT}, {@code BEGIN}, {@code START TRANSACTION}
 * and {@code PREPARE TRANSACTION}, in any statement of a multi-statement string. Comments ({@code --},
 * nested {@code /* *}{@code /}), string literals ({@code '...'}, {@code E'...'}), quoted identifiers and
 * dollar-quoted bodies ({@code $$...$$}, {@code $tag$...$tag$}) are skipped, so a word inside them does not count.
 * {@code COMMIT PREPARED} and {@code ROLLBACK PREPARED} are left to PostgreSQL, which refuses them inside a
 * transaction block.
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

    /** The first transaction-control command in {@code sql}, upper-cased, or {@code null}. */
    static String find(String sql) {
        int n = sql.length();
        int i = 0;
        while (i < n) {
            i = skipSpaceAndComments(sql, i);
            String command = command(sql, i);
            if (command != null) {
                return command;
            }
            i = nextStatement(sql, i);
        }
        return null;
    }

    /** The command starting at {@code i} if it is a transaction-control one. */
    private static String command(String sql, int i) {
        int end = wordEnd(sql, i);
        String first = sql.substring(i, end).toUpperCase(Locale.ROOT);
        switch (first) {
            case "COMMIT", "END", "ABORT" -> {
                return first.equals("COMMIT") && "PREPARED".equals(nextWord(sql, end)) ? null : first;
            }
            case "BEGIN" -> {
                return first;
            }
            case "START", "PREPARE" -> {
                return "TRANSACTION".equals(nextWord(sql, end)) ? first + " TRANSACTION" : null;
            }
            case "ROLLBACK" -> {
                int j = skipSpaceAndComments(sql, end);
                String next = nextWord(sql, end);
                if ("WORK".equals(next) || "TRANSACTION".equals(next)) {
                    next = nextWord(sql, wordEnd(sql, j));
                }
                return "TO".equals(next) || "PREPARED".equals(next) ? null : first;
            }
            default -> {
                return null;
            }
        }
    }

    private static String nextWord(String sql, int from) {
        int start = skipSpaceAndComments(sql, from);
        return sql.substring(start, wordEnd(sql, start)).toUpperCase(Locale.ROOT);
    }

    private static int wordEnd(String sql, int i) {
        while (i < sql.length() && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_')) {
            i++;
        }
        return i;
    }

    private static int skipSpaceAndComments(String sql, int i) {
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c) || c == '(') {
                i++;
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                i = lineEnd(sql, i);
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                i = blockCommentEnd(sql, i);
            } else {
                break;
            }
        }
        return i;
    }

    /** Past the next top-level {@code ;}, or the end of the text. */
    private static int nextStatement(String sql, int i) {
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (c == ';') {
                return i + 1;
            } else if (c == '\'') {
                boolean escapes = i > 0 && (sql.charAt(i - 1) == 'E' || sql.charAt(i - 1) == 'e');
                i = quotedEnd(sql, i, '\'', escapes);
            } else if (c == '"') {
                i = quotedEnd(sql, i, '"', false);
            } else if (c == '$') {
                i = dollarQuotedEnd(sql, i);
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-') {
                i = lineEnd(sql, i);
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                i = blockCommentEnd(sql, i);
            } else {
                i++;
            }
        }
        return n;
    }

    private static int lineEnd(String sql, int i) {
        int newline = sql.indexOf('\n', i);
        return newline < 0 ? sql.length() : newline + 1;
    }

    /** PostgreSQL block comments nest. */
    private static int blockCommentEnd(String sql, int i) {
        int depth = 0;
        int n = sql.length();
        while (i < n) {
            if (sql.startsWith("/*", i)) {
                depth++;
                i += 2;
            } else if (sql.startsWith("*/", i)) {
                i += 2;
                if (--depth == 0) {
                    return i;
                }
            } else {
                i++;
            }
        }
        return n;
    }

    /** Past a quoted run; a doubled quote stays inside, and with {@code escapes} so does a backslashed one. */
    private static int quotedEnd(String sql, int i, char quote, boolean escapes) {
        int n = sql.length();
        i++;
        while (i < n) {
            char c = sql.charAt(i);
            if (escapes && c == '\\') {
                i += 2;
            } else if (c == quote) {
                if (i + 1 < n && sql.charAt(i + 1) == quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            } else {
                i++;
            }
        }
        return n;
    }

    /** Past {@code $tag$ ... $tag$}; a {@code $} that opens no tag (a parameter {@code $1}) is one character. */
    private static int dollarQuotedEnd(String sql, int i) {
        int close = i + 1;
        while (close < sql.length() && (Character.isLetterOrDigit(sql.charAt(close)) || sql.charAt(close) == '_')) {
            close++;
        }
        boolean parameter = close > i + 1 && Character.isDigit(sql.charAt(i + 1));
        if (close >= sql.length() || sql.charAt(close) != '$' || parameter) {
            return i + 1;
        }
        String tag = sql.substring(i, close + 1);
        int end = sql.indexOf(tag, close + 1);
        return end < 0 ? sql.length() : end + tag.length();
    }
}
