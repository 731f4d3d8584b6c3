package dev.dbbulkhead.tools.support;

import dev.dbbulkhead.testkit.Secrets;

/** The commands that run on {@code DB_URL} (demo, overload) need PostgreSQL: another database is told in one line. */
public final class PostgresOnly {
    private PostgresOnly() {}

    /** Throws, naming what is needed, when {@code DB_URL} is set to a database that is not PostgreSQL. */
    public static void check() {
        String url = System.getenv("DB_URL");
        if (url != null && !url.isBlank() && !url.startsWith("jdbc:postgresql:")) {
            throw new IllegalStateException("this command runs on PostgreSQL (its scenarios use PostgreSQL's SQL): "
                    + "DB_URL is " + Secrets.redact(url) + "; set DB_URL to a jdbc:postgresql: URL, or unset it for "
                    + "an embedded PostgreSQL. The barrier itself also runs on MySQL and MariaDB (README, Databases)");
        }
    }
}
