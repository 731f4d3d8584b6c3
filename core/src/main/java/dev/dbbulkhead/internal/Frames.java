package dev.dbbulkhead.internal;

import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.Workload;
import java.lang.ref.Cleaner;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

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
 *
 * <p>A pooled worker may drop its thread locals while it lives (the common {@code ForkJoinPool}'s workers do between
 * tasks): the cleaner then finds the thread alive, and the lease, which its task can no longer close on that thread's
 * behalf through the barrier, is watched ({@link #ORPHANS}, every {@value #ORPHAN_CHECK_MILLIS} ms on the barrier's
 * scheduler) until the thread terminates, then reclaimed. A worker that keeps its thread locals keeps the leaked lease
 * as its current one, so its next call would be refused as re-entry: with leak detection on, a caller's lease older
 * than the threshold found there is taken for leaked and reclaimed on that thread, its own, instead.
 */
final class Frames {
    private static final Cleaner CLEANER = Cleaner.create(task -> Daemons.thread("db-bulkhead-reclaimer", task));

    static final long ORPHAN_CHECK_MILLIS = 1_000;
    /** Leases whose thread dropped its thread locals while alive, held until that thread terminates. */
    private static final Set<PermitLease> ORPHANS = ConcurrentHashMap.newKeySet();

    private static final AtomicBoolean ORPHAN_CHECKS = new AtomicBoolean();

    /** Leak detection's threshold in nanoseconds (0: off), and the clock leases' grant times are read on. */
    private final long leakThresholdNanos;

    private final LongSupplier clock;

    Frames(long leakThresholdNanos, LongSupplier clock) {
        this.leakThresholdNanos = leakThresholdNanos;
        this.clock = clock;
    }

    /** One thread's state in one barrier; used by that thread only, and by the reclaimer once it has terminated. */
    static final class Frame {
        /** The lease of the thread's current or last operation; set before it takes anything. */
        @Nullable
        PermitLease active;
        /** The lease that {@code transaction()} reuses once its previous operation fully ended. */
        private @Nullable PermitLease spare;

        /** A lease for {@code transaction()}: the spare, reset, or a new one that becomes the spare. */
        PermitLease transactionLease(PermitLease.Owner owner, @Nullable Deadline deadline, boolean timed) {
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
        PermitLease callerLease(PermitLease.Owner owner, @Nullable Deadline deadline, boolean timed) {
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
            if (lease == null || !lease.holding() || lease.handedOff()) {
                return;
            }
            // isAlive() is also the happens-before edge with everything the terminated thread wrote.
            if (!lease.thread.isAlive()) {
                lease.owner().reclaim(lease, true);
            } else {
                orphan(lease); // a pooled worker dropped its thread locals: reclaimed once the thread ends
            }
        }
    }

    private final ThreadLocal<Key> frames = ThreadLocal.withInitial(() -> {
        var key = new Key();
        CLEANER.register(key, new Reclaim(key.frame));
        return key;
    });

    private static void orphan(PermitLease lease) {
        ORPHANS.add(lease);
        if (ORPHAN_CHECKS.compareAndSet(false, true)) {
            var unused = Scheduler.every(ORPHAN_CHECK_MILLIS * 1_000_000, Frames::reclaimOrphansOfEndedThreads);
        }
    }

    /** On the scheduler: each orphan closed since is forgotten; each whose thread has ended is reclaimed. */
    private static void reclaimOrphansOfEndedThreads() {
        for (var it = ORPHANS.iterator(); it.hasNext(); ) { // a concurrent set: removing while iterating is safe
            PermitLease lease = it.next();
            if (!lease.holding() || lease.handedOff()) {
                it.remove();
            } else if (!lease.thread.isAlive()) {
                it.remove();
                try {
                    lease.owner().reclaim(lease, true);
                } catch (RuntimeException | Error e) {
                    // The next orphan must still be looked at; the barrier's own log has the details of its reclaim.
                }
            }
        }
    }

    /** Whether {@code lease} waits, orphaned, for its thread to end. For tests. */
    static boolean orphaned(PermitLease lease) {
        return ORPHANS.contains(lease);
    }

    /**
     * Whether {@code current}, held on this thread when it enters the barrier again, is a leaked caller's lease rather
     * than re-entry: leak detection is on and it has been held longer than its threshold. Then it is reclaimed here,
     * on its own thread (no race with its close), and the call goes on.
     */
    private boolean reclaimedAsLeaked(PermitLease current) {
        if (leakThresholdNanos <= 0
                || !current.forCaller()
                || clock.getAsLong() - current.grantedAt() <= leakThresholdNanos) {
            return false;
        }
        current.owner().reclaim(current, false);
        return true;
    }

    /** This thread's frame, after checking that it holds no lease of this barrier. */
    Frame enter(Workload target) {
        Frame frame = frames.get().frame;
        PermitLease current = frame.active;
        if (current != null
                && current.holding()
                && !current.handedOff()
                && !current.settleCutShort()
                && !reclaimedAsLeaked(current)) {
            throw new IllegalStateException("db-bulkhead '" + target.bulkheadName() + "' re-entered on a thread "
                    + "that already holds one of its permits (workload '"
                    + current.workload().name() + "' -> '"
                    + target.name() + "'): the barrier is not reentrant, and waiting here for a permit "
                    + "or a connection that this thread already holds can deadlock. Do all the work in one "
                    + "transaction, or make the second call after the first has returned (or its lease was closed). "
                    + "If this is a pooled thread, a lease an earlier task acquired and never closed fails every later "
                    + "task here: close leases with try-with-resources, and set leakDetectionThreshold to have such a "
                    + "lease reclaimed on the thread's next call once it is older than the threshold.");
        }
        return frame;
    }
}
