package dev.dbbulkhead;

import java.util.concurrent.RejectedExecutionException;

/**
 * The barrier refused an operation before it touched the database: no connection was taken and nothing was
 * written, so the caller may retry (with a budget) or fail fast, e.g. with HTTP 503.
 *
 * <p>Each reason has its own type; all stay {@link RejectedExecutionException}s so that code written against
 * the article's API keeps working. Each carries the numbers a person needs to act: the barrier, the workload,
 * its execution budget B ({@link #concurrent()}) and extra admission Q ({@link #extraSlots()}). They carry no
 * stack trace unless the barrier was built with {@code rejectionStackTraces(true)}: a rejection is an expected
 * outcome under overload, and the cheaper it is, the sooner the carrier threads serve admitted work.
 */
public abstract sealed class BulkheadRejectedException extends RejectedExecutionException
        permits AdmissionFullException, QueueTimeoutException, DeadlineExceededException, WouldTimeOutException {

    private final String bulkhead;
    private final String workload;
    private final int concurrent;
    private final int extraSlots;
    /** False while Throwable's constructor runs, so that the stack trace is captured only when asked for. */
    private final transient boolean constructed;
    private transient String message;

    BulkheadRejectedException(String bulkhead, String workload, int concurrent, int extraSlots,
            boolean stackTrace) {
        super((String) null);
        this.bulkhead = bulkhead;
        this.workload = workload;
        this.concurrent = concurrent;
        this.extraSlots = extraSlots;
        this.constructed = true;
        if (stackTrace) {
            fillInStackTrace();
        }
    }

    /**
     * Built on first use from the numbers: under overload most rejections are counted, not read, so the hot path
     * does not format strings.
     */
    @Override
    public String getMessage() {
        String m = message;
        if (m == null) {
            m = "db-bulkhead '" + bulkhead + "', workload '" + workload + "': " + describe();
            message = m;
        }
        return m;
    }

    /** The reason and its numbers, for the message. */
    abstract String describe();

    /** Captures the stack trace only once constructed, and only if the barrier keeps stack traces. */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return constructed ? super.fillInStackTrace() : this;
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
}
