package dev.dbbulkhead;

import java.sql.Connection;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * The work of one transaction, run by {@link Workload#transaction}. It runs synchronously on the caller's thread, on
 * a connection that refuses commit, rollback, auto-commit changes and close; its return value reaches the caller
 * after the commit, so it must be fully materialised (never a {@code Connection}, {@code Statement},
 * {@code ResultSet} or stream, which are refused).
 */
@FunctionalInterface
public interface SqlWork<T extends @Nullable Object> {
    T run(Connection connection) throws SQLException;
}
