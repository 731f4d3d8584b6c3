package dev.dbbulkhead;

/** Why an operation did not get to run its work, as counted by {@link BulkheadListener#onRejected}. */
public enum RejectionReason {
    /** All B + Q admission slots were taken: rejected at once. {@link AdmissionFullException}. */
    ADMISSION_FULL,
    /** No execution permit within the queue wait. {@link QueueTimeoutException}. */
    QUEUE_TIMEOUT,
    /** The deadline passed before work ran. {@link DeadlineExceededException}. */
    DEADLINE,
    /**
     * The caller could not be served in time: refused at once because its expected wait for an execution permit was
     * longer than it may wait, or, on a {@link QueuePolicy#DEADLINE} queue, it left the queue when it could no longer
     * finish its work before its deadline. {@link WouldTimeOutException}.
     */
    WOULD_TIME_OUT,
    /**
     * A {@link QueuePolicy#DEADLINE} queue under sustained overload, and this caller's expected wait was longer than
     * it may wait: refused at once. {@link LoadShedException}.
     */
    LOAD_SHED,
    /**
     * The workload was contended and the caller's kind of operation, one that holds its connection more than twice as
     * long as the workload's median operation, was at its cap: refused at once. {@link KindCappedException}.
     */
    KIND_CAPPED,
    /** The caller was interrupted while waiting for an execution permit ({@link InterruptedException}). */
    INTERRUPTED
}
