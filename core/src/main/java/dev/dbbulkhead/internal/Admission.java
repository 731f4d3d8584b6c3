package dev.dbbulkhead.internal;

import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DbBulkhead.SqlWork;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.DeadlineExceededException.Stage;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.RejectionReason;
import dev.dbbulkhead.TransactionOptions;
import dev.dbbulkhead.Workload;
import java.sql.SQLException;
import java.time.Duration;

/**
 * One workload's admission: its permits, its hold-time estimates, its adaptive limit, and the lifecycle of its leases
 * (admit, hand out, release, reclaim). {@link Workload} is its public face. Every rejection is made here, from a live
 * {@link Snapshot}, by the barrier's {@link Rejections}.
 *
 * <p>An operation first takes an admission slot without waiting (none free: admission full), then waits on the
 * execution permits, in arrival order, for at most its queue wait or what is left of its deadline, giving back only
 * the slot when that ends without a permit. With both it holds a {@link PermitLease} until the lease is released:
 * after the transaction's connection is closed, on its own thread, whatever happened. What may be interrupted by an
 * {@link Error} where, and how each case is repaired: the failure model in {@code package-info}.
 *
 * <p>Thread-safe. An operation that does not wait costs one CAS to enter and one to leave and takes no lock.
 */
public final class Admission {
    /**
     * A workload's admission options: predictive rejection (and the fraction of its refusals audited), the adaptive
     * limit's minimum (0: a fixed limit B) and its latency target (0: half of what the callers' deadlines allow).
     */
    public record Options(boolean predictive, double audit, int minLimit, long latencyTargetNanos) {}

    /** What a workload needs from its barrier: shared by all of its workloads. */
    public record Shared(String bulkhead, Frames frames, Telemetry telemetry, TransactionRunner runner,
            Rejections rejections, long leakThresholdNanos) {}

    private final Workload workload;
    private final String bulkhead;
    private final Permits permits;
    /** Recent hold times, for predictive rejection and the adaptive limit; null when the workload has neither. */
    private final HoldTimes holds;
    private final boolean predictive;
    /** The fraction of predicted refusals admitted anyway, to measure false refusals; 0: none. */
    private final double audit;
    /** The adaptive limit; null when the workload's limit is B, fixed. */
    private final AdaptiveLimit adaptive;
    private final Frames frames;
    private final Telemetry telemetry;
    private final TransactionRunner runner;
    private final Rejections rejections;
    /** Leak detection for callers' leases; null when off. */
    private final Leaks leaks;
    private volatile long leasesReclaimed;

    public Admission(Workload workload, int concurrent, int extraSlots, Options options, Shared shared) {
        this.workload = workload;
        this.bulkhead = shared.bulkhead();
        this.permits = new Permits(concurrent, extraSlots);
        this.predictive = options.predictive();
        this.audit = options.audit();
        this.frames = shared.frames();
        this.telemetry = shared.telemetry();
        this.runner = shared.runner();
        this.rejections = shared.rejections();
        this.leaks = shared.leakThresholdNanos() > 0 ? new Leaks(shared.leakThresholdNanos(), telemetry.log())
                : null;
        this.adaptive = options.minLimit() == 0 ? null : new AdaptiveLimit(permits, options.minLimit(), concurrent,
                options.latencyTargetNanos(), telemetry.now(), (from, to, cause, baseline, latency) ->
                        telemetry.limitChanged(workload, from, to, cause, baseline, latency));
        this.holds = predictive || adaptive != null ? new HoldTimes(adaptive) : null;
        if (adaptive != null) {
            Ticker.start(this);
        }
    }

    /**
     * The adaptive limit's clock: a tick every {@link AdaptiveLimit#tickNanos()} on the barrier's scheduler, for as
     * long as the workload is reachable (the task holds it weakly and cancels itself once it is gone).
     */
    private static final class Ticker implements Runnable {
        private final java.lang.ref.WeakReference<Admission> admission;
        private volatile java.util.concurrent.ScheduledFuture<?> task;

        private Ticker(Admission admission) {
            this.admission = new java.lang.ref.WeakReference<>(admission);
        }

        static void start(Admission admission) {
            var ticker = new Ticker(admission);
            ticker.task = Scheduler.every(AdaptiveLimit.tickNanos(), ticker);
        }

        @Override
        public void run() {
            Admission a = admission.get();
            if (a == null) {
                var t = task;
                if (t != null) {
                    t.cancel(false);
                }
                return;
            }
            try {
                a.adaptive.tick(a.telemetry.now());
            } catch (RuntimeException | Error e) {
                // A failing decision must not end the clock (the scheduler would drop the task): logged, next tick.
                a.telemetry.log().log(System.Logger.Level.ERROR, "db-bulkhead: the adaptive limit's tick failed", e);
            }
        }
    }

    /** Runs {@code work} in one transaction inside a lease; a deadline passed inside becomes the rejection. */
    public <T> T transaction(Duration queueWait, Deadline deadline, TransactionOptions options, SqlWork<T> work)
            throws SQLException, InterruptedException {
        PermitLease lease = admit(queueWait, deadline, false);
        try {
            try {
                return runner.run(lease, options, work);
            } finally {
                lease.release();
            }
        } catch (DeadlinePassed passed) {
            var exceeded = rejections.deadlineExceeded(snapshot(remainingAtStart(lease, deadline)), passed.stage(),
                    passed.overdueNanos(), passed.driverException());
            for (Throwable suppressed : passed.getSuppressed()) {
                exceeded.addSuppressed(suppressed);
            }
            throw exceeded;
        }
    }

    /** Admission without a transaction: a lease for a caller that runs its own. */
    public Lease acquire(Duration queueWait, Deadline deadline) throws InterruptedException {
        return admit(queueWait, deadline, true);
    }

    /**
     * Both permits, or a rejection. The lease is allocated before anything is taken; anything unexpected thrown once
     * something is held (a stack overflow while waiting or settling, an error from a listener) gives back exactly
     * what the lease holds, from this frame, the shallowest one.
     */
    private PermitLease admit(Duration queueWait, Deadline deadline, boolean forCaller) throws InterruptedException {
        Frames.Frame frame = frames.enter(this);
        boolean timed = telemetry.timed();
        PermitLease lease = forCaller ? frame.callerLease(this, deadline, timed)
                : frame.transactionLease(this, deadline, timed);
        Object admitted;
        try {
            if (!timed && !forCaller && deadline == null && holds == null
                    && permits.enter(lease, false) == Permits.Entry.ACQUIRED) {
                return lease; // nothing to measure or report: the common case, one CAS
            }
            admitted = admit(lease, queueWait, deadline, timed,
                    timed || forCaller || deadline != null || holds != null);
        } catch (InterruptedException settled) {
            throw settled; // already interrupted: nothing was taken
        } catch (Throwable unexpected) {
            // Field writes first: if abandon() overflows too, the next locked operation finds and settles the lease.
            lease.abandoned = true;
            permits.leaving = true;
            permits.abandon(lease);
            throw unexpected;
        }
        // A refusal comes back as a value, thrown only here: once, and not through the handler above.
        if (admitted instanceof PermitLease granted) {
            return granted;
        }
        if (admitted instanceof InterruptedException interrupted) {
            throw interrupted;
        }
        throw (BulkheadRejectedException) admitted;
    }

    /** The lease with both permits, or the refusal (a rejection, or the interrupt) that nothing is held for. */
    private Object admit(PermitLease lease, Duration queueWait, Deadline deadline, boolean timed, boolean clocked) {
        long start = clocked ? telemetry.now() : 0;
        long allowed = queueWait == null ? Long.MAX_VALUE : Nanos.of(queueWait);
        boolean deadlineBinds = false;
        if (deadline != null) {
            long remaining = deadline.remainingNanos(start);
            if (remaining <= 0) {
                return rejected(RejectionReason.DEADLINE, 0, rejections.deadlineExceeded(snapshot(0),
                        Stage.BEFORE_ADMISSION, -remaining, null));
            }
            if (remaining <= allowed) {
                allowed = remaining;
                deadlineBinds = true;
            }
        }
        lease.granted(0, start); // the grant time if no wait follows; nothing is held yet, so a call is safe
        if (adaptive != null && deadlineBinds) {
            adaptive.budget(allowed);
        }
        boolean audited = false;
        if (predictive) {
            long expected = holds.expectedWaitNanos(permits.waiting(), permits.available(), predictionLimit(), start);
            if (expected > allowed) {
                if (audit == 0 || java.util.concurrent.ThreadLocalRandom.current().nextDouble() >= audit) {
                    return rejected(RejectionReason.WOULD_TIME_OUT, 0,
                            rejections.wouldTimeOut(snapshot(allowed), expected));
                }
                audited = true; // admitted to see whether the refusal would have been right
            }
        }
        Permits.Entry entered;
        try {
            entered = permits.enter(lease, allowed > 0);
        } catch (InterruptedException interrupted) { // already interrupted: nothing was taken
            telemetry.rejected(workload, RejectionReason.INTERRUPTED, 0);
            return interrupted;
        }
        if (entered == Permits.Entry.MUST_WAIT) {
            entered = permits.queue(lease); // the slot and a place in the queue, or a permit freed meanwhile
        }
        if (entered == Permits.Entry.FULL) {
            return rejected(RejectionReason.ADMISSION_FULL, 0, rejections.admissionFull(snapshot(allowed)));
        }
        if (timed) {
            telemetry.admitted(workload);
        }
        if (entered == Permits.Entry.BUSY) { // no wait allowed and no permit free: nothing is held
            return timedOut(deadline, deadlineBinds, allowed, 0);
        }
        if (entered == Permits.Entry.MUST_WAIT) {
            try {
                entered = permits.await(lease, allowed);
            } catch (InterruptedException interrupted) { // the slot was given back
                telemetry.rejected(workload, RejectionReason.INTERRUPTED, clocked ? telemetry.now() - start : 0);
                return interrupted;
            }
            long now = clocked ? telemetry.now() : 0;
            if (audited) {
                telemetry.predictionAudited(workload, entered == Permits.Entry.ACQUIRED, now - start);
            }
            if (entered != Permits.Entry.ACQUIRED) {
                return timedOut(deadline, deadlineBinds, allowed, now - start);
            }
            lease.granted(now - start, now);
        } else if (audited && entered == Permits.Entry.ACQUIRED) {
            telemetry.predictionAudited(workload, true, 0); // a permit was free by the time it entered
        }
        if (holds != null) {
            holds.granted(lease.grantedAt());
        }
        if (timed) {
            telemetry.permitAcquired(workload, lease.permitWaitNanos());
        }
        if (lease.forCaller() && leaks != null) {
            lease.watch = leaks.watch(this);
        }
        return lease;
    }

    private BulkheadRejectedException timedOut(Deadline deadline, boolean deadlineBinds, long allowed,
            long waited) {
        if (deadlineBinds) {
            return rejected(RejectionReason.DEADLINE, waited, rejections.deadlineExceeded(snapshot(allowed),
                    Stage.PERMIT_WAIT, -deadline.remainingNanos(telemetry.now()), null));
        }
        return rejected(RejectionReason.QUEUE_TIMEOUT, waited, rejections.queueTimeout(snapshot(allowed)));
    }

    private BulkheadRejectedException rejected(RejectionReason reason, long waited,
            BulkheadRejectedException rejection) {
        telemetry.rejected(workload, reason, waited);
        return rejection;
    }

    private long remainingAtStart(PermitLease lease, Deadline deadline) {
        return deadline == null ? Long.MAX_VALUE : Math.max(0, deadline.remainingNanos(lease.grantedAt()
                - lease.permitWaitNanos()));
    }

    private Snapshot snapshot(long allowedWaitNanos) {
        return Snapshot.of(bulkhead, workload.name(), permits, allowedWaitNanos);
    }

    /**
     * Gives a lease's permits back (its {@code release()} marked it closing first): a caller's lease reports
     * {@link Outcome#RELEASED} (a transaction's runner has reported its outcome already), then the permits go back,
     * then, with nothing held any more, the hold time feeds the estimates and may move the adaptive limit.
     */
    void release(PermitLease lease) {
        if (holds == null && lease.watch == null && !(lease.forCaller() && lease.timed())) {
            permits.exit(lease); // nothing to measure or report
            return;
        }
        releaseMeasured(lease);
    }

    private void releaseMeasured(PermitLease lease) {
        boolean report = lease.forCaller() && lease.timed();
        long now = report || holds != null || lease.watch != null ? telemetry.now() : 0;
        long held = now - lease.grantedAt();
        if (report) {
            telemetry.finished(workload, Outcome.RELEASED, lease.permitWaitNanos(), 0, held, 0);
        }
        permits.exit(lease);
        boolean suspected = lease.watch != null && lease.watch.closed(held);
        if (holds != null && !suspected) {
            holds.record(held, lease.permitWaitNanos(), lease.overloaded());
        }
    }

    /**
     * Takes back the permits of a lease whose thread terminated without releasing them (called by the reclaimer of
     * {@link Frames}, on its own thread): counted, reported, and kept out of the estimates.
     */
    void reclaim(PermitLease lease) {
        long held = telemetry.now() - lease.grantedAt();
        boolean wasWaiting = lease.state == Permits.Node.WAITING;
        permits.abandon(lease);
        if (lease.watch != null) {
            lease.watch.closed(held);
        }
        leasesReclaimed++; // one reclaimer thread: no lost update
        telemetry.reclaimed(workload, wasWaiting ? 0 : held);
    }

    /** An admitted operation's transaction failed on the pool's timeout. */
    void poolTimeout() {
        telemetry.poolTimeout(workload);
    }

    void overloadSignal(Throwable signal) {
        telemetry.overloadSignal(workload, signal);
    }

    /** Called by leak detection when a caller's lease passed the threshold. */
    void leakSuspected(long heldNanos) {
        telemetry.leakSuspected(workload, heldNanos);
    }

    /** "workload 'w' of db-bulkhead 'db'", for log messages. */
    String workloadDescription() {
        return "workload '" + workload.name() + "' of db-bulkhead '" + bulkhead + "'";
    }

    public Workload workload() {
        return workload;
    }

    public String bulkheadName() {
        return bulkhead;
    }

    public Permits permits() {
        return permits;
    }

    public boolean predictive() {
        return predictive;
    }

    public boolean adaptive() {
        return adaptive != null;
    }

    /** The adaptive limit's baseline hold time in nanoseconds; 0 for a fixed workload or before its first window. */
    public long baselineNanos() {
        return adaptive == null ? 0 : adaptive.baselineNanos();
    }

    /** The recent mean hold time in nanoseconds; 0 without estimates or before the first operation. */
    public long recentHoldNanos() {
        return holds == null ? 0 : holds.averageNanos();
    }

    private int predictionLimit() {
        return adaptive == null ? permits.limit() : adaptive.predictionLimit();
    }

    /** What predictive rejection expects a caller arriving now to wait; 0 without it. */
    public long expectedWaitNanos() {
        return !predictive ? 0 : holds.expectedWaitNanos(permits.waiting(), permits.available(), predictionLimit(),
                telemetry.now());
    }

    /** Leases and queued callers whose thread terminated or left without giving their permits back, reclaimed. */
    public long reclaimed() {
        return leasesReclaimed + permits.reclaimed();
    }
}
