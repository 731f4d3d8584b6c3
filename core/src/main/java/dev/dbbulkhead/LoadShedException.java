package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;
import java.time.Duration;

/**
 * Refused at once by a workload with a {@link QueuePolicy#DEADLINE} queue that is overloaded: its door has kept
 * refusing callers it could not serve in time (more demand than it serves, not a burst its callers' deadlines
 * absorb), and this caller's expected wait for a permit was longer than it may wait. While not overloaded such a
 * caller is admitted unless its chance to start in time is below 1 % ({@link WouldTimeOutException}); overloaded, an
 * even chance of being served late is refused, so that the line holds callers who will be served. A caller whose
 * expected wait fits is never shed. It holds nothing.
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
                + "the " + millis(targetNanos) + " it may wait, while the workload refuses callers it cannot serve in "
                + "time; refused at once";
    }

    /** The expected wait for an execution permit. */
    public Duration expectedWait() {
        return Duration.ofNanos(expectedWaitNanos);
    }

    /** The longest expected wait the overloaded workload admitted this caller for: what it may wait. */
    public Duration targetQueueDelay() {
        return Duration.ofNanos(targetNanos);
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.LOAD_SHED;
    }
}
