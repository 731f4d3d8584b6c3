package dev.dbbulkhead.internal;

import dev.dbbulkhead.DeadlineExceededException.Stage;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * The failures that say the database (or the pool in front of it) is overloaded, for the adaptive limit: a statement
 * cancelled by a timeout (SQLState 57014), a lock not obtained in time (55P03), a deadlock (40P01), too many
 * connections (53300), and a pool that could not hand out a connection in time (a
 * {@link SQLTransientConnectionException}, as HikariCP's timeout is, or a deadline that passed while waiting for
 * one), or no answer within the deadline from a server that could not cancel anything (a queue in PgBouncer).
 * A constraint violation or a serialization failure (40001) is the application's, not load.
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
        if (failure instanceof DeadlinePassed passed
                && (passed.stage() == Stage.CONNECTION_ACQUISITION || passed.stage() == Stage.NO_ANSWER)) {
            return true;
        }
        Throwable t = failure;
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof SQLTransientConnectionException) {
                return true;
            }
            if (t instanceof SQLException e && e.getSQLState() != null) {
                switch (e.getSQLState()) {
                    case "57014", "55P03", "40P01", "53300":
                        return true;
                    default:
                        break;
                }
            }
        }
        return false;
    }
}
