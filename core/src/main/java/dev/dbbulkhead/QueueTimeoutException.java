package dev.dbbulkhead;

import java.time.Duration;

/**
 * The operation was admitted but no execution permit freed up within its queue wait. It released its
 * admission slot and never took a connection.
 */
public final class QueueTimeoutException extends BulkheadRejectedException {
    private final Duration queueWait;

    QueueTimeoutException(String bulkhead, String workload, int concurrent, int extraSlots, Duration queueWait,
            boolean stackTrace) {
        super(bulkhead, workload, concurrent, extraSlots, stackTrace);
        this.queueWait = queueWait;
    }

    @Override
    String describe() {
        return "admission timed out: no execution permit within " + queueWait + " (concurrent=" + concurrent()
                + ", extraSlots=" + extraSlots() + ")";
    }

    /** How long the operation waited for an execution permit. */
    public Duration queueWait() {
        return queueWait;
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.QUEUE_TIMEOUT;
    }
}
