package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;
import java.time.Duration;

/**
 * Refused at once by a workload with a {@link QueuePolicy#DEADLINE} queue that is overloaded: its door has kept
 * refusing callers (more demand than it serves, not a burst its callers' deadlines absorb), so it admits newcomers
 * only for a short queue delay, and this caller's expected wait was longer. Shedding the excess at once keeps the
 * callers it serves fresh and their waits short. It holds nothing.
 */
public final class LoadShedException extends BulkheadRejectedException {
    private final long expectedWaitNanos;
    private final long targetNanos;

    LoadShedException(Snapshot state, long expectedWaitNanos, long targetNanos, boolean stackTrace) {
        super(state, stackTrace);
        this.expectedWaitNanos = expectedWaitNanos;
        this.targetNanos = targetNanos;
    }

    @Override
    String describe() {
        return "overloaded: an expected wait of " + millis(expectedWaitNanos) + " for an execution permit, longer than "
                + "the " + millis(targetNanos) + " queue delay admitted while the workload sheds load; refused at once";
    }

    /** The expected wait for an execution permit. */
    public Duration expectedWait() {
        return Duration.ofNanos(expectedWaitNanos);
    }

    /** The queue delay the overloaded workload admitted newcomers for. */
    public Duration targetQueueDelay() {
        return Duration.ofNanos(targetNanos);
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.LOAD_SHED;
    }
}
