package dev.dbbulkhead.internal;

import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.Workload;
import java.lang.ref.Cleaner;

/**
 * Per thread and barrier, the lease this thread took last. The barrier is not reentrant: a second call on a thread
 * whose lease still holds permits (it runs work, or holds a lease) fails at once instead of deadlocking, unless that
 * lease was left half-settled by a stack overflow (then this call settles it first). One thread-local lookup per
 * operation.
 *
 * <p>When a thread terminates, its thread-local value is dropped; a {@link Cleaner} then looks at the last lease of
 * that thread, and a lease still holding permits (never closed, or cut short and never called again) is reclaimed:
 * its permits go back, counted and reported, by the lease's owner. The cleaner tracks a {@link Key} that only
 * the thread-local map holds; no lease refers back to it, so a lease the application still holds does not keep it
 * alive.
 */
final class Frames {
    private static final Cleaner CLEANER = Cleaner.create(task -> {
        Thread t = new Thread(task, "db-bulkhead-reclaimer");
        t.setDaemon(true);
        return t;
    });

    /** One thread's state in one barrier; used by that thread only, and by the reclaimer once it has terminated. */
    static final class Frame {
        /** The lease of the thread's current or last operation; set before it takes anything. */
        PermitLease active;
        /** The lease that {@code transaction()} reuses once its previous operation fully ended. */
        private PermitLease spare;

        /** A lease for {@code transaction()}: the spare, reset, or a new one that becomes the spare. */
        PermitLease transactionLease(PermitLease.Owner owner, Deadline deadline, boolean timed) {
            PermitLease lease = spare;
            if (lease == null || !lease.reusable()) {
                lease = new PermitLease(owner, deadline, timed, false);
                spare = lease;
            } else {
                lease.reset(owner, deadline, timed);
            }
            if (active != lease) { // the same spare, usually: no write, so no cache line to bounce
                active = lease;
            }
            return lease;
        }

        /** A new lease for a caller of {@code acquire()}. */
        PermitLease callerLease(PermitLease.Owner owner, Deadline deadline, boolean timed) {
            var lease = new PermitLease(owner, deadline, timed, true);
            active = lease;
            return lease;
        }
    }

    /** What the thread-local holds: the object whose unreachability means "the thread has terminated". */
    private static final class Key {
        final Frame frame = new Frame();
    }

    /** Runs on the cleaner's thread once a thread's frame is unreachable. Refers to the frame, not to the key. */
    private record Reclaim(Frame frame) implements Runnable {
        @Override
        public void run() {
            PermitLease lease = frame.active;
            // isAlive() is also the happens-before edge with everything the terminated thread wrote.
            if (lease != null && !lease.thread.isAlive() && lease.holding() && !lease.handedOff()) {
                lease.owner().reclaim(lease);
            }
        }
    }

    private final ThreadLocal<Key> frames = ThreadLocal.withInitial(() -> {
        var key = new Key();
        CLEANER.register(key, new Reclaim(key.frame));
        return key;
    });

    /** This thread's frame, after checking that it holds no lease of this barrier. */
    Frame enter(Workload target) {
        Frame frame = frames.get().frame;
        PermitLease current = frame.active;
        if (current != null && current.holding() && !current.handedOff() && !current.settleCutShort()) {
            throw new IllegalStateException("db-bulkhead '" + target.bulkheadName() + "' re-entered on a thread "
                    + "that already holds one of its permits (workload '" + current.workload().name() + "' -> '"
                    + target.name() + "'): the barrier is not reentrant, and waiting here for a permit "
                    + "or a connection that this thread already holds can deadlock. Do all the work in one "
                    + "transaction, or make the second call after the first has returned (or its lease was closed).");
        }
        return frame;
    }
}
