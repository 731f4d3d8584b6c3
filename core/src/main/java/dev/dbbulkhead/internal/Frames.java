package dev.dbbulkhead.internal;

import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.Workload;

/**
 * Per thread, the last lease this thread took in one barrier: the barrier is not reentrant, and a second acquire on a
 * thread whose lease still holds permits (it runs work, or holds a lease) fails at once instead of deadlocking. One
 * thread-local lookup per operation; a lease becomes the thread's current one when it is prepared, before it takes
 * anything, and stops counting once it holds nothing. A lease whose {@code close()} was cut short by a stack overflow
 * is released here, by the thread's next call, rather than mistaken for re-entry.
 */
public final class Frames {
    /** One thread's state in one barrier; used by that thread only. */
    public static final class Frame {
        PermitLease active;
        /** The lease that {@code transaction()} reuses once its previous operation fully ended. */
        PermitLease spare;

        /** A lease for {@code transaction()}: the spare, reset, or a new one that becomes the spare. */
        public PermitLease transactionLease(Workload workload, Permits permits, HoldTimes holds, Telemetry telemetry,
                Deadline deadline, boolean timed) {
            PermitLease lease = spare;
            if (lease == null || !lease.reusable()) {
                lease = new PermitLease(workload, permits, holds, telemetry, this, deadline, timed);
                spare = lease;
                return lease;
            }
            return lease.reset(workload, permits, holds, telemetry, deadline, timed);
        }
    }

    private final ThreadLocal<Frame> frames = ThreadLocal.withInitial(Frame::new);

    /** This thread's frame, after checking that it holds no lease of this barrier. */
    public Frame enter(Workload target) {
        Frame frame = frames.get();
        PermitLease current = frame.active;
        if (current != null && current.holding() && !current.finishClose()) {
            throw new IllegalStateException("db-bulkhead '" + target.bulkheadName() + "' re-entered on a thread "
                    + "that already holds one of its permits (workload '" + current.workload().name() + "' -> '"
                    + target.name() + "'): the barrier is not reentrant, and waiting here for a permit or a "
                    + "connection that this thread already holds can deadlock. Do all the work in one transaction, "
                    + "or make the second call after the first has returned (or its lease was closed).");
        }
        return frame;
    }
}
