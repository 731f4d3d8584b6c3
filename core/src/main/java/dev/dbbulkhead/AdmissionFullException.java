package dev.dbbulkhead;

/**
 * All B + Q admission slots of the workload were taken, so the operation was rejected at once, without
 * waiting. Sustained, it means the offered load exceeds what B executions can serve within the queue wait.
 */
public final class AdmissionFullException extends BulkheadRejectedException {
    AdmissionFullException(String bulkhead, String workload, int concurrent, int extraSlots, boolean stackTrace) {
        super(bulkhead, workload, concurrent, extraSlots, stackTrace);
    }

    @Override
    String describe() {
        return "admission full (" + concurrent() + " running + " + extraSlots() + " waiting = "
                + (concurrent() + (long) extraSlots()) + " admitted)";
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.ADMISSION_FULL;
    }
}
