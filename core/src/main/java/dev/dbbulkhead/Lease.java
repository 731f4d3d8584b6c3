package dev.dbbulkhead;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Admission to a workload without a transaction: both permits (the admission slot and the execution permit),
 * held until {@link #close()}. For callers that run their own transaction, e.g. with Spring's
 * {@code TransactionTemplate}, jOOQ or JPA:
 * <pre>{@code
 * try (Lease lease = db.workload("interactive").acquire(Duration.ofMillis(50))) {
 *     return transactionTemplate.execute(status -> repository.save(order));   // commits and cleans up inside
 * }                                                                           // then the permits go back
 * }</pre>
 *
 * <p>The rule: close only after the transaction has committed (or rolled back) and its connection has gone back
 * to the pool, never while it is still open, or more than B transactions run at once. Take the lease before the
 * transaction starts, never inside one: waiting for a permit while holding a connection can exhaust the pool.
 *
 * <p>A lease belongs to the thread that acquired it. {@link #close()} releases both permits exactly once: a second
 * call does nothing, and a call from another thread throws {@link IllegalStateException} and releases nothing (a
 * caller that gives up, e.g. through {@code Future.cancel}, must not free a permit whose work still runs). While a
 * thread holds a lease, acquiring the same barrier again on it fails at once with {@link IllegalStateException}:
 * the barrier is not reentrant. A lease that is never closed keeps its permits forever: use try-with-resources.
 *
 * <p>Not thread-safe: used by its owner thread only.
 */
public interface Lease extends AutoCloseable {
    /** The workload whose permits this lease holds. */
    Workload workload();

    /** How long the caller waited for the execution permit, in nanoseconds. */
    long permitWaitNanos();

    /** The deadline the lease was acquired with, if any. */
    Optional<Deadline> deadline();

    /**
     * Tells the barrier what the caller's own transaction failed with, before {@link #close()}. An adaptive workload
     * ({@link Workload#adaptive()}) takes the signs of saturation among them as a signal to lower its limit, as it does
     * for the transactions it runs itself: a pool timeout, SQLState 53000, 53200 or 53300, PgBouncer's
     * {@code query_wait_timeout} or {@code max_client_conn} refusal, in {@code failure} or its causes
     * ({@link BulkheadListener#onOverloadSignal}); the application's own errors (a {@code NOWAIT} lock's 55P03, its
     * own statement timeout's 57014, a deadlock's 40P01) are not. Optional; nothing else changes, and a fixed workload
     * ignores it.
     */
    default void transactionFailed(Throwable failure) {}

    /**
     * Hands this lease over to {@code stage}, for work that goes on after the caller's method returns (a method
     * returning a {@code CompletableFuture} whose database work runs on another thread): both permits are released
     * when {@code stage} completes, normally, exceptionally or cancelled, on the thread that completes it, exactly
     * once; {@link #close()} then does nothing, and this thread may use the barrier again at once. A stage that is
     * already complete releases them now. A stage that never completes keeps them: leak detection reports it.
     *
     * @throws IllegalStateException when called from a thread other than the one that acquired the lease
     * @throws NullPointerException when {@code stage} is null
     */
    void closeWhenComplete(CompletionStage<?> stage);

    /**
     * Releases both permits, once; later calls do nothing.
     *
     * @throws IllegalStateException when called from a thread other than the one that acquired the lease: nothing
     *     is released
     */
    @Override
    void close();
}
