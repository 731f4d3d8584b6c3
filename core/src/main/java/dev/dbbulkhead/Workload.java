package dev.dbbulkhead;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One workload's budget inside a {@link DbBulkhead}: B execution permits ({@link #concurrent()}) and Q more admission
 * slots ({@link #extraSlots()}) beyond the limit in force. It hands out {@link Lease}s, and {@code transaction()} runs
 * one JDBC transaction inside one. Its settings: {@link #config()}.
 *
 * <p>An operation first takes an admission slot without waiting (none free: {@link AdmissionFullException}), then
 * waits on the fair execution permits for at most its queue wait or its deadline (expired:
 * {@link QueueTimeoutException} or {@link DeadlineExceededException}; interrupted: {@link InterruptedException}),
 * releasing only the slot in those cases. With both, it holds a lease until it is closed: after the transaction's
 * connection is closed, on its own thread, whatever happened. A permit is released exactly once by the thread that
 * took it: a caller that gives up (e.g. {@code Future.cancel(true)}) releases nothing while its work still runs. A
 * lease whose thread terminates without closing it is reclaimed ({@link BulkheadListener#onLeaseReclaimed}).
 *
 * <p>An interface so that the API does not depend on the implementation (which depends on the API): a barrier's
 * workloads come from {@link DbBulkhead#workload(String)}; do not implement it. Thread-safe. An operation that does
 * not wait costs one CAS to enter and one to leave and takes no lock; one that waits queues without pinning its
 * carrier if it is a virtual thread.
 */
public interface Workload {
    /**
     * Runs {@code work} in one JDBC transaction, waiting at most {@code queueWait} for an execution permit: the
     * article's contract. See {@link DbBulkhead#transaction(Duration, SqlWork)}.
     */
    <T extends @Nullable Object> T transaction(Duration queueWait, SqlWork<T> work)
            throws SQLException, InterruptedException;

    /** Runs {@code work} in one transaction bounded by {@code deadline}. See {@link Deadline}. */
    <T extends @Nullable Object> T transaction(Deadline deadline, SqlWork<T> work)
            throws SQLException, InterruptedException;

    /** Runs {@code work} in one transaction with {@code options} (wait or deadline, read-only, isolation). */
    <T extends @Nullable Object> T transaction(TransactionOptions options, SqlWork<T> work)
            throws SQLException, InterruptedException;

    /**
     * Admission without a transaction: waits at most {@code queueWait} for an execution permit and returns a
     * {@link Lease} holding both permits, for a caller that runs its own transaction. Same rejections, listener calls
     * and flight-recorder events as {@code transaction()}.
     *
     * @throws IllegalStateException when this thread already holds a lease of this barrier (or runs its work)
     */
    Lease acquire(Duration queueWait) throws InterruptedException;

    /**
     * {@link #acquire(Duration)} for an operation of the kind named {@code kind}, for a workload that learns its kinds
     * ({@link WorkloadConfig.Builder#kinds}; the starter names each {@code @DbWorkload} method's). Without kinds, the
     * same as {@link #acquire(Duration)}.
     */
    default Lease acquire(Duration queueWait, String kind) throws InterruptedException {
        return acquire(queueWait);
    }

    /**
     * {@link #acquire(Deadline)} for an operation of the kind named {@code kind}; see {@link #acquire(Duration,
     * String)}.
     */
    default Lease acquire(Deadline deadline, String kind) throws InterruptedException {
        return acquire(deadline);
    }

    /** Admission without a transaction, bounded by {@code deadline}; see {@link #acquire(Duration)}. */
    Lease acquire(Deadline deadline) throws InterruptedException;

    /**
     * What the workload has learned of each kind of its operations, busiest first ({@link
     * WorkloadConfig.Builder#kinds}); empty when it does not learn them. For observation only.
     */
    default List<KindStats> kinds() {
        return List.of();
    }

    /**
     * Where the workload stands under its barrier's priorities, and why ({@link Sharing}): its cap, an elastic
     * workload's allowance, a regular workload's latency objective and recent p99; empty when the barrier has no
     * elastic workload. For observation only.
     */
    default Optional<Sharing> sharing() {
        return Optional.empty();
    }

    /** The workload's settings. */
    WorkloadConfig config();

    /** The workload's name. */
    default String name() {
        return config().name();
    }

    /** The name of the barrier this workload belongs to. */
    String bulkheadName();

    /** B: how many operations of this workload may hold a connection at once. */
    default int concurrent() {
        return config().concurrent();
    }

    /**
     * Q: how many more operations may be admitted to wait for an execution permit, beyond the limit in force (B, or
     * an adaptive workload's L: its admission slots are L + Q).
     */
    default int extraSlots() {
        return config().extraSlots();
    }

    /** Whether this workload refuses at once a caller that almost surely cannot start within what it may wait. */
    default boolean predictive() {
        return config().predictiveRejection();
    }

    /** Whether this workload's limit on execution permits adapts to the database's latency (else it is B). */
    default boolean adaptive() {
        return config().adaptive();
    }

    /** Free execution permits, for observation only: deciding admission from it is a race. */
    int available();

    /** Free admission slots (of L + Q; B + Q for a fixed workload), for observation only. */
    int availableSlots();

    /** Operations inside the barrier now: admitted and not yet finished (≤ B + Q). */
    int inside();

    /** Operations holding an execution permit now (≤ B). */
    int executing();

    /** Operations queued for an execution permit now (≤ Q). */
    int waiting();

    /**
     * L: how many operations of this workload may hold an execution permit now. B for a fixed workload; for an
     * adaptive one, between its minimum and B. For observation.
     */
    int limit();

    /**
     * The recent average permit hold time of this workload (predictive or adaptive); {@link Duration#ZERO} without
     * either or before the first operation. For observation.
     */
    Duration recentHoldTime();

    /**
     * The wait that predictive rejection expects for a caller arriving now: {@code (queued + 1) × recent hold / L}
     * with no permit free, else zero; {@link Duration#ZERO} without predictive rejection. For observation.
     */
    Duration expectedWait();

    /**
     * How many leases (and queued callers) of this workload were reclaimed since it was built, because their thread
     * terminated or left without giving their permits back. Should stay 0: see
     * {@link BulkheadListener#onLeaseReclaimed}.
     */
    long reclaimed();
}
