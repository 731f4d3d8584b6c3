package dev.dbbulkhead.internal;

import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DeadlineExceededException.Stage;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * The one place rejections are made, each from a live {@link Snapshot}. Implemented in the API package, whose
 * exceptions' constructors are not public; admission is handed one instance per barrier.
 */
public interface Rejections {
    /** All L + Q admission slots were taken. */
    BulkheadRejectedException admissionFull(Snapshot state);

    /** No execution permit within the queue wait ({@link Snapshot#allowedWaitNanos()}). */
    BulkheadRejectedException queueTimeout(Snapshot state);

    /**
     * The caller could not be served in time: refused at once because its expected wait exceeds what it may wait and
     * its chance to start in time is below 1 % ({@code waitedNanos} 0), or, having waited {@code waitedNanos}, it left
     * when it could no longer finish its work before its deadline ({@code expectedWaitNanos} 0).
     */
    BulkheadRejectedException wouldTimeOut(Snapshot state, long expectedWaitNanos, long waitedNanos);

    /** Shed at once: the workload is overloaded and admits newcomers only for {@code targetNanos} of expected wait. */
    BulkheadRejectedException loadShed(Snapshot state, long expectedWaitNanos, long targetNanos);

    /** Refused at once: the workload contended, and the caller's kind ({@link Snapshot#kind()}) at its {@code cap}. */
    BulkheadRejectedException kindCapped(Snapshot state, int cap);

    /** The deadline passed at {@code stage}, {@code overdueNanos} ago; {@code cause} is the driver's, or null. */
    BulkheadRejectedException deadlineExceeded(
            Snapshot state, Stage stage, long overdueNanos, @Nullable SQLException cause);
}
