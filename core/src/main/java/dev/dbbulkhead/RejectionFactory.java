package dev.dbbulkhead;

import dev.dbbulkhead.DeadlineExceededException.Stage;
import dev.dbbulkhead.internal.Rejections;
import dev.dbbulkhead.internal.Snapshot;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/** The rejections of one barrier, made where their constructors are visible; with or without stack traces. */
final class RejectionFactory implements Rejections {
    private final boolean stackTraces;

    RejectionFactory(boolean stackTraces) {
        this.stackTraces = stackTraces;
    }

    @Override
    public BulkheadRejectedException admissionFull(Snapshot state) {
        return new AdmissionFullException(state, stackTraces);
    }

    @Override
    public BulkheadRejectedException queueTimeout(Snapshot state) {
        return new QueueTimeoutException(state, stackTraces);
    }

    @Override
    public BulkheadRejectedException wouldTimeOut(Snapshot state, long expectedWaitNanos, long waitedNanos) {
        return new WouldTimeOutException(state, expectedWaitNanos, waitedNanos, stackTraces);
    }

    @Override
    public BulkheadRejectedException loadShed(Snapshot state, long expectedWaitNanos, long targetNanos) {
        return new LoadShedException(state, expectedWaitNanos, targetNanos, stackTraces);
    }

    @Override
    public BulkheadRejectedException kindCapped(Snapshot state, int cap) {
        return new KindCappedException(state, cap, stackTraces);
    }

    @Override
    public BulkheadRejectedException deadlineExceeded(
            Snapshot state, Stage stage, long overdueNanos, @Nullable SQLException cause) {
        return new DeadlineExceededException(state, stage, overdueNanos, cause, stackTraces);
    }
}
