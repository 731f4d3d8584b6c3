package dev.dbbulkhead.testkit;

import java.util.regex.Pattern;

/** Keeps passwords out of what is printed: a JDBC URL's {@code password=} parameter and {@code user:password@}. */
public final class Secrets {
    private static final Pattern PARAMETER = Pattern.compile("(?i)([?&;]password=)[^&;]*");
    private static final Pattern USER_INFO = Pattern.compile("(//[^/:@?]*:)[^/]*@");

    private Secrets() {}

    /** {@code url} with every password replaced by {@code ***}. */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        return USER_INFO.matcher(PARAMETER.matcher(url).replaceAll("$1***")).replaceAll("$1***@");
    }
}
