package dev.dbbulkhead.internal;

import org.jspecify.annotations.Nullable;

/**
 * A statement's shape: its text with literals and parameters taken out, as PostgreSQL's {@code pg_stat_statements}
 * query id or MySQL's statement digest do, so that the operations one call site sends can be told apart by what they
 * run ({@link Kinds#refine}). Words are compared in lower case, quoted identifiers as written; strings, numbers,
 * dollar-quoted strings, {@code $1} and {@code ?} are one literal; comments and spacing are dropped. Kept as a 64-bit
 * hash, one pass over the text without allocating; the readable text only when a kind is named.
 */
final class Shapes {
    private Shapes() {}

    private static final long OFFSET = 0xcbf29ce484222325L;
    private static final long PRIME = 0x100000001b3L;

    /** The shape of {@code sql}, read as MySQL reads it ({@code mysql}) or as PostgreSQL does. */
    static long of(String sql, boolean mysql) {
        return read(sql, mysql, null);
    }

    /** The shape of {@code sql} as text, at most {@code max} characters (then ending with an ellipsis). */
    static String text(String sql, boolean mysql, int max) {
        var text = new StringBuilder();
        read(sql, mysql, text);
        return text.length() <= max ? text.toString() : text.substring(0, max - 1) + "…";
    }

    private static long read(String sql, boolean mysql, @Nullable StringBuilder text) {
        long hash = OFFSET;
        int n = sql.length();
        int i = 0;
        while (i < n) {
            char c = sql.charAt(i);
            int start = i;
            boolean literal = false;
            if (Character.isWhitespace(c)) {
                i++;
                continue;
            } else if ((c == '-' && sql.startsWith("--", i)) || (mysql && c == '#')) {
                while (i < n && sql.charAt(i) != '\n' && sql.charAt(i) != '\r') {
                    i++;
                }
                continue;
            } else if (c == '/' && sql.startsWith("/*", i) && !sql.startsWith("/*!", i) && !sql.startsWith("/*+", i)) {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
                continue;
            } else if (c == '\'' || (mysql && c == '"')) {
                i = TransactionControl.afterQuoted(sql, i, c, mysql);
                literal = true;
            } else if (prefixedString(sql, i)) {
                i = TransactionControl.afterQuoted(sql, i + 1, '\'', mysql || c == 'E' || c == 'e');
                literal = true;
            } else if (c == '$' && !mysql) {
                i = afterDollar(sql, i);
                literal = true;
            } else if (c == '?') {
                i++;
                literal = true;
            } else if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < n && Character.isDigit(sql.charAt(i + 1)))) {
                while (i < n && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '.')) {
                    i++;
                }
                literal = true;
            } else if (c == '"' || c == '`') {
                i = TransactionControl.afterQuoted(sql, i, c, false);
            } else if (Character.isLetter(c) || c == '_') {
                while (i < n
                        && (Character.isLetterOrDigit(sql.charAt(i)) || sql.charAt(i) == '_' || sql.charAt(i) == '$')) {
                    i++;
                }
            } else {
                i++;
            }
            hash = (hash ^ ' ') * PRIME;
            if (literal) {
                hash = (hash ^ '?') * PRIME;
            } else {
                for (int k = start; k < i; k++) {
                    hash = (hash ^ lower(sql.charAt(k))) * PRIME;
                }
            }
            if (text != null) {
                if (!text.isEmpty()) {
                    text.append(' ');
                }
                if (literal) {
                    text.append('?');
                } else {
                    for (int k = start; k < i; k++) {
                        text.append(lower(sql.charAt(k)));
                    }
                }
            }
        }
        return hash;
    }

    /** {@code E'...'}, {@code N'...'}, {@code X'...'}, {@code B'...'}, {@code U&'...'}: one literal. */
    private static boolean prefixedString(String sql, int i) {
        char c = sql.charAt(i);
        boolean prefix = c == 'E' || c == 'e' || c == 'N' || c == 'n' || c == 'X' || c == 'x' || c == 'B' || c == 'b';
        return prefix && i + 1 < sql.length() && sql.charAt(i + 1) == '\'' && (i == 0 || !wordPart(sql.charAt(i - 1)));
    }

    private static boolean wordPart(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }

    /** Past a dollar-quoted string from {@code i}, as the guard reads one, or past {@code $1} (a parameter). */
    private static int afterDollar(String sql, int i) {
        int end = TransactionControl.afterDollarQuote(sql, i);
        if (end == i + 1) {
            while (end < sql.length() && Character.isDigit(sql.charAt(end))) {
                end++;
            }
        }
        return end;
    }

    private static char lower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c + 32) : c;
    }
}
