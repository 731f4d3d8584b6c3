package dev.dbbulkhead.testkit;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * A database whose capacity is exactly K: {@code SELECT bulkhead_slot(k, hold_ms)} takes one of k advisory locks
 * (a free one if any, else waits for one) and holds it for {@code hold_ms} in the current transaction. With n > k
 * operations at once, n − k wait on the locks inside PostgreSQL, which is what an adaptive limit must see.
 */
public final class LockSlots {
    private LockSlots() {}

    /** Creates (or replaces) the function {@code bulkhead_slot} in the connection's schema. */
    public static void install(Connection c) throws SQLException {
        try (var s = c.createStatement()) {
            s.execute("""
                    CREATE OR REPLACE FUNCTION bulkhead_slot(k int, hold_ms int) RETURNS int AS $$
                    DECLARE
                        first int := floor(random() * k);
                    BEGIN
                        FOR j IN 0 .. k - 1 LOOP
                            IF pg_try_advisory_xact_lock(4242, (first + j) % k) THEN
                                PERFORM pg_sleep(hold_ms / 1000.0);
                                RETURN (first + j) % k;
                            END IF;
                        END LOOP;
                        PERFORM pg_advisory_xact_lock(4242, first);
                        PERFORM pg_sleep(hold_ms / 1000.0);
                        RETURN first;
                    END $$ LANGUAGE plpgsql""");
        }
    }

    /** The SQL of one operation: one of {@code k} locks held for {@code holdMillis}. */
    public static String sql(int k, int holdMillis) {
        return "SELECT bulkhead_slot(" + k + ", " + holdMillis + ")";
    }
}
