package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** The real PostgreSQL for core's tests, and the table the tests write to. */
final class Db {
    private static final AtomicLong IDS = new AtomicLong(System.nanoTime());
    private static volatile boolean schemaReady;

    private Db() {}

    static TestDatabase server() {
        TestDatabase db = TestDatabase.get();
        if (!schemaReady) {
            synchronized (Db.class) {
                if (!schemaReady) {
                    try (Connection c = db.connect();
                            var s = c.createStatement()) {
                        // A real server (DB_URL) keeps tables between runs: start from an empty one.
                        s.execute("DROP TABLE IF EXISTS bulkhead_items");
                        s.execute("CREATE TABLE bulkhead_items (id bigint PRIMARY KEY, note text)");
                    } catch (SQLException e) {
                        throw new IllegalStateException("cannot create the test table on " + db.description(), e);
                    }
                    schemaReady = true;
                }
            }
        }
        return db;
    }

    static HikariDataSource pool(int size) {
        return server().pool(size, Duration.ofSeconds(2));
    }

    static HikariDataSource pool(int size, Duration connectionTimeout) {
        return server().pool(size, connectionTimeout);
    }

    /** An id no other test uses. */
    static long newId() {
        return IDS.incrementAndGet();
    }

    static int insert(Connection c, long id) throws SQLException {
        try (var s = c.prepareStatement("INSERT INTO bulkhead_items (id, note) VALUES (?, 'x')")) {
            s.setLong(1, id);
            return s.executeUpdate();
        }
    }

    /** Runs {@code sql} on a fresh connection outside any pool (in the test schema). */
    static void execute(String sql) throws SQLException {
        try (Connection c = server().connect();
                var s = c.createStatement()) {
            s.execute(sql);
        }
    }

    /** Sends {@code sql} as a plain statement (0), a prepared one (1) or in a batch (2). */
    static void send(Connection c, String sql, int way) throws SQLException {
        switch (way) {
            case 0 -> {
                try (var s = c.createStatement()) {
                    s.execute(sql);
                }
            }
            case 1 -> {
                try (var p = c.prepareStatement(sql)) {
                    p.execute();
                }
            }
            default -> {
                try (var s = c.createStatement()) {
                    s.addBatch(sql);
                    s.executeBatch();
                }
            }
        }
    }

    /** {@code executeUpdate} of {@code sql} on {@code c}. */
    static int update(Connection c, String sql) throws SQLException {
        try (var s = c.createStatement()) {
            return s.executeUpdate(sql);
        }
    }

    /** The first column of the first row of {@code sql} on {@code c}, as an int. */
    static int count(Connection c, String sql) throws SQLException {
        try (var s = c.createStatement();
                var r = s.executeQuery(sql)) {
            r.next();
            return r.getInt(1);
        }
    }

    /** The same on a fresh connection outside any pool. */
    static int count(String sql) throws SQLException {
        try (Connection c = server().connect()) {
            return count(c, sql);
        }
    }

    /** The first column of the first row of {@code sql} on {@code c}, as text. */
    static String text(Connection c, String sql) throws SQLException {
        try (var s = c.createStatement();
                var r = s.executeQuery(sql)) {
            r.next();
            return r.getString(1);
        }
    }

    /** How many rows carry {@code id}, read on a fresh connection outside any pool. */
    static int rows(long id) throws SQLException {
        try (Connection c = server().connect();
                var s = c.prepareStatement("SELECT count(*) FROM bulkhead_items WHERE id = ?")) {
            s.setLong(1, id);
            try (var r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }

    /** Every permit back and no connection left active in the pool. */
    static void assertAllReleased(Workload w, HikariDataSource pool) {
        assertThat(w.available()).as("free execution permits of %s", w).isEqualTo(w.limit());
        assertThat(w.availableSlots()).as("free admission slots of %s", w).isEqualTo(w.limit() + w.extraSlots());
        // Hikari returns a connection on close(); the count settles at once, Awaitility only absorbs the
        // bookkeeping of a connection being evicted on another thread.
        await().atMost(Duration.ofSeconds(5))
                .untilAsserted(() -> assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                        .as("active pool connections")
                        .isZero());
    }
}
