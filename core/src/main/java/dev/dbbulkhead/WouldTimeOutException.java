package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;
import java.time.Duration;

/**
 * Predictive rejection (a workload built with {@code predictiveRejection}): the expected wait for an execution
 * permit, from the callers queued ahead, the limit and the workload's recent connection hold time, was longer than
 * this caller may wait (its queue wait, or what is left of its deadline). It was refused at once, holding nothing,
 * rather than admitted to wait and then time out.
 */
public final class WouldTimeOutException extends BulkheadRejectedException {
    private final long expectedWaitNanos;

    WouldTimeOutException(Snapshot state, long expectedWaitNanos, boolean stackTrace) {
        super(state, stackTrace);
        this.expectedWaitNanos = expectedWaitNanos;
    }

    @Override
    String describe() {
        return "would time out: an expected wait of " + millis(expectedWaitNanos) + " for an execution permit, "
                + "longer than the " + millis(allowedWait().toNanos()) + " allowed; refused at once";
    }

    /** The expected wait that decided the rejection. */
    public Duration expectedWait() {
        return Duration.ofNanos(expectedWaitNanos);
    }

    /** How many callers were queued ahead. */
    public int queued() {
        return waiting();
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.WOULD_TIME_OUT;
    }
}
