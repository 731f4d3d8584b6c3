package dev.dbbulkhead.spring;

import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;

/** The real PostgreSQL for the starter's tests (DB_URL, or embedded), as Spring Boot properties. */
final class Pg {
    private static volatile boolean tableReady;

    private Pg() {}

    /** {@code spring.datasource.*} for a HikariCP pool of {@code poolSize} on the test server, in the test schema. */
    static String[] datasource(int poolSize) {
        TestDatabase db = TestDatabase.get();
        createTable(db);
        return new String[] {
            "spring.datasource.url=" + db.jdbcUrl(),
            "spring.datasource.username=" + db.user(),
            "spring.datasource.password=" + db.password(),
            "spring.datasource.hikari.data-source-properties.currentSchema=" + TestDatabase.SCHEMA,
            "spring.datasource.hikari.maximum-pool-size=" + poolSize,
            "spring.datasource.hikari.minimum-idle=0",
            "spring.datasource.hikari.connection-timeout=2000"
        };
    }

    private static void createTable(TestDatabase db) {
        if (tableReady) {
            return;
        }
        synchronized (Pg.class) {
            try (Connection c = db.connect();
                    var s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS spring_items (id bigint PRIMARY KEY, note text)");
            } catch (SQLException e) {
                throw new IllegalStateException("cannot create the test table on " + db.description(), e);
            }
            tableReady = true;
        }
    }

    /** How many rows carry {@code id}, read outside any pool. */
    static int rows(long id) throws SQLException {
        try (Connection c = TestDatabase.get().connect();
                var s = c.prepareStatement("SELECT count(*) FROM spring_items WHERE id = ?")) {
            s.setLong(1, id);
            try (var r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }
}
