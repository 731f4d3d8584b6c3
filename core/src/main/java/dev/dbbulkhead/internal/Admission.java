package dev.dbbulkhead.internal;

import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.DeadlineExceededException.Stage;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.Priority;
import dev.dbbulkhead.RejectionReason;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One workload's admission: its permits, its hold-time estimates, its adaptive limit, and the lifecycle of its leases
 * (admit, hand out, release, reclaim). Every rejection is made here, from a live {@link Snapshot}, by the barrier's
 * {@link Rejections}.
 *
 * <p>An operation first takes an admission slot without waiting (none free: admission full), then waits on the
 * execution permits, in arrival order, for at most its queue wait or what is left of its deadline, giving back only
 * the slot when that ends without a permit. With both it holds a {@link PermitLease} until the lease is released:
 * after the transaction's connection is closed, on its own thread, whatever happened. What may be interrupted by an
 * {@link Error} where, and how each case is repaired: the failure model in {@code package-info}.
 *
 * <p>Thread-safe. An operation that does not wait costs one CAS to enter and one to leave and takes no lock.
 */
final class Admission implements PermitLease.Owner {
    /** What a workload's admission shares with the barrier's other workloads. */
    record Shared(String bulkhead, Frames frames, Telemetry telemetry, Rejections rejections, long leakThresholdNanos,
            boolean arbitrated) {}

    /** How an admission ended: a lease holding both permits, or a refusal that nothing is held for. */
    private sealed interface Result {}

    private record Granted(PermitLease lease) implements Result {}

    private record Rejected(BulkheadRejectedException rejection) implements Result {}

    private record Interrupted(InterruptedException interrupt) implements Result {}

    private final Workload workload;
    private final String bulkhead;
    private final Permits permits;
    /** How the permits come back; null when the workload neither predicts nor adapts. */
    private final Drain drain;
    /** The predicting door; null when the workload does not predict (the article's queue). */
    private final Door door;
    /** The fraction of predicted refusals admitted anyway, to measure false refusals; 0: none. */
    private final double audit;
    /** The adaptive limit; null when the workload's limit is B, fixed. */
    private final AdaptiveLimit adaptive;
    private final Frames frames;
    private final Telemetry telemetry;
    private final Rejections rejections;
    /** This workload's place under the barrier's arbiter; null when the barrier has no elastic workload. */
    private final Arbiter.Member member;
    /** Leak detection for callers' leases; null when off. */
    private final Leaks leaks;
    private final AtomicLong leasesReclaimed = new AtomicLong();

    Admission(Workload workload, WorkloadConfig config, Shared shared) {
        this.workload = workload;
        this.bulkhead = shared.bulkhead();
        this.permits = new Permits(config.concurrent(), config.extraSlots());
        this.member = shared.arbitrated() ? new Arbiter.Member(permits, config.priority() == Priority.ELASTIC) : null;
        this.audit = config.predictionAudit();
        this.frames = shared.frames();
        this.telemetry = shared.telemetry();
        this.rejections = shared.rejections();
        this.leaks = shared.leakThresholdNanos() > 0 ? new Leaks(shared.leakThresholdNanos(), telemetry) : null;
        this.adaptive = !config.adaptive() ? null : new AdaptiveLimit(permits, this::applyLimit,
                config.adaptiveLimitMin(),
                config.concurrent(), config.adaptiveLatencyTarget().map(Nanos::of).orElse(0L), telemetry.now(),
                ThreadLocalRandom.current().nextLong(), (from, to, cause, latency) -> telemetry.limitChanged(workload,
                        from, to, cause, latency));
        this.drain = config.predictiveRejection() || adaptive != null ? new Drain() : null;
        this.door = config.predictiveRejection() ? new Door(drain, permits, config.queue()) : null;
        if (adaptive != null) {
            Ticker.start(this);
        }
        if (member != null) {
            member.onCap(() -> applyLimit(adaptive == null ? permits.concurrent() : adaptive.level()));
        }
    }

    /**
     * Sets the limit in force: {@code level} (the adaptive limit's, or B), at most what the barrier's arbiter allows.
     * Called on the barrier's scheduler thread (and once while the barrier is built), one call at a time.
     */
    private void applyLimit(int level) {
        int limit = member == null ? level : Math.min(level, member.cap);
        if (limit != permits.limit()) {
            permits.limit(limit);
        }
    }

    /** This workload's place under the barrier's arbiter, or null. */
    Arbiter.Member member() {
        return member;
    }

    /**
     * The adaptive limit's clock: a tick every {@link AdaptiveLimit#tickNanos()} on the barrier's scheduler, for as
     * long as the workload is reachable (the task holds it weakly and cancels itself once it is gone).
     */
    private static final class Ticker implements Runnable {
        private final WeakReference<Admission> admission;
        private volatile ScheduledFuture<?> task;

        private Ticker(Admission admission) {
            this.admission = new WeakReference<>(admission);
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
            a.adaptive.tick(a.telemetry.now()); // a failure is logged once by the scheduler, and the clock goes on
        }

        @Override
        public String toString() {
            return "the adaptive limit's clock";
        }
    }

    /**
     * Both permits, or a rejection. The lease is allocated before anything is taken; anything unexpected thrown once
     * something is held (a stack overflow while waiting or settling, an error from a listener) gives back exactly
     * what the lease holds, from this frame, the shallowest one.
     *
     * @param queueWait the longest wait for an execution permit, or null for the deadline's
     * @param forCaller a lease for {@code acquire()}, rather than for a transaction the barrier runs
     */
    PermitLease admit(Duration queueWait, Deadline deadline, boolean forCaller) throws InterruptedException {
        Frames.Frame frame = frames.enter(workload);
        boolean timed = telemetry.timed();
        PermitLease lease = forCaller ? frame.callerLease(this, deadline, timed)
                : frame.transactionLease(this, deadline, timed);
        Result result;
        try {
            if (!measured(lease) && permits.enter(lease, false) == Permits.Entry.ACQUIRED) {
                return lease; // nothing to measure or report: the common case, one CAS
            }
            result = admitMeasured(lease, queueWait);
        } catch (Throwable unexpected) {
            // Field writes first: if abandon() overflows too, the next locked operation finds and settles the lease.
            lease.abandoned = true;
            permits.leaving = true;
            permits.abandon(lease);
            throw unexpected;
        }
        // A refusal comes back as a value, thrown only here: once, and not through the handler above.
        return switch (result) {
            case Granted granted -> granted.lease();
            case Rejected rejected -> throw rejected.rejection();
            case Interrupted interrupted -> throw interrupted.interrupt();
        };
    }

    /** Whether admitting {@code lease} reads the clock: to report, to leak-watch, to bound a wait, to estimate. */
    private boolean measured(PermitLease lease) {
        return lease.timed() || lease.forCaller() || lease.deadlineOrNull() != null || drain != null
                || member != null;
    }

    /** The steps of an admission that measures: its budget, the prediction, the permits, and the wait for one. */
    private Result admitMeasured(PermitLease lease, Duration queueWait) {
        long start = telemetry.now();
        lease.granted(0, start); // the grant time if no wait follows; nothing is held yet, so a call is safe
        long overdue = lease.budget(queueWait, start);
        if (overdue >= 0) {
            return refused(RejectionReason.DEADLINE, 0, rejections.deadlineExceeded(snapshot(0),
                    Stage.BEFORE_ADMISSION, overdue, null));
        }
        if (adaptive != null && lease.deadlineBinds()) {
            adaptive.budget(lease.allowedWaitNanos());
        }
        Result refusal = door == null ? null : atTheDoor(lease, start);
        return refusal != null ? refusal : take(lease, start);
    }

    /**
     * The door's verdict on a caller that may find no permit free: {@code null} to go on, with the wait it may have
     * set on the lease, or the refusal.
     */
    private Result atTheDoor(PermitLease lease, long now) {
        int limit = predictionLimit();
        long expected = door.expectedWaitNanos(limit, now);
        if (expected == 0) {
            return null; // a permit is free
        }
        lease.allow(door.waitNanos(lease.allowedWaitNanos(), lease.deadlineBinds()));
        if (expected > lease.allowedWaitNanos() && door.unlikelyToStart(limit, lease.allowedWaitNanos(), now)) {
            if (auditedInstead(lease)) {
                return null;
            }
            door.refused(now);
            return refused(RejectionReason.WOULD_TIME_OUT, 0, rejections.wouldTimeOut(snapshot(
                    lease.allowedWaitNanos()), expected, 0));
        }
        long target = door.sheddingTargetNanos(limit, now);
        if (target > 0 && expected > target) {
            door.refused(now);
            return refused(RejectionReason.LOAD_SHED, 0, rejections.loadShed(snapshot(lease.allowedWaitNanos()),
                    expected, target));
        }
        return null;
    }

    /** Whether this predicted refusal is one of the sample admitted anyway to audit the prediction. */
    private boolean auditedInstead(PermitLease lease) {
        lease.audited = audit > 0 && ThreadLocalRandom.current().nextDouble() < audit;
        return lease.audited;
    }

    /** An admission slot and an execution permit, or a place in the queue and the wait for one. */
    private Result take(PermitLease lease, long start) {
        Permits.Entry entry;
        try {
            entry = permits.enter(lease, lease.allowedWaitNanos() > 0);
            if (entry == Permits.Entry.MUST_WAIT) {
                entry = permits.queue(lease); // the slot and a place in the queue, or a permit freed meanwhile
            }
        } catch (InterruptedException interrupted) { // already interrupted: nothing was taken
            return interrupted(interrupted, 0);
        }
        if (entry == Permits.Entry.FULL) {
            return refused(RejectionReason.ADMISSION_FULL, 0, rejections.admissionFull(snapshot(
                    lease.allowedWaitNanos())));
        }
        if (lease.timed()) {
            telemetry.admitted(workload);
        }
        return switch (entry) {
            case BUSY -> timedOut(lease, 0); // no wait allowed and no permit free: nothing is held
            case MUST_WAIT -> await(lease, start);
            default -> {
                if (lease.audited) {
                    telemetry.predictionAudited(workload, true, 0); // a permit was free by the time it entered
                }
                yield granted(lease);
            }
        };
    }

    /** Waits in the queue for at most what the lease allows. */
    private Result await(PermitLease lease, long start) {
        Permits.Entry entry;
        try {
            entry = permits.await(lease, lease.allowedWaitNanos());
        } catch (InterruptedException interrupted) { // the slot was given back
            return interrupted(interrupted, telemetry.now() - start);
        }
        long now = telemetry.now();
        long waited = now - start;
        if (lease.audited) { // a grant it woke to only after its allowed wait was not a start in time
            telemetry.predictionAudited(workload, entry == Permits.Entry.ACQUIRED
                    && waited <= lease.allowedWaitNanos(), waited);
        }
        if (entry != Permits.Entry.ACQUIRED) {
            return timedOut(lease, waited);
        }
        lease.granted(waited, now);
        return granted(lease);
    }

    /** Both permits are held: what the estimates, the listeners and leak detection learn of it. */
    private Result granted(PermitLease lease) {
        if (drain != null) {
            drain.granted(lease.grantedAt());
        }
        if (lease.timed()) {
            telemetry.permitAcquired(workload, lease.permitWaitNanos());
        }
        if (lease.forCaller() && leaks != null) {
            lease.watch = leaks.watch(workload);
        }
        return new Granted(lease);
    }

    private Result timedOut(PermitLease lease, long waited) {
        if (door != null) {
            door.refused(telemetry.now());
        }
        if (lease.leavesEarly()) { // the door kept back the time its work needs: it could no longer finish in time
            return refused(RejectionReason.WOULD_TIME_OUT, waited, rejections.wouldTimeOut(snapshot(
                    lease.allowedWaitNanos()), 0, waited));
        }
        if (lease.deadlineBinds()) {
            return refused(RejectionReason.DEADLINE, waited, rejections.deadlineExceeded(snapshot(
                    lease.allowedWaitNanos()), Stage.PERMIT_WAIT, Nanos.overdue(
                    lease.deadlineOrNull().remainingNanos(telemetry.now())), null));
        }
        return refused(RejectionReason.QUEUE_TIMEOUT, waited, rejections.queueTimeout(snapshot(
                lease.allowedWaitNanos())));
    }

    private Result refused(RejectionReason reason, long waited, BulkheadRejectedException rejection) {
        telemetry.rejected(workload, reason, waited);
        return new Rejected(rejection);
    }

    private Result interrupted(InterruptedException interrupt, long waited) {
        telemetry.rejected(workload, RejectionReason.INTERRUPTED, waited);
        return new Interrupted(interrupt);
    }

    /**
     * The public rejection for a deadline that passed once {@code lease} held its permits (in the pool, a statement
     * or the wait for an answer), after the lease was released.
     */
    BulkheadRejectedException deadlineExceeded(PermitLease lease, DeadlinePassed passed) {
        Deadline deadline = lease.deadlineOrNull();
        long remainingAtStart = deadline == null ? Long.MAX_VALUE : Math.max(0, deadline.remainingNanos(
                lease.grantedAt() - lease.permitWaitNanos()));
        var exceeded = rejections.deadlineExceeded(snapshot(remainingAtStart), passed.stage(), passed.overdueNanos(),
                passed.driverException());
        for (Throwable suppressed : passed.getSuppressed()) {
            exceeded.addSuppressed(suppressed);
        }
        return exceeded;
    }

    private Snapshot snapshot(long allowedWaitNanos) {
        return Snapshot.of(bulkhead, workload.name(), permits, allowedWaitNanos);
    }

    /**
     * Gives a lease's permits back (its {@code release()} marked it closing first): a caller's lease reports
     * {@link Outcome#RELEASED} (a transaction's runner has reported its outcome already), then the permits go back,
     * then, with nothing held any more, the hold time feeds the estimates and may move the adaptive limit.
     */
    @Override
    public void release(PermitLease lease) {
        if (drain == null && member == null && lease.watch == null && !(lease.forCaller() && lease.timed())) {
            permits.exit(lease); // nothing to measure or report
            return;
        }
        releaseMeasured(lease);
    }

    private void releaseMeasured(PermitLease lease) {
        boolean report = lease.forCaller() && lease.timed();
        long now = report || drain != null || member != null || lease.watch != null ? telemetry.now() : 0;
        long held = now - lease.grantedAt();
        if (report) {
            telemetry.finished(workload, Outcome.RELEASED, lease.permitWaitNanos(), 0, held, 0);
        }
        permits.exit(lease);
        boolean suspected = lease.watch != null && lease.watch.closed(held);
        if (member != null && !suspected) {
            member.held(held);
        }
        if (drain != null && !suspected) {
            drain.record(held, now);
            if (adaptive != null) {
                Deadline deadline = lease.deadlineOrNull();
                adaptive.sample(held, lease.permitWaitNanos() + held, deadline == null
                        || deadline.remainingNanos(now) >= 0, lease.overloaded());
            }
        }
    }

    @Override
    public void abandon(PermitLease lease) {
        permits.abandon(lease);
    }

    /**
     * Takes back the permits of a lease never released (by the reclaimer of {@link Frames} once its thread ended, or on
     * its own thread when leak detection finds it leaked there): counted, reported, and kept out of the estimates.
     */
    @Override
    public void reclaim(PermitLease lease, boolean threadEnded) {
        long held = telemetry.now() - lease.grantedAt();
        boolean wasWaiting = lease.state == Permits.Node.WAITING;
        permits.abandon(lease);
        if (lease.watch != null) {
            lease.watch.closed(held);
        }
        leasesReclaimed.incrementAndGet(); // the reclaimer, the scheduler or the lease's own thread
        telemetry.reclaimed(workload, wasWaiting ? 0 : held, threadEnded);
    }

    @Override
    public void overloaded(Throwable signal) {
        if (Overload.poolTimeout(signal)) {
            telemetry.poolTimeout(workload);
        }
        telemetry.overloadSignal(workload, signal);
    }

    @Override
    public Workload workload() {
        return workload;
    }

    Permits permits() {
        return permits;
    }

    /** The recent mean hold time in nanoseconds; 0 without estimates or before the first operation. */
    long recentHoldNanos() {
        return drain == null ? 0 : drain.meanNanos();
    }

    private int predictionLimit() {
        return adaptive == null ? permits.limit() : adaptive.predictionLimit();
    }

    /** What predictive rejection expects a caller arriving now to wait; 0 without it. */
    long expectedWaitNanos() {
        return door == null ? 0 : door.expectedWaitNanos(predictionLimit(), telemetry.now());
    }

    /** Leases and queued callers whose thread terminated or left without giving their permits back, reclaimed. */
    long reclaimed() {
        return leasesReclaimed.get() + permits.reclaimed();
    }
}
