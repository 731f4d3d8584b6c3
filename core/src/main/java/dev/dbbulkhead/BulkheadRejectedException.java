package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * The barrier refused an operation before its work could commit anything: no connection was taken, or (a deadline
 * that cancelled a statement) the transaction was rolled back, so nothing was written and the caller may retry (with
 * a budget) or fail fast, e.g. with HTTP 503.
 *
 * <p>Each reason has its own type; all stay {@link RejectedExecutionException}s so that code written against
 * the article's API keeps working. Each carries the workload's state when it refused, read live: B
 * ({@link #concurrent()}), Q ({@link #extraSlots()}), the limit in force ({@link #limit()}, B unless the workload is
 * adaptive), how many were executing and waiting, and how long this caller could wait ({@link #allowedWait()}); the
 * message shows them, every duration in milliseconds. They carry no stack trace unless the barrier was built with
 * {@code rejectionStackTraces(true)}: a rejection is an expected outcome under overload, and the cheaper it is, the
 * sooner the carrier threads serve admitted work.
 */
public abstract sealed class BulkheadRejectedException extends RejectedExecutionException
        permits AdmissionFullException,
                QueueTimeoutException,
                DeadlineExceededException,
                WouldTimeOutException,
                LoadShedException,
                KindCappedException {

    private final String bulkhead;
    private final String workload;
    private final int concurrent;
    private final int extraSlots;
    private final int limit;
    private final int executing;
    private final int waiting;
    private final long allowedWaitNanos;
    private final @Nullable String kind;
    /** False while Throwable's constructor runs, so that the stack trace is captured only when asked for. */
    private final transient boolean constructed;

    private transient @Nullable String message;

    BulkheadRejectedException(Snapshot state, boolean stackTrace) {
        super((String) null);
        this.bulkhead = state.bulkhead();
        this.workload = state.workload();
        this.concurrent = state.concurrent();
        this.extraSlots = state.extraSlots();
        this.limit = state.limit();
        this.executing = state.executing();
        this.waiting = state.waiting();
        this.allowedWaitNanos = state.allowedWaitNanos();
        this.kind = state.kind();
        this.constructed = true;
        if (stackTrace) {
            fillInStackTrace();
        }
    }

    /**
     * Built on first use from the numbers: under overload most rejections are counted, not read, so the hot path
     * does not format strings. For example: {@code db-bulkhead 'db', workload 'default': no execution permit within
     * the queue wait of 50.000 ms (B=16, Q=32, limit=16, executing=16, waiting=32)}.
     */
    @Override
    public String getMessage() {
        String m = message;
        if (m == null) {
            m = "db-bulkhead '" + bulkhead + "', workload '" + workload + "': " + describe() + " "
                    + new Snapshot(
                                    bulkhead,
                                    workload,
                                    concurrent,
                                    extraSlots,
                                    limit,
                                    executing,
                                    waiting,
                                    allowedWaitNanos,
                                    kind)
                            .describe();
            message = m;
        }
        return m;
    }

    /** The reason and its own numbers, for the message. */
    abstract String describe();

    static String millis(long nanos) {
        return Snapshot.millis(nanos);
    }

    /**
     * Captures the stack trace only once constructed, and only if the barrier keeps stack traces. Not synchronized
     * as {@code Throwable}'s is: it runs once, in the constructor, before anyone else can see the exception, and a
     * monitor per rejection was a tenth of its cost.
     */
    @Override
    @SuppressWarnings("UnsynchronizedOverridesSynchronized") // deliberately, as said above
    public Throwable fillInStackTrace() {
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

    /**
     * The refused caller's kind of operation, for a workload that learns kinds ({@link WorkloadConfig.Builder#kinds}):
     * its call site's or the name it gave; else null.
     */
    public @Nullable String kind() {
        return kind;
    }

    /** The workload's execution budget B. */
    public int concurrent() {
        return concurrent;
    }

    /** The workload's extra admission Q. */
    public int extraSlots() {
        return extraSlots;
    }

    /** The limit L in force when it refused: B for a fixed workload, the adaptive limit otherwise. */
    public int limit() {
        return limit;
    }

    /** Operations of the workload holding an execution permit when it refused. */
    public int executing() {
        return executing;
    }

    /** Operations of the workload queued for an execution permit when it refused. */
    public int waiting() {
        return waiting;
    }

    /**
     * How long this caller could wait for an execution permit: its queue wait, or what was left of its deadline when
     * it arrived ({@code Duration.ofNanos(Long.MAX_VALUE)}: unbounded).
     */
    public Duration allowedWait() {
        return Duration.ofNanos(allowedWaitNanos);
    }
}
