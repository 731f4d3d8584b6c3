package dev.dbbulkhead.internal;

import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.DeadlineExceededException.Stage;
import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.Priority;
import dev.dbbulkhead.RejectionReason;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * One workload's admission: its permits, the lifecycle of its leases (admit, hand out, release, reclaim), and every
 * refusal, made here from a live {@link Snapshot} by the barrier's {@link Rejections}. What the workload predicts,
 * learns and is allowed is asked of its {@link Controls}, chosen once; the article's workload has none, and its fast
 * path asks nothing.
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
    record Shared(
            String bulkhead, Frames frames, Telemetry telemetry, Rejections rejections, Leaks leaks, int sharedLimit) {
        /** Whether the barrier shares a limit between its workloads (priorities or borrowing). */
        boolean arbitrated() {
            return sharedLimit > 0;
        }
    }

    /** How an admission ended: a lease holding both permits, or a refusal that nothing is held for. */
    private sealed interface Result {}

    private record Granted(PermitLease lease) implements Result {}

    private record Rejected(BulkheadRejectedException rejection) implements Result {}

    private record Interrupted(InterruptedException interrupt) implements Result {}

    private final Workload workload;
    private final Permits permits;
    private final Controls controls;
    /** {@code controls.active()}, read once: the fast paths test a final field, not a call. */
    private final boolean controlled;

    private final Frames frames;
    private final Telemetry telemetry;
    private final Rejections rejections;
    private final Leaks leaks;
    private final AtomicLong leasesReclaimed = new AtomicLong();

    Admission(Workload workload, WorkloadConfig config, Shared shared) {
        this.workload = workload;
        this.permits = new Permits(
                config.concurrent(),
                config.extraSlots(),
                config.borrowing() && config.priority() == Priority.REGULAR && shared.arbitrated()
                        ? (int) Math.min(shared.sharedLimit(), Integer.MAX_VALUE - (long) config.extraSlots())
                        : config.concurrent());
        this.controls = ConfiguredControls.of(workload, config, permits, shared.telemetry(), shared.arbitrated());
        this.controlled = controls.active();
        this.frames = shared.frames();
        this.telemetry = shared.telemetry();
        this.rejections = shared.rejections();
        this.leaks = shared.leaks();
    }

    /** What this workload predicts, learns and is allowed. */
    Controls controls() {
        return controls;
    }

    /**
     * Both permits, or a rejection. The lease is allocated before anything is taken; anything unexpected thrown once
     * something is held (a stack overflow while waiting or settling, an error from a listener) gives back exactly
     * what the lease holds, from this frame, the shallowest one.
     *
     * @param queueWait the longest wait for an execution permit, or null for the deadline's
     * @param forCaller a lease for {@code acquire()}, rather than for a transaction the barrier runs
     * @param kind the operation's kind: the name its caller gave, or its {@code SqlWork} (whose class is the kind: read
     *     only by a workload that learns kinds), or null: none
     */
    PermitLease admit(
            @Nullable Duration queueWait, @Nullable Deadline deadline, boolean forCaller, @Nullable Object kind)
            throws InterruptedException {
        Frames.Frame frame = frames.enter(workload);
        boolean timed = telemetry.timed();
        PermitLease lease =
                forCaller ? frame.callerLease(this, deadline, timed) : frame.transactionLease(this, deadline, timed);
        Result result;
        try {
            if (!(timed || forCaller || deadline != null || controlled)
                    && permits.enter(lease, false) == Permits.Entry.ACQUIRED) {
                return lease; // nothing to measure or report: the common case, one CAS
            }
            result = admitMeasured(lease, queueWait, deadline, kind);
        } catch (Throwable unexpected) {
            // The one write on the lease from here, and before any call: a call can fail (a stack overflow), and a
            // lease marked abandoned is settled by whoever finds it (failure model, rule 4).
            lease.abandoned = true;
            permits.leave(lease);
            abandon(lease);
            throw unexpected;
        }
        if (result instanceof Granted granted) {
            return granted.lease();
        }
        leftKind(lease, -1); // nothing is held: the caller leaves its kind too
        // A refusal comes back as a value, thrown only here: once, and not through the handler above.
        if (result instanceof Interrupted interrupted) {
            throw interrupted.interrupt();
        }
        throw ((Rejected) result).rejection();
    }

    /**
     * Refined by its first statement's shape, an operation counts as that shape's kind from now on; refused (a
     * {@code KindCappedException}, thrown before the statement is sent, its permits given back with the transaction)
     * when that kind is at its cap while the workload is contended.
     */
    @Override
    public void firstStatement(PermitLease lease, String sql, boolean mysql) {
        Kinds.Kind site = lease.kind;
        if (site == null) {
            return;
        }
        Kinds.Kind shape = controls.refine(site, sql, mysql);
        if (shape == site) {
            return;
        }
        Kinds.Decision entry = controls.move(site, lease.kindCounted, shape);
        if (entry == Kinds.Decision.CAPPED) {
            lease.kind = null; // refused: counted so by its new kind, it leaves both
            lease.kindCounted = false;
            BulkheadRejectedException refused = rejections.kindCapped(snapshot(0, shape), shape.cap());
            telemetry.rejected(workload, RejectionReason.KIND_CAPPED, 0, shape.name);
            throw refused;
        }
        lease.kind = shape;
        lease.kindCounted = entry == Kinds.Decision.COUNTED;
    }

    /** The lease's operation leaves the kind it was admitted as, once, having held its permits {@code heldNanos}. */
    private void leftKind(PermitLease lease, long heldNanos) {
        Kinds.Kind kind = lease.kind;
        if (kind != null) {
            lease.kind = null;
            controls.left(kind, lease.kindCounted, heldNanos);
        }
    }

    /**
     * What a caller may wait for an execution permit from {@code now}: its queue wait ({@code null}: unbounded), or
     * what is left of its deadline when that is shorter (then a wait of 0 or less: the deadline has passed).
     */
    private static Verdict.Admit allowing(@Nullable Duration queueWait, @Nullable Deadline deadline, long now) {
        long allowed = queueWait == null ? Long.MAX_VALUE : Nanos.of(queueWait);
        if (deadline != null) {
            long remaining = deadline.remainingNanos(now);
            if (remaining <= allowed) {
                return Verdict.Admit.allowing(remaining, true);
            }
        }
        return Verdict.Admit.allowing(allowed, false);
    }

    /** The steps of an admission that measures: its budget, the controls' verdict, the permits, the wait for one. */
    private Result admitMeasured(
            PermitLease lease, @Nullable Duration queueWait, @Nullable Deadline deadline, @Nullable Object kindOf) {
        long start = telemetry.now();
        Verdict.Admit wait = allowing(queueWait, deadline, start);
        Kinds.Kind kind = kindOf == null ? null : controls.kind(kindOf instanceof String ? kindOf : kindOf.getClass());
        if (wait.deadlineBinds() && wait.waitNanos() <= 0) {
            return refused(
                    RejectionReason.DEADLINE,
                    0,
                    rejections.deadlineExceeded(
                            snapshot(0, kind), Stage.BEFORE_ADMISSION, Nanos.overdue(wait.waitNanos()), null));
        }
        return switch (controls.admit(wait, kind, start)) {
            case Verdict.Admit admitted -> {
                lease.kindCounted = admitted.kindCounted();
                lease.kind = kind; // inside its kind from here: leaves it once, however the lease ends
                yield take(lease, admitted, start);
            }
            case Verdict.Capped capped ->
                refused(
                        RejectionReason.KIND_CAPPED,
                        0,
                        rejections.kindCapped(snapshot(capped.allowedNanos(), kind), capped.cap()));
            case Verdict.WouldTimeOut refusal ->
                refused(
                        RejectionReason.WOULD_TIME_OUT,
                        0,
                        rejections.wouldTimeOut(snapshot(refusal.allowedNanos(), kind), refusal.expectedNanos(), 0));
            case Verdict.Shed shed ->
                refused(
                        RejectionReason.LOAD_SHED,
                        0,
                        rejections.loadShed(
                                snapshot(shed.allowedNanos(), kind), shed.expectedNanos(), shed.allowedNanos()));
        };
    }

    /** An admission slot and an execution permit, or a place in the queue and the wait for one. */
    private Result take(PermitLease lease, Verdict.Admit wait, long start) {
        Permits.Entry entry;
        try {
            entry = permits.enter(lease, wait.waitNanos() > 0);
            if (entry == Permits.Entry.MUST_WAIT) {
                entry = permits.queue(lease); // the slot and a place in the queue, or a permit freed meanwhile
            }
        } catch (InterruptedException interrupted) { // already interrupted: nothing was taken
            return interrupted(interrupted, 0);
        }
        if (entry == Permits.Entry.FULL) {
            return refused(
                    RejectionReason.ADMISSION_FULL,
                    0,
                    rejections.admissionFull(snapshot(wait.waitNanos(), lease.kind)));
        }
        if (lease.timed()) {
            telemetry.admitted(workload);
        }
        return switch (entry) {
            case BUSY -> timedOut(lease, wait, 0); // no wait allowed and no permit free: nothing is held
            case MUST_WAIT -> await(lease, wait, start);
            default -> {
                if (wait.audited()) {
                    telemetry.predictionAudited(workload, true, 0); // a permit was free by the time it entered
                }
                yield granted(lease, 0, start);
            }
        };
    }

    /** Waits in the queue for at most what the verdict allows. */
    private Result await(PermitLease lease, Verdict.Admit wait, long start) {
        Permits.Entry entry;
        try {
            entry = permits.await(lease, wait.waitNanos());
        } catch (InterruptedException interrupted) { // the slot was given back
            return interrupted(interrupted, telemetry.now() - start);
        }
        long now = telemetry.now();
        long waited = now - start;
        if (wait.audited()) { // a grant it woke to only after its allowed wait was not a start in time
            telemetry.predictionAudited(
                    workload, entry == Permits.Entry.ACQUIRED && waited <= wait.waitNanos(), waited);
        }
        return entry == Permits.Entry.ACQUIRED ? granted(lease, waited, now) : timedOut(lease, wait, waited);
    }

    /** Both permits are held: what the lease, the controls, the listeners and leak detection learn of it. */
    private Result granted(PermitLease lease, long waited, long now) {
        lease.granted(waited, now);
        controls.granted(now);
        if (lease.timed()) {
            telemetry.permitAcquired(workload, waited);
        }
        if (lease.forCaller() && leaks.on()) {
            lease.watch = leaks.watch(workload);
        }
        return new Granted(lease);
    }

    private Result timedOut(PermitLease lease, Verdict.Admit wait, long waited) {
        Kinds.Kind kind = lease.kind;
        long now = telemetry.now();
        controls.refused(now);
        if (wait.leavesEarly()) { // the controls kept back the time its work needs: it could no longer finish in time
            return refused(
                    RejectionReason.WOULD_TIME_OUT,
                    waited,
                    rejections.wouldTimeOut(snapshot(wait.waitNanos(), kind), 0, waited));
        }
        if (wait.deadlineBinds()) {
            long overdue = Math.max(0, waited - wait.waitNanos()); // the wait began when the deadline left it that
            return refused(
                    RejectionReason.DEADLINE,
                    waited,
                    rejections.deadlineExceeded(snapshot(wait.waitNanos(), kind), Stage.PERMIT_WAIT, overdue, null));
        }
        return refused(
                RejectionReason.QUEUE_TIMEOUT, waited, rejections.queueTimeout(snapshot(wait.waitNanos(), kind)));
    }

    private Result refused(RejectionReason reason, long waited, BulkheadRejectedException rejection) {
        telemetry.rejected(workload, reason, waited, rejection.kind());
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
        long remainingAtStart = deadline == null
                ? Long.MAX_VALUE
                : Math.max(0, deadline.remainingNanos(lease.grantedAt() - lease.permitWaitNanos()));
        var exceeded = rejections.deadlineExceeded(
                snapshot(remainingAtStart, null), passed.stage(), passed.overdueNanos(), passed.driverException());
        for (Throwable suppressed : passed.getSuppressed()) {
            exceeded.addSuppressed(suppressed);
        }
        return exceeded;
    }

    private Snapshot snapshot(long allowedWaitNanos, Kinds.@Nullable Kind kind) {
        return Snapshot.of(
                workload.bulkheadName(), workload.name(), permits, allowedWaitNanos, kind == null ? null : kind.name);
    }

    /**
     * Gives a lease's permits back (its {@code release()} marked it closing first): a caller's lease reports
     * {@link Outcome#RELEASED} (a transaction's runner has reported its outcome already), then the permits go back,
     * then, with nothing held any more, the hold time feeds the estimates and may move the adaptive limit.
     */
    @Override
    public void release(PermitLease lease) {
        if (!controlled && lease.watch == null && !(lease.forCaller() && lease.timed())) {
            permits.exit(lease); // nothing to measure or report
            return;
        }
        releaseMeasured(lease);
    }

    private void releaseMeasured(PermitLease lease) {
        long now = telemetry.now();
        long held = now - lease.grantedAt();
        if (lease.forCaller() && lease.timed()) {
            telemetry.finished(workload, Outcome.RELEASED, lease.permitWaitNanos(), 0, held, 0, lease.kindName());
        }
        permits.exit(lease);
        Leaks.Watch watch = lease.watch;
        if (watch != null && watch.closed(held)) {
            leftKind(lease, -1);
            return; // a suspected leak's hold says nothing of the workload's
        }
        leftKind(lease, held);
        Deadline deadline = lease.deadlineOrNull();
        controls.released(
                held,
                lease.permitWaitNanos() + held,
                deadline == null || deadline.remainingNanos(now) >= 0,
                lease.overloaded(),
                now);
    }

    @Override
    public void abandon(PermitLease lease) {
        permits.abandon(lease);
        leftKind(lease, -1);
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
        leftKind(lease, -1);
        Leaks.Watch watch = lease.watch;
        if (watch != null) {
            watch.closed(held);
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

    /** What is known of each kind of operation; empty without kinds. */
    List<KindStats> kinds() {
        return controls.kinds();
    }

    /** The recent mean hold time in nanoseconds; 0 without estimates or before the first operation. */
    long recentHoldNanos() {
        return controls.recentHoldNanos();
    }

    /** What predictive rejection expects a caller arriving now to wait; 0 without it. */
    long expectedWaitNanos() {
        return controls.expectedWaitNanos(telemetry.now());
    }

    /** Leases and queued callers whose thread terminated or left without giving their permits back, reclaimed. */
    long reclaimed() {
        return leasesReclaimed.get() + permits.reclaimed();
    }
}
