package dev.dbbulkhead.internal;

import dev.dbbulkhead.DeadlineExceededException.Stage;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * From the transaction runner to admission, on the way up: the deadline passed at {@link #stage()} once the
 * operation held its permits. The connection is closed and the listeners are told; admission turns this into the
 * public {@code DeadlineExceededException} after the lease is closed. Never reaches a caller.
 */
final class DeadlinePassed extends SQLException {
    private final Stage stage;
    private final long overdueNanos;

    DeadlinePassed(Stage stage, long overdueNanos, @Nullable SQLException cause) {
        super("deadline passed at " + stage, cause == null ? null : cause.getSQLState(), cause);
        this.stage = stage;
        this.overdueNanos = overdueNanos;
    }

    public Stage stage() {
        return stage;
    }

    public long overdueNanos() {
        return overdueNanos;
    }

    /** The driver's exception (a statement cancelled by the deadline's timeout), or {@code null}. */
    public @Nullable SQLException driverException() {
        return (SQLException) getCause();
    }
}
