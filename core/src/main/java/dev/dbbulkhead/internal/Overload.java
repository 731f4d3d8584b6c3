package dev.dbbulkhead.internal;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The failures that say the database, the pool or PgBouncer is saturated, for the adaptive limit. Only these:
 * <ul>
 *   <li>the operation's deadline passed while it waited for a connection, for an answer (a queue in PgBouncer), or
 *       inside a statement that the deadline's own {@code statement_timeout} or {@code lock_timeout} cut short
 *       ({@link DeadlinePassed}, any stage);
 *   <li>the pool could not hand out a connection in time (a {@link SQLTransientConnectionException}, as HikariCP's
 *       timeout is);
 *   <li>the server is out of resources: SQLState 53000, 53200 (out of memory), 53300 (too many connections);
 *   <li>PgBouncer refused for load (08P01 with {@code query_wait_timeout}, {@code no more connections allowed},
 *       {@code client_login_timeout} or {@code server_login_retry}).
 * </ul>
 * The application's own errors are not load, even when their SQLState is a timeout's: a 55P03 from {@code NOWAIT}
 * or from a {@code lock_timeout} the application set, a 57014 from its own {@code statement_timeout} or a cancel, a
 * deadlock (40P01), a serialization failure (40001), a constraint violation. Counting them would let one bad query,
 * or an application that uses {@code NOWAIT} as a try-lock, collapse the limit.
 */
final class Overload {
    private Overload() {}

    /** Whether {@code failure}, or one of its causes, is the pool's timeout. */
    static boolean poolTimeout(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof SQLTransientConnectionException) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code failure}, or one of its causes, is a sign of overload. */
    static boolean signalled(Throwable failure) {
        Throwable t = failure;
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof DeadlinePassed || t instanceof SQLTransientConnectionException) {
                return true;
            }
            if (t instanceof SQLException e && e.getSQLState() != null && saturated(e)) {
                return true;
            }
        }
        return false;
    }

    private static boolean saturated(SQLException e) {
        return switch (e.getSQLState()) {
            case "53000", "53200", "53300" -> true;
            case "08P01" -> pgBouncerRefusal(e.getMessage());
            default -> false;
        };
    }

    private static boolean pgBouncerRefusal(@Nullable String message) {
        if (message == null) {
            return false;
        }
        String m = message.toLowerCase(Locale.ROOT);
        return m.contains("query_wait_timeout")
                || m.contains("no more connections allowed")
                || m.contains("client_login_timeout")
                || m.contains("server_login_retry");
    }
}
