package dev.dbbulkhead;

/** How an admitted operation that got an execution permit ended, as reported to {@link BulkheadListener}. */
public enum Outcome {
    /** {@code commit()} returned and the cleanup succeeded: the value reached the caller. */
    COMMITTED,
    /** {@code work} (or the transaction setup) failed and the transaction was rolled back (or never began). */
    ROLLED_BACK,
    /** {@code commit()} failed, or cleanup after it: the write may have taken effect. */
    OUTCOME_UNKNOWN,
    /** No connection was obtained (pool timeout, broken server) or the deadline passed while getting one. */
    NO_CONNECTION,
    /**
     * A {@link Lease} from {@code acquire()} was closed: the caller ran its own transaction, whose outcome the
     * barrier does not see. The hold time is the lease's; there is no pool wait or work time.
     */
    RELEASED
}
