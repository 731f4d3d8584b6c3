package dev.dbbulkhead;

import dev.dbbulkhead.DbBulkhead.SqlWork;
import dev.dbbulkhead.internal.AdaptiveLimit;
import dev.dbbulkhead.internal.DeadlinePassed;
import dev.dbbulkhead.internal.Frames;
import dev.dbbulkhead.internal.HoldTimes;
import dev.dbbulkhead.internal.Nanos;
import dev.dbbulkhead.internal.PermitLease;
import dev.dbbulkhead.internal.Permits;
import dev.dbbulkhead.internal.Preconditions;
import dev.dbbulkhead.internal.Telemetry;
import dev.dbbulkhead.internal.TransactionRunner;
import java.sql.SQLException;
import java.time.Duration;

/**
 * One workload's budget inside a {@link DbBulkhead}: B execution permits ({@link #concurrent()}) and B + Q
 * admission slots ({@link #extraSlots()} = Q). Admission lives here: it hands out a {@link Lease}, and
 * {@code transaction()} runs one JDBC transaction inside one.
 *
 * <p>An operation first takes an admission slot without waiting (none free: {@link AdmissionFullException}),
 * then waits on the fair execution permits for at most its queue wait or its deadline (expired:
 * {@link QueueTimeoutException} or {@link DeadlineExceededException}; interrupted: {@link InterruptedException}),
 * releasing only the slot in those cases. With both, it holds a lease until it is closed: after the transaction's
 * connection is closed, on its own thread, whatever happened. A permit is released exactly once by the thread that
 * took it: a caller that gives up (e.g. {@code Future.cancel(true)}) releases nothing while its work still runs.
 *
 * <p>Thread-safe. An operation that does not wait costs one CAS to enter and one to leave and takes no lock; one
 * that waits queues without pinning its carrier if it is a virtual thread.
 */
public final class Workload {
    private final String bulkhead;
    private final String name;
    private final int concurrent;
    private final int extraSlots;
    private final Permits permits;
    /** Recent hold times, for predictive rejection and the adaptive limit; null when the workload has neither. */
    private final HoldTimes holds;
    private final boolean predictive;
    /** The adaptive limit; null when the workload's limit is B, fixed. */
    private final AdaptiveLimit adaptive;
    private final Frames frames;
    private final Telemetry telemetry;
    private final TransactionRunner runner;

    /** @param minLimit the adaptive limit's minimum, or 0 for a fixed limit B */
    Workload(String bulkhead, String name, int concurrent, int extraSlots, boolean predictive, int minLimit,
            Frames frames, Telemetry telemetry, TransactionRunner runner) {
        this.bulkhead = bulkhead;
        this.name = name;
        this.concurrent = concurrent;
        this.extraSlots = extraSlots;
        Preconditions.sum(concurrent, "concurrent", extraSlots, "extraSlots");
        this.permits = new Permits(concurrent, extraSlots);
        this.predictive = predictive;
        this.adaptive = minLimit == 0 ? null : new AdaptiveLimit(permits, minLimit, concurrent, telemetry.now(),
                (from, to, cause, baseline, latency) -> telemetry.limitChanged(this, from, to, cause, baseline,
                        latency));
        this.holds = predictive || adaptive != null ? new HoldTimes(adaptive) : null;
        this.frames = frames;
        this.telemetry = telemetry;
        this.runner = runner;
    }

    /**
     * Runs {@code work} in one JDBC transaction, waiting at most {@code queueWait} for an execution permit:
     * the article's contract. See {@link DbBulkhead#transaction(Duration, SqlWork)}.
     */
    public <T> T transaction(Duration queueWait, SqlWork<T> work) throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNegative(queueWait, "queueWait");
        return run(admit(queueWait, null, false), null, work);
    }

    /** Runs {@code work} in one transaction bounded by {@code deadline}. See {@link Deadline}. */
    public <T> T transaction(Deadline deadline, SqlWork<T> work) throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNull(deadline, "deadline");
        return run(admit(null, deadline, false), null, work);
    }

    /** Runs {@code work} in one transaction with {@code options} (wait or deadline, read-only, isolation). */
    public <T> T transaction(TransactionOptions options, SqlWork<T> work)
            throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNull(options, "options");
        return run(admit(options.queueWait(), options.deadline(), false), options, work);
    }

    /**
     * Admission without a transaction: waits at most {@code queueWait} for an execution permit and returns a
     * {@link Lease} holding both permits, for a caller that runs its own transaction. Same rejections, listener
     * calls and flight-recorder events as {@code transaction()}.
     *
     * @throws IllegalStateException when this thread already holds a lease of this barrier (or runs its work)
     */
    public Lease acquire(Duration queueWait) throws InterruptedException {
        Preconditions.notNegative(queueWait, "queueWait");
        return admit(queueWait, null, true);
    }

    /** Admission without a transaction, bounded by {@code deadline}; see {@link #acquire(Duration)}. */
    public Lease acquire(Deadline deadline) throws InterruptedException {
        Preconditions.notNull(deadline, "deadline");
        return admit(null, deadline, true);
    }

    /** Runs the transaction inside the lease, then closes it; a deadline passed inside becomes the rejection. */
    private <T> T run(PermitLease lease, TransactionOptions options, SqlWork<T> work) throws SQLException {
        try (lease) {
            return runner.run(lease, options, work);
        } catch (DeadlinePassed passed) {
            var exceeded = deadlineExceeded(passed.stage(), passed.overdueNanos(), passed.driverException());
            for (Throwable suppressed : passed.getSuppressed()) {
                exceeded.addSuppressed(suppressed);
            }
            throw exceeded;
        }
    }

    /**
     * Both permits, or a rejection. The lease is allocated before anything is taken; anything unexpected thrown
     * once something is held (a stack overflow while waiting or settling, an error from a listener) gives back
     * exactly what the lease holds, from this frame, the shallowest one.
     */
    private PermitLease admit(Duration queueWait, Deadline deadline, boolean measure) throws InterruptedException {
        Frames.Frame frame = frames.enter(this);
        boolean timed = telemetry.timed();
        // A lease handed to the caller is its own; the one inside transaction() is the thread's spare, reused.
        var lease = measure ? new PermitLease(this, permits, holds, telemetry, frame, deadline, timed)
                : frame.transactionLease(this, permits, holds, telemetry, deadline, timed);
        try {
            return admit(lease, queueWait, deadline, timed, timed || measure || deadline != null || holds != null);
        } catch (BulkheadRejectedException | InterruptedException settled) {
            throw settled; // nothing is held
        } catch (Throwable unexpected) {
            lease.failed = true; // a field write first: if abandon() overflows too, the next call settles it
            permits.abandon(lease);
            throw unexpected;
        }
    }

    private PermitLease admit(PermitLease lease, Duration queueWait, Deadline deadline, boolean timed,
            boolean clocked) throws InterruptedException {
        long start = clocked ? telemetry.now() : 0;
        long waitNanos = queueWait == null ? Long.MAX_VALUE : Nanos.of(queueWait);
        boolean deadlineBinds = false;
        if (deadline != null) {
            long remaining = deadline.remainingNanos(start);
            if (remaining <= 0) {
                telemetry.rejected(this, RejectionReason.DEADLINE, 0);
                throw deadlineExceeded(DeadlineExceededException.Stage.BEFORE_ADMISSION, -remaining, null);
            }
            if (remaining <= waitNanos) {
                waitNanos = remaining;
                deadlineBinds = true;
            }
        }
        if (holds != null) {
            lease.granted(0, start); // the grant time if no wait follows; nothing is held yet, so a call is safe
        }
        if (predictive) {
            int queued = permits.waiting();
            long expected = holds.expectedWaitNanos(queued, permits.available(), permits.limit());
            if (expected > waitNanos) {
                telemetry.rejected(this, RejectionReason.WOULD_TIME_OUT, 0);
                throw new WouldTimeOutException(bulkhead, name, concurrent, extraSlots, expected, waitNanos, queued,
                        telemetry.stackTraces());
            }
        }
        int entered;
        try {
            entered = permits.enter(lease, waitNanos > 0);
        } catch (InterruptedException interrupted) { // already interrupted: nothing was taken
            telemetry.rejected(this, RejectionReason.INTERRUPTED, 0);
            throw interrupted;
        }
        if (entered == Permits.ADMISSION_FULL) {
            telemetry.rejected(this, RejectionReason.ADMISSION_FULL, 0);
            throw new AdmissionFullException(bulkhead, name, concurrent, extraSlots, telemetry.stackTraces());
        }
        if (timed) {
            telemetry.admitted(this);
        }
        if (entered == Permits.TIMED_OUT) { // no wait allowed and no permit free: nothing is held
            throw timedOut(queueWait, deadline, deadlineBinds, 0);
        }
        if (entered == Permits.MUST_WAIT) {
            try {
                entered = permits.await(lease, waitNanos);
            } catch (InterruptedException interrupted) { // the slot was given back
                telemetry.rejected(this, RejectionReason.INTERRUPTED, clocked ? telemetry.now() - start : 0);
                throw interrupted;
            }
            if (entered != Permits.ACQUIRED) {
                throw timedOut(queueWait, deadline, deadlineBinds, clocked ? telemetry.now() - start : 0);
            }
            long now = clocked ? telemetry.now() : 0;
            lease.granted(now - start, now);
        } // else it did not wait: the lease says so already, and nothing needs writing while the permits are held
        if (timed) {
            telemetry.permitAcquired(this, lease.permitWaitNanos());
        }
        return lease;
    }

    private BulkheadRejectedException timedOut(Duration queueWait, Deadline deadline, boolean deadlineBinds,
            long waited) {
        if (deadlineBinds) {
            telemetry.rejected(this, RejectionReason.DEADLINE, waited);
            return deadlineExceeded(DeadlineExceededException.Stage.PERMIT_WAIT,
                    -deadline.remainingNanos(telemetry.now()), null);
        }
        telemetry.rejected(this, RejectionReason.QUEUE_TIMEOUT, waited);
        return new QueueTimeoutException(bulkhead, name, concurrent, extraSlots, queueWait, telemetry.stackTraces());
    }

    private DeadlineExceededException deadlineExceeded(DeadlineExceededException.Stage stage, long overdueNanos,
            SQLException cause) {
        return new DeadlineExceededException(bulkhead, name, concurrent, extraSlots, stage, overdueNanos, cause,
                telemetry.stackTraces());
    }

    /** The workload's name. */
    public String name() {
        return name;
    }

    /** The name of the barrier this workload belongs to. */
    public String bulkheadName() {
        return bulkhead;
    }

    /** B: how many operations of this workload may hold a connection at once. */
    public int concurrent() {
        return concurrent;
    }

    /**
     * Q: how many more operations may be admitted to wait for an execution permit, beyond the limit in force (B, or
     * an adaptive workload's L: its admission slots are L + Q).
     */
    public int extraSlots() {
        return extraSlots;
    }

    /** Free execution permits, for observation only: deciding admission from it is a race. */
    public int available() {
        return permits.available();
    }

    /** Free admission slots (of L + Q; B + Q for a fixed workload), for observation only. */
    public int availableSlots() {
        return permits.availableSlots();
    }

    /** Operations inside the barrier now: admitted and not yet finished (≤ B + Q). */
    public int inside() {
        return permits.admitted();
    }

    /** Operations holding an execution permit now (≤ B). */
    public int executing() {
        return permits.executing();
    }

    /** Whether this workload refuses at once a caller whose expected wait exceeds what it may wait. */
    public boolean predictive() {
        return predictive;
    }

    /** Whether this workload's limit on execution permits adapts to the database's latency (else it is B). */
    public boolean adaptive() {
        return adaptive != null;
    }

    /**
     * L: how many operations of this workload may hold an execution permit now. B for a fixed workload; for an
     * adaptive one, between its minimum and B. For observation.
     */
    public int limit() {
        return permits.limit();
    }

    /**
     * The adaptive limit's baseline: the lowest mean permit hold time of its windows of the last 30 s that ran at its
     * minimum (or were lower still), what an operation takes when the database is not overloaded. {@link Duration#ZERO} for a fixed workload or before the
     * first window. For observation.
     */
    public Duration baselineHoldTime() {
        return adaptive == null ? Duration.ZERO : Duration.ofNanos(adaptive.baselineNanos());
    }

    /**
     * The recent average permit hold time of this workload (predictive or adaptive); {@link Duration#ZERO}
     * without either or before the first operation. For observation.
     */
    public Duration recentHoldTime() {
        return holds == null ? Duration.ZERO : Duration.ofNanos(holds.averageNanos());
    }

    /**
     * The wait that predictive rejection expects for a caller arriving now: {@code (queued + 1) × recent hold / B}
     * with no permit free, else zero; {@link Duration#ZERO} without predictive rejection. For observation.
     */
    public Duration expectedWait() {
        return !predictive ? Duration.ZERO
                : Duration.ofNanos(holds.expectedWaitNanos(permits.waiting(), permits.available(), permits.limit()));
    }

    /** Operations queued for an execution permit now (≤ Q). */
    public int waiting() {
        return permits.waiting();
    }

    @Override
    public String toString() {
        return "Workload[" + bulkhead + "/" + name + ": concurrent=" + concurrent + ", extraSlots=" + extraSlots
                + (adaptive != null ? ", limit=" + limit() : "") + ", executing=" + executing() + ", inside="
                + inside() + "]";
    }
}
