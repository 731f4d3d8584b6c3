package dev.dbbulkhead;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import org.junit.jupiter.api.Assumptions;

/**
 * The machine's MariaDB (or MySQL) for the second database's tests, through both drivers: {@code MARIADB_HOST}
 * (default {@code 127.0.0.1:3306}), {@code MARIADB_DATABASE} ({@code test}), {@code MARIADB_USER} ({@code root}) and
 * {@code MARIADB_PASSWORD} (empty). Without a server the tests are skipped, unless {@code MARIADB_REQUIRED=true}
 * (CI), where they fail.
 */
final class MariaDb {
    /** The two drivers a Java service uses against MySQL and MariaDB. */
    enum Driver {
        MARIADB("jdbc:mariadb://"),
        MYSQL("jdbc:mysql://");

        final String prefix;

        Driver(String prefix) {
            this.prefix = prefix;
        }
    }

    static final String TABLE = "bulkhead_items_my";
    private static volatile boolean ready;

    private MariaDb() {}

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    static String url(Driver driver) {
        return driver.prefix + env("MARIADB_HOST", "127.0.0.1:3306") + "/" + env("MARIADB_DATABASE", "test")
                + "?allowMultiQueries=true";
    }

    /** A plain connection (the MariaDB driver), outside any pool; skips the test when there is no server. */
    static Connection connect() throws SQLException {
        try {
            Connection c = DriverManager.getConnection(
                    url(Driver.MARIADB), env("MARIADB_USER", "root"), env("MARIADB_PASSWORD", ""));
            ensureTable(c);
            return c;
        } catch (SQLException unreachable) {
            if (!Boolean.parseBoolean(System.getenv("MARIADB_REQUIRED"))) {
                Assumptions.abort("no MariaDB/MySQL on " + url(Driver.MARIADB) + " (" + unreachable.getMessage() + ")");
            }
            throw unreachable;
        }
    }

    private static void ensureTable(Connection c) throws SQLException {
        if (ready) {
            return;
        }
        synchronized (MariaDb.class) {
            try (var s = c.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS " + TABLE + " (id BIGINT PRIMARY KEY, note VARCHAR(100)) "
                        + "ENGINE=InnoDB");
            }
            ready = true;
        }
    }

    /** A HikariCP pool of {@code size} through {@code driver}. */
    static HikariDataSource pool(Driver driver, int size) throws SQLException {
        connect().close();
        var config = new HikariConfig();
        config.setJdbcUrl(url(driver));
        config.setUsername(env("MARIADB_USER", "root"));
        config.setPassword(env("MARIADB_PASSWORD", ""));
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(Duration.ofSeconds(5).toMillis());
        config.setPoolName("mariadb-" + driver.name().toLowerCase(Locale.ROOT));
        return new HikariDataSource(config);
    }

    static int insert(Connection c, long id) throws SQLException {
        try (var s = c.prepareStatement("INSERT INTO " + TABLE + " (id, note) VALUES (?, 'x')")) {
            s.setLong(1, id);
            return s.executeUpdate();
        }
    }

    /** How many rows carry {@code id}, read outside any pool. */
    static int rows(long id) throws SQLException {
        try (Connection c = connect();
                var s = c.prepareStatement("SELECT count(*) FROM " + TABLE + " WHERE id = ?")) {
            s.setLong(1, id);
            try (var r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }
}
