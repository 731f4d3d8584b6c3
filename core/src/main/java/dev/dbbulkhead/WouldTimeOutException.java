package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;
import java.time.Duration;

/**
 * The caller could not be served in time (a workload that predicts: {@code predictiveRejection}, or a
 * {@link QueuePolicy#DEADLINE} queue). Either it was refused at once because its expected wait for an execution
 * permit, from its place in line and the rate at which the workload's permits come back, was longer than it may wait
 * (its queue wait, or what is left of its deadline, less the time its work needs on a {@code DEADLINE} queue); or it
 * waited ({@link #waited()}) and left when it could no longer finish its work before its deadline, rather than wait
 * until the deadline to be told. It holds nothing either way.
 */
public final class WouldTimeOutException extends BulkheadRejectedException {
    private final long expectedWaitNanos;
    private final long waitedNanos;

    WouldTimeOutException(Snapshot state, long expectedWaitNanos, long waitedNanos, boolean stackTrace) {
        super(state, stackTrace);
        this.expectedWaitNanos = expectedWaitNanos;
        this.waitedNanos = waitedNanos;
    }

    @Override
    String describe() {
        if (waitedNanos > 0 || expectedWaitNanos == 0) {
            return "would time out: waited " + millis(waitedNanos) + " for an execution permit and left, since it "
                    + "could no longer finish its work before its deadline";
        }
        return "would time out: an expected wait of " + millis(expectedWaitNanos) + " for an execution permit, "
                + "longer than the " + millis(allowedWait().toNanos()) + " allowed; refused at once";
    }

    /** The expected wait that decided a refusal at once; zero for a caller that waited, then left. */
    public Duration expectedWait() {
        return Duration.ofNanos(expectedWaitNanos);
    }

    /** How long the caller waited before it left; zero for one refused at once. */
    public Duration waited() {
        return Duration.ofNanos(waitedNanos);
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
