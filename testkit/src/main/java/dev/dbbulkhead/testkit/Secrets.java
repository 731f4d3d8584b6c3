package dev.dbbulkhead.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps passwords out of what is printed: every URL parameter whose name contains {@code password}
 * ({@code password=}, {@code sslpassword=}, ...), in any case, and {@code user:password@}.
 */
public final class Secrets {
    private static final Pattern PARAMETER = Pattern.compile("(?i)([?&;][^=&;?\\s]*password=)[^&;\\s]*");
    private static final Pattern USER_INFO = Pattern.compile("(//[^/:@?]*:)[^/]*@");

    private Secrets() {}

    /** {@code url} with every password replaced by {@code ***}. */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        return USER_INFO.matcher(PARAMETER.matcher(url).replaceAll("$1***")).replaceAll("$1***@");
    }

    /** The passwords written in {@code url} (parameters named like a password, {@code user:password@}), for {@link #mask}. */
    public static List<String> passwordsIn(String url) {
        var found = new ArrayList<String>();
        if (url != null) {
            Matcher p = Pattern.compile("(?i)[?&;][^=&;?\\s]*password=([^&;\\s]*)").matcher(url);
            while (p.find()) {
                found.add(p.group(1));
            }
            Matcher u = Pattern.compile("//[^/:@?]*:([^/@]*)@").matcher(url);
            while (u.find()) {
                found.add(u.group(1));
            }
        }
        return found;
    }

    /**
     * {@code text} with URLs {@link #redact redacted} and every one of {@code secrets} (as written anywhere, e.g. in a
     * driver's message that quotes a mangled host name) replaced by {@code ***}.
     */
    public static String mask(String text, List<String> secrets) {
        String masked = redact(text);
        for (String secret : secrets) {
            if (secret != null && !secret.isEmpty()) {
                masked = masked.replace(secret, "***");
            }
        }
        return masked;
    }
}
