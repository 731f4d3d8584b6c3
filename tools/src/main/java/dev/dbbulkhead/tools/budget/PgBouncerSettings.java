package dev.dbbulkhead.tools.budget;

import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What one PgBouncer accepts from clients and opens to PostgreSQL for one database, read from its admin console.
 * Columns are read by name, so 1.18's and newer versions' column sets parse alike ({@code reserve_pool} became
 * {@code reserve_pool_size} in SHOW DATABASES; SHOW CONFIG lost and gained columns). {@code serverConnections} is
 * the most this PgBouncer opens to PostgreSQL for the database: its {@code max_db_connections} (per database, else
 * global), else its pool size, plus the reserve pool.
 */
record PgBouncerSettings(
        String database,
        int maxClientConn,
        int maxDbConnections,
        int reservePool,
        @Nullable String poolMode) {

    long serverConnections() {
        return (long) maxDbConnections + reservePool; // both may be as large as an int: no overflow
    }

    /**
     * From the rows of {@code SHOW CONFIG} and {@code SHOW DATABASES}; {@code database} null: the only database
     * other than the console.
     */
    static PgBouncerSettings of(
            List<Map<String, String>> config, List<Map<String, String>> databases, String database) {
        var names = databases.stream()
                .map(r -> r.get("name"))
                .filter(n -> !"pgbouncer".equals(n))
                .toList();
        if (database == null) {
            if (names.size() != 1) {
                throw new IllegalArgumentException(
                        "PgBouncer serves " + names + ": say which with --pgbouncer-database");
            }
            database = names.get(0);
        }
        String wanted = database;
        Map<String, String> row = databases.stream()
                .filter(r -> wanted.equals(r.get("name")))
                .findFirst()
                .orElseThrow(() ->
                        new IllegalArgumentException("PgBouncer has no database '" + wanted + "'; it serves " + names));
        int maxClientConn = integer(setting(config, "max_client_conn"), "max_client_conn");
        int perDatabase = integer(column(row, "max_connections", "max_db_connections"), "max_connections");
        int max = perDatabase > 0 ? perDatabase : integer(setting(config, "max_db_connections"), "max_db_connections");
        if (max <= 0) {
            max = integer(column(row, "pool_size"), "pool_size");
        }
        if (max <= 0) {
            throw new IllegalArgumentException("PgBouncer's database '" + database + "' has neither "
                    + "max_db_connections nor a pool size: its server connections are unbounded");
        }
        String reserve = column(row, "reserve_pool_size", "reserve_pool");
        int reservePool =
                integer(reserve != null ? reserve : setting(config, "reserve_pool_size"), "reserve_pool_size");
        String mode = column(row, "pool_mode");
        return new PgBouncerSettings(
                database,
                maxClientConn,
                max,
                reservePool,
                mode != null && !mode.isEmpty() ? mode : setting(config, "pool_mode"));
    }

    private static @Nullable String setting(List<Map<String, String>> config, String key) {
        return config.stream()
                .filter(r -> key.equals(r.get("key")))
                .map(r -> r.get("value"))
                .findFirst()
                .orElse(null);
    }

    private static @Nullable String column(Map<String, String> row, String... candidates) {
        for (String c : candidates) {
            if (row.containsKey(c)) {
                return row.get(c);
            }
        }
        return null;
    }

    private static int integer(@Nullable String value, String name) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("PgBouncer's " + name + " is not a number: " + value);
        }
    }
}
