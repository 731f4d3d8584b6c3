package dev.dbbulkhead;

import java.util.concurrent.RejectedExecutionException;

/**
 * The barrier refused an operation before it touched the database: no connection was taken and nothing was
 * written, so the caller may retry (with a budget) or fail fast, e.g. with HTTP 503.
 *
 * <p>Each reason has its own type; all stay {@link RejectedExecutionException}s so that code written against
 * the article's API keeps working. Each carries the numbers a person needs to act: the barrier, the workload,
 * its execution budget B ({@link #concurrent()}) and extra admission Q ({@link #extraSlots()}).
 */
public abstract sealed class BulkheadRejectedException extends RejectedExecutionException
        permits AdmissionFullException, QueueTimeoutException, DeadlineExceededException {

    private final String bulkhead;
    private final String workload;
    private final int concurrent;
    private final int extraSlots;

    BulkheadRejectedException(String message, String bulkhead, String workload, int concurrent, int extraSlots) {
        super(message);
        this.bulkhead = bulkhead;
        this.workload = workload;
        this.concurrent = concurrent;
        this.extraSlots = extraSlots;
    }

    /** Why the barrier refused: never {@link RejectionReason#INTERRUPTED}, which is an {@link InterruptedException}. */
    public abstract RejectionReason reason();

    /** The barrier's name. */
    public String bulkhead() {
        return bulkhead;
    }

    /** The workload that refused. */
    public String workload() {
        return workload;
    }

    /** The workload's execution budget B. */
    public int concurrent() {
        return concurrent;
    }

    /** The workload's extra admission Q. */
    public int extraSlots() {
        return extraSlots;
    }

    static String where(String bulkhead, String workload) {
        return "db-bulkhead '" + bulkhead + "', workload '" + workload + "': ";
    }
}
