package dev.dbbulkhead;

/**
 * How a workload's queue admits and serves waiting callers ({@link WorkloadConfig.Builder#queue}). The measurements
 * behind the choice: {@code docs/performance.md}; when to use which: {@code docs/sizing.md}.
 */
public enum QueuePolicy {
    /**
     * The article's: at most Q callers wait, in arrival order (a fair queue), each for its queue wait or what is left
     * of its deadline. A caller that finds the Q slots taken is refused at once; one that waits too long is refused
     * when its wait ends. The default.
     */
    FIFO,
    /**
     * Admission bounded by time: a caller is admitted only when its expected start, at its place in line (from how
     * fast the workload's permits come back), leaves it time for its work (a high quantile of the workload's recent
     * holds) before its deadline; otherwise it is refused at once ({@link WouldTimeOutException}). A waiter leaves
     * when it can no longer finish in time, not at its deadline. While the queue keeps refusing callers (sustained
     * overload, not a burst that the deadline absorbs), a newcomer whose expected wait is longer than it may wait is
     * refused at once ({@link LoadShedException}); one whose expected wait fits is admitted, however long the line. Q
     * is then only a memory cap: size it large ({@link WorkloadConfig#recommended}).
     */
    DEADLINE
}
