package dev.dbbulkhead;

import java.time.Duration;

/**
 * Predictive rejection (a workload built with {@code predictiveRejection}): the expected wait for an execution
 * permit, from the callers queued ahead, B and the workload's recent connection hold time, was longer than this
 * caller may wait (its queue wait, or what is left of its deadline). It was refused at once, holding nothing, rather
 * than admitted to wait and then time out.
 */
public final class WouldTimeOutException extends BulkheadRejectedException {
    private final long expectedWaitNanos;
    private final long allowedWaitNanos;
    private final int queued;

    WouldTimeOutException(String bulkhead, String workload, int concurrent, int extraSlots, long expectedWaitNanos,
            long allowedWaitNanos, int queued, boolean stackTrace) {
        super(bulkhead, workload, concurrent, extraSlots, stackTrace);
        this.expectedWaitNanos = expectedWaitNanos;
        this.allowedWaitNanos = allowedWaitNanos;
        this.queued = queued;
    }

    @Override
    String describe() {
        return "would time out: " + queued + " queued ahead, an expected wait of " + Duration.ofNanos(expectedWaitNanos)
                + " for an execution permit, longer than the " + Duration.ofNanos(allowedWaitNanos) + " allowed"
                + " (concurrent=" + concurrent() + ", extraSlots=" + extraSlots() + ")";
    }

    /** The expected wait that decided the rejection. */
    public Duration expectedWait() {
        return Duration.ofNanos(expectedWaitNanos);
    }

    /** What the caller could wait: its queue wait, or what was left of its deadline. */
    public Duration allowedWait() {
        return Duration.ofNanos(allowedWaitNanos);
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.WOULD_TIME_OUT;
    }
}
