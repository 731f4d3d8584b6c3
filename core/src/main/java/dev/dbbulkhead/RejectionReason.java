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
     * Predictive rejection: the expected wait for an execution permit (queue position, B, recent hold time) was
     * longer than the caller may wait: refused at once instead of waiting to time out. {@link WouldTimeOutException}.
     */
    WOULD_TIME_OUT,
    /** The caller was interrupted while waiting for an execution permit ({@link InterruptedException}). */
    INTERRUPTED
}
