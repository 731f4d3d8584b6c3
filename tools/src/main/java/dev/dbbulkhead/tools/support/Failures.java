package dev.dbbulkhead.tools.support;

import dev.dbbulkhead.testkit.Secrets;
import java.util.ArrayList;

/** How every command tells an unexpected failure: one line, without passwords. */
public final class Failures {
    private Failures() {}

    /**
     * The failure and its causes' messages (at most four, none repeated), in one line, with the passwords of
     * {@code DB_URL}, {@code DB_PASSWORD} and {@code PGBOUNCER_PASSWORD} masked.
     */
    public static String oneLine(Throwable e) {
        var secrets = new ArrayList<String>(Secrets.passwordsIn(System.getenv("DB_URL")));
        secrets.add(System.getenv("DB_PASSWORD"));
        secrets.add(System.getenv("PGBOUNCER_PASSWORD"));
        var parts = new ArrayList<String>();
        for (Throwable t = e; t != null && parts.size() < 4; t = t.getCause()) {
            String m = t.getMessage();
            if (m != null && !m.isBlank() && parts.stream().noneMatch(p -> p.contains(m))) {
                parts.add(Secrets.mask(m.replaceAll("\\s+", " ").strip(), secrets));
            } else if (m == null && t.getCause() == null) {
                parts.add(t.getClass().getSimpleName());
            }
        }
        return String.join(": ", parts);
    }
}
