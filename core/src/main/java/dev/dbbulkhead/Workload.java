package dev.dbbulkhead;

import dev.dbbulkhead.DbBulkhead.SqlWork;
import dev.dbbulkhead.internal.Admission;
import dev.dbbulkhead.internal.Permits;
import dev.dbbulkhead.internal.Preconditions;
import java.sql.SQLException;
import java.time.Duration;

/**
 * One workload's budget inside a {@link DbBulkhead}: B execution permits ({@link #concurrent()}) and Q more admission
 * slots ({@link #extraSlots()}) beyond the limit in force. It hands out {@link Lease}s, and {@code transaction()} runs
 * one JDBC transaction inside one.
 *
 * <p>An operation first takes an admission slot without waiting (none free: {@link AdmissionFullException}),
 * then waits on the fair execution permits for at most its queue wait or its deadline (expired:
 * {@link QueueTimeoutException} or {@link DeadlineExceededException}; interrupted: {@link InterruptedException}),
 * releasing only the slot in those cases. With both, it holds a lease until it is closed: after the transaction's
 * connection is closed, on its own thread, whatever happened. A permit is released exactly once by the thread that
 * took it: a caller that gives up (e.g. {@code Future.cancel(true)}) releases nothing while its work still runs. A
 * lease whose thread terminates without closing it is reclaimed ({@link BulkheadListener#onLeaseReclaimed}).
 *
 * <p>Thread-safe. An operation that does not wait costs one CAS to enter and one to leave and takes no lock; one
 * that waits queues without pinning its carrier if it is a virtual thread.
 */
public final class Workload {
    private final String bulkhead;
    private final String name;
    private final int concurrent;
    private final int extraSlots;
    private final Admission admission;
    private final Permits permits;

    Workload(String name, int concurrent, int extraSlots, Admission.Options options, Admission.Shared shared) {
        this.bulkhead = shared.bulkhead();
        this.name = name;
        this.concurrent = concurrent;
        this.extraSlots = extraSlots;
        Preconditions.sum(concurrent, "concurrent", extraSlots, "extraSlots");
        this.admission = new Admission(this, concurrent, extraSlots, options, shared);
        this.permits = admission.permits();
    }

    /**
     * Runs {@code work} in one JDBC transaction, waiting at most {@code queueWait} for an execution permit:
     * the article's contract. See {@link DbBulkhead#transaction(Duration, SqlWork)}.
     */
    public <T> T transaction(Duration queueWait, SqlWork<T> work) throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNegative(queueWait, "queueWait");
        return admission.transaction(queueWait, null, null, work);
    }

    /** Runs {@code work} in one transaction bounded by {@code deadline}. See {@link Deadline}. */
    public <T> T transaction(Deadline deadline, SqlWork<T> work) throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNull(deadline, "deadline");
        return admission.transaction(null, deadline, null, work);
    }

    /** Runs {@code work} in one transaction with {@code options} (wait or deadline, read-only, isolation). */
    public <T> T transaction(TransactionOptions options, SqlWork<T> work)
            throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNull(options, "options");
        return admission.transaction(options.queueWait(), options.deadline(), options, work);
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
        return admission.acquire(queueWait, null);
    }

    /** Admission without a transaction, bounded by {@code deadline}; see {@link #acquire(Duration)}. */
    public Lease acquire(Deadline deadline) throws InterruptedException {
        Preconditions.notNull(deadline, "deadline");
        return admission.acquire(null, deadline);
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
        return admission.predictive();
    }

    /** Whether this workload's limit on execution permits adapts to the database's latency (else it is B). */
    public boolean adaptive() {
        return admission.adaptive();
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
        return Duration.ofNanos(admission.baselineNanos());
    }

    /**
     * The recent average permit hold time of this workload (predictive or adaptive); {@link Duration#ZERO}
     * without either or before the first operation. For observation.
     */
    public Duration recentHoldTime() {
        return Duration.ofNanos(admission.recentHoldNanos());
    }

    /**
     * The wait that predictive rejection expects for a caller arriving now: {@code (queued + 1) × recent hold / B}
     * with no permit free, else zero; {@link Duration#ZERO} without predictive rejection. For observation.
     */
    public Duration expectedWait() {
        return Duration.ofNanos(admission.expectedWaitNanos());
    }

    /**
     * How many leases (and queued callers) of this workload were reclaimed since it was built, because their thread
     * terminated or left without giving their permits back. Should stay 0: see
     * {@link BulkheadListener#onLeaseReclaimed}.
     */
    public long reclaimed() {
        return admission.reclaimed();
    }

    /** Operations queued for an execution permit now (≤ Q). */
    public int waiting() {
        return permits.waiting();
    }

    @Override
    public String toString() {
        return "Workload[" + bulkhead + "/" + name + ": concurrent=" + concurrent + ", extraSlots=" + extraSlots
                + (admission.adaptive() ? ", limit=" + limit() : "") + ", executing=" + executing() + ", inside="
                + inside() + "]";
    }
}
