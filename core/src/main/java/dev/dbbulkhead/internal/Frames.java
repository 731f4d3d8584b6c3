package dev.dbbulkhead.internal;

import dev.dbbulkhead.Workload;

/**
 * Per thread, the lease this thread holds in one barrier, if any: the barrier is not reentrant, and a second
 * acquire on a thread that holds a lease (or runs work) fails at once instead of deadlocking. One thread-local
 * lookup per operation; the lease clears the frame's field itself when it is closed.
 */
public final class Frames {
    /** One thread's state in one barrier; used by that thread only. */
    public static final class Frame {
        PermitLease active;

        /** Forgets {@code lease} if it is this thread's (after admission failed half-way). */
        public void clear(PermitLease lease) {
            if (active == lease) {
                active = null;
            }
        }
    }

    private final ThreadLocal<Frame> frames = ThreadLocal.withInitial(Frame::new);

    /** This thread's frame, after checking that it holds no lease of this barrier. */
    public Frame enter(Workload target) {
        Frame frame = frames.get();
        PermitLease current = frame.active;
        if (current != null) {
            throw new IllegalStateException("db-bulkhead '" + target.bulkheadName() + "' re-entered on a thread "
                    + "that already holds one of its permits (workload '" + current.workload().name() + "' -> '"
                    + target.name() + "'): the barrier is not reentrant, and waiting here for a permit or a "
                    + "connection that this thread already holds can deadlock. Do all the work in one transaction, "
                    + "or make the second call after the first has returned (or its lease was closed).");
        }
        return frame;
    }
}
