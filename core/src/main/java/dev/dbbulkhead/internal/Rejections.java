package dev.dbbulkhead.internal;

import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DeadlineExceededException.Stage;
import java.sql.SQLException;

/**
 * The one place rejections are made, each from a live {@link Snapshot}. Implemented in the API package, whose
 * exceptions' constructors are not public; admission is handed one instance per barrier.
 */
public interface Rejections {
    /** All L + Q admission slots were taken. */
    BulkheadRejectedException admissionFull(Snapshot state);

    /** No execution permit within the queue wait ({@link Snapshot#allowedWaitNanos()}). */
    BulkheadRejectedException queueTimeout(Snapshot state);

    /** Predictive rejection: the expected wait exceeds what the caller may wait. */
    BulkheadRejectedException wouldTimeOut(Snapshot state, long expectedWaitNanos);

    /** The deadline passed at {@code stage}, {@code overdueNanos} ago; {@code cause} is the driver's, or null. */
    BulkheadRejectedException deadlineExceeded(Snapshot state, Stage stage, long overdueNanos, SQLException cause);
}
