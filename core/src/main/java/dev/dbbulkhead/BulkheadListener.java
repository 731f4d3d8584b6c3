package dev.dbbulkhead;

/**
 * Observes a barrier's operations, for metrics, tracing and flight recording. Every method has a no-op
 * default; implement only what you need.
 *
 * <p>Called synchronously on the caller's thread, so keep each call short and non-blocking. Implementations must be
 * thread-safe. Durations are in nanoseconds on the barrier's nano clock; with {@link #NOOP} (the default)
 * the barrier does not read the clock for them at all.
 *
 * <p>Per operation the calls are: {@code onRejected} alone (admission full, or a deadline already passed); or
 * {@code onAdmitted}, then either {@code onRejected} (queue timeout, deadline, interrupt) or
 * {@code onPermitAcquired}, then {@code onConnectionAcquired} when the pool gave a connection, then exactly one
 * {@code onFinished}. A deadline found passed once the connection is in hand adds {@code onRejected(DEADLINE)}
 * before {@code onFinished(NO_CONNECTION)}. A {@link Lease} from {@code acquire()} ends with
 * {@code onFinished(RELEASED)} when it is closed.
 *
 * <p>Whatever a listener throws (a {@link RuntimeException}, a checked exception thrown sneakily, an {@link Error},
 * a {@link VirtualMachineError} too) is caught and logged: a listener observes, it never changes what the caller is
 * told (in particular not after a commit) nor whether a permit or a connection goes back.
 */
public interface BulkheadListener {
    /** The shared listener that does nothing. */
    BulkheadListener NOOP = new BulkheadListener() {};

    /** The operation took an admission slot and will now wait for an execution permit. */
    default void onAdmitted(Workload workload) {}

    /** The operation was refused before its work ran; it holds no permit any more. */
    default void onRejected(Workload workload, RejectionReason reason, long waitedNanos) {}

    /** The operation got its execution permit after waiting {@code waitNanos}. */
    default void onPermitAcquired(Workload workload, long waitNanos) {}

    /** The pool handed out a connection after {@code poolWaitNanos}. */
    default void onConnectionAcquired(Workload workload, long poolWaitNanos) {}

    /**
     * The operation that held an execution permit is over; its permits are released right after this call.
     *
     * @param permitWaitNanos from the call to the execution permit
     * @param poolWaitNanos from asking the pool to getting the connection (the whole failed attempt for
     *     {@link Outcome#NO_CONNECTION})
     * @param holdNanos from connection acquired to connection closed (0 when none was obtained)
     * @param workNanos time spent inside {@code work} (0 when it did not run)
     */
    default void onFinished(
            Workload workload,
            Outcome outcome,
            long permitWaitNanos,
            long poolWaitNanos,
            long holdNanos,
            long workNanos) {}

    /**
     * An adaptive workload's limit L changed from {@code previousLimit} to {@code newLimit} ({@link
     * Workload#limit()}); called by the thread whose operation ended the measuring window, after its permits are
     * back.
     */
    default void onLimitChanged(Workload workload, int previousLimit, int newLimit) {}

    /**
     * The permits of a lease never released (a {@link Lease} never closed, or a release cut short by a
     * {@link StackOverflowError}) were taken back, after being held for {@code heldNanos} (0 for a caller that was
     * still waiting): its thread terminated (called on the barrier's reclaimer thread, after a garbage collection found
     * the thread gone, or on its scheduler for a pooled worker that had dropped its thread locals), or, with leak
     * detection on, a pooled thread that kept it called the barrier again after the threshold (called on that thread).
     * Its hold is kept out of the adaptive limit's measurements.
     */
    default void onLeaseReclaimed(Workload workload, long heldNanos) {}

    /**
     * Leak detection ({@code leakDetectionThreshold}): a {@link Lease} from {@code acquire()} has been open for
     * {@code heldNanos}, longer than the threshold. Called once per lease, on the barrier's scheduler thread; a
     * warning with the stack of the acquiring call is logged as well.
     */
    default void onLeakSuspected(Workload workload, long heldNanos) {}

    /**
     * An operation's connection was discarded instead of going back to the pool: its work sent SQL that may change
     * the session in a way the text cannot show (a {@code DO} block, a {@code CALL}, {@code set_config} with a
     * computed scope), and the session changed, or could not be compared; the next caller gets a fresh session. The
     * operation's outcome is unchanged. Called once per discard, on the caller's thread; a warning naming the call
     * site is logged once per call site.
     */
    default void onSessionDiscarded(Workload workload) {}

    /**
     * An admitted operation could not get a connection from the pool in time (a
     * {@link java.sql.SQLTransientConnectionException}, as HikariCP's timeout is, in what its transaction failed
     * with): the pool is the bottleneck, or something outside the barrier holds its connections. Called once per
     * operation, from {@code transaction()} or from {@link Lease#transactionFailed}, on the caller's thread.
     */
    default void onPoolTimeout(Workload workload) {}

    /**
     * An admitted operation failed with a sign that the database, the pool or PgBouncer is saturated: its deadline
     * passed while it waited for a connection or an answer or inside a statement the deadline's timeout cut short,
     * a pool timeout, SQLState 53000/53200/53300, or PgBouncer's {@code query_wait_timeout} or {@code max_client_conn}
     * refusal. An adaptive workload's limit counts these; the application's own errors (a {@code NOWAIT} lock, its
     * own statement timeout, a deadlock, a constraint) are never reported here. Called at most once per operation,
     * on the caller's thread, with what the transaction failed with.
     */
    default void onOverloadSignal(Workload workload, Throwable signal) {}

    /**
     * A caller that predictive rejection would have refused was admitted anyway, as one of the random sample that the
     * capacity tool's audit asks for (a measurement, never on in a service), and its wait ended: {@code servedInTime}
     * when it got its execution permit within what it allowed (the refusal would have been false), after
     * {@code waitedNanos}. A permit granted while it was late to wake, after what it allowed, does not count as in
     * time: the caller still runs its work, but the prediction was right. Called on the caller's thread.
     */
    default void onPredictionAudited(Workload workload, boolean servedInTime, long waitedNanos) {}
}
