package dev.dbbulkhead.testkit;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps passwords out of what is printed. What the driver parses is masked whole: pgJDBC takes a URL parameter's value
 * up to the next {@code &}, spaces, tabs and {@code ;} included, and URL-decodes it, so every parameter whose name
 * ends in {@code password} ({@code password=}, {@code sslpassword=}, ...), in any case, is read the same way, and its
 * value, as written and decoded, is masked wherever it stands as a whole (not inside a longer word: a short password
 * masked inside ordinary words would give itself away). {@code user:password@} too. A parameter seen in text without
 * its URL is masked up to the next {@code &}, {@code ;} or space.
 */
public final class Secrets {
    private static final Pattern PARAMETER = Pattern.compile("(?i)([?&;][^=&;?\\s]*password=)[^&;\\s]*");
    private static final Pattern USER_INFO = Pattern.compile("(//[^/:@?\\s]*:)[^/@\\s]*@");
    private static final Pattern USER_INFO_VALUE = Pattern.compile("//[^/:@?\\s]*:([^/@\\s]*)@");

    private Secrets() {}

    /** {@code url} with every password it carries (as the driver parses it) replaced by {@code ***}. */
    public static String redact(String url) {
        return mask(url, passwordsIn(url));
    }

    /**
     * The passwords written in {@code url} as pgJDBC reads them: the value of every parameter named like a password,
     * up to the next {@code &}, as written and URL-decoded; and {@code user:password@}.
     */
    public static List<String> passwordsIn(String url) {
        var found = new LinkedHashSet<String>();
        if (url == null) {
            return List.of();
        }
        int query = url.indexOf('?');
        if (query >= 0) {
            for (String parameter : url.substring(query + 1).split("&", -1)) {
                passwordValue(parameter, found);
            }
        }
        int semicolon = url.indexOf(';');
        if (semicolon >= 0 && query < 0) { // other drivers' syntax: jdbc:...;password=...
            for (String parameter : url.substring(semicolon + 1).split(";", -1)) {
                passwordValue(parameter, found);
            }
        }
        Matcher user = USER_INFO_VALUE.matcher(url);
        while (user.find()) {
            found.add(user.group(1));
        }
        found.remove("");
        return new ArrayList<>(found);
    }

    private static void passwordValue(String parameter, Set<String> found) {
        int equals = parameter.indexOf('=');
        if (equals > 0
                && parameter.substring(0, equals).toLowerCase(Locale.ROOT).endsWith("password")) {
            String value = parameter.substring(equals + 1);
            found.add(value);
            try {
                found.add(URLDecoder.decode(value, StandardCharsets.UTF_8));
            } catch (IllegalArgumentException notEncoded) {
                // the value as written is masked
            }
        }
    }

    /**
     * {@code text} with every one of {@code secrets} replaced by {@code ***} wherever it stands whole (e.g. in a
     * driver's message that quotes a mangled host name), then any password parameter and {@code user:password@} left.
     */
    public static String mask(String text, List<String> secrets) {
        String masked = text;
        List<String> longestFirst = new ArrayList<>();
        for (String secret : secrets) {
            if (secret != null && !secret.isEmpty()) { // an unset variable, say
                longestFirst.add(secret);
            }
        }
        longestFirst.sort((a, b) -> Integer.compare(b.length(), a.length()));
        for (String secret : longestFirst) {
            masked = Pattern.compile("(?<![\\p{L}\\p{N}])" + Pattern.quote(secret) + "(?![\\p{L}\\p{N}])")
                    .matcher(masked)
                    .replaceAll("***");
        }
        masked = PARAMETER
                .matcher(masked)
                .replaceAll(m -> Matcher.quoteReplacement(m.group().endsWith("=***") ? m.group() : m.group(1) + "***"));
        return USER_INFO
                .matcher(masked)
                .replaceAll(
                        m -> Matcher.quoteReplacement(m.group().endsWith(":***@") ? m.group() : m.group(1) + "***@"));
    }
}
