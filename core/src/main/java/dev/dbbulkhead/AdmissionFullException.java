package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;

/**
 * All L + Q admission slots of the workload were taken (L = B unless the workload is adaptive), so the operation was
 * rejected at once, without waiting. Sustained, it means the offered load exceeds what the executions can serve
 * within the queue wait.
 */
public final class AdmissionFullException extends BulkheadRejectedException {
    AdmissionFullException(Snapshot state, boolean stackTrace) {
        super(state, stackTrace);
    }

    @Override
    String describe() {
        return "admission full: all " + (limit() + (long) extraSlots()) + " admission slots (limit + Q) taken, "
                + "refused at once";
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.ADMISSION_FULL;
    }
}
