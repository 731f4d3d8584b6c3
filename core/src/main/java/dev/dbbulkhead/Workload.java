package dev.dbbulkhead;

import dev.dbbulkhead.DbBulkhead.SqlWork;
import dev.dbbulkhead.internal.Permits;
import dev.dbbulkhead.internal.Preconditions;
import java.sql.SQLException;
import java.time.Duration;

/**
 * One workload's budget inside a {@link DbBulkhead}: B execution permits ({@link #concurrent()}) and B + Q
 * admission slots ({@link #extraSlots()} = Q). This class holds the whole permit logic of the barrier.
 *
 * <p>An operation first takes an admission slot without waiting (none free: {@link AdmissionFullException}),
 * then waits on the fair execution semaphore for at most its queue wait or its deadline (expired:
 * {@link QueueTimeoutException} or {@link DeadlineExceededException}; interrupted: {@link InterruptedException}),
 * releasing only the slot in those cases. With both, it runs the transaction and releases both permits after the
 * connection is closed, on its own thread, whatever happened. A permit is a lease, released exactly once by the
 * thread that took it: a caller that gives up (e.g. {@code Future.cancel(true)}) releases nothing while its work
 * still runs.
 *
 * <p>Thread-safe. An operation that does not wait costs one CAS to enter and one to leave, takes no lock and
 * allocates nothing; one that waits allocates its queue node, as a {@code Semaphore} would, and waits without
 * pinning its carrier if it is a virtual thread.
 */
public final class Workload {
    private final String bulkhead;
    private final String name;
    private final int concurrent;
    private final int extraSlots;
    private final Permits permits;
    private final TransactionRunner runner;

    Workload(String bulkhead, String name, int concurrent, int extraSlots, TransactionRunner runner) {
        this.bulkhead = bulkhead;
        this.name = name;
        this.concurrent = concurrent;
        this.extraSlots = extraSlots;
        Preconditions.sum(concurrent, "concurrent", extraSlots, "extraSlots");
        this.permits = new Permits(concurrent, extraSlots);
        this.runner = runner;
    }

    /**
     * Runs {@code work} in one JDBC transaction, waiting at most {@code queueWait} for an execution permit:
     * the article's contract. See {@link DbBulkhead#transaction(Duration, SqlWork)}.
     */
    public <T> T transaction(Duration queueWait, SqlWork<T> work) throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNegative(queueWait, "queueWait");
        return run(queueWait, null, null, work);
    }

    /** Runs {@code work} in one transaction bounded by {@code deadline}. See {@link Deadline}. */
    public <T> T transaction(Deadline deadline, SqlWork<T> work) throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNull(deadline, "deadline");
        return run(null, deadline, null, work);
    }

    /** Runs {@code work} in one transaction with {@code options} (wait or deadline, read-only, isolation). */
    public <T> T transaction(TransactionOptions options, SqlWork<T> work)
            throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNull(options, "options");
        return run(options.queueWait(), options.deadline(), options, work);
    }

    private <T> T run(Duration queueWait, Deadline deadline, TransactionOptions options, SqlWork<T> work)
            throws SQLException, InterruptedException {
        TransactionRunner.Frame frame = runner.enter(this);
        BulkheadListener listener = runner.listener();
        boolean timed = runner.timed();
        long start = deadline != null || timed ? runner.clock().getAsLong() : 0;
        long waitNanos = queueWait == null ? Long.MAX_VALUE : saturatedNanos(queueWait);
        boolean deadlineBinds = false;
        if (deadline != null) {
            long remaining = deadline.remainingNanos(start);
            if (remaining <= 0) {
                runner.rejected(this, RejectionReason.DEADLINE, 0);
                throw deadlineExceeded(DeadlineExceededException.Stage.BEFORE_ADMISSION, -remaining);
            }
            if (remaining <= waitNanos) {
                waitNanos = remaining;
                deadlineBinds = true;
            }
        }
        int entered;
        try {
            entered = permits.enter(waitNanos > 0);
        } catch (InterruptedException interrupted) { // already interrupted: nothing was taken
            runner.rejected(this, RejectionReason.INTERRUPTED, 0);
            throw interrupted;
        }
        if (entered == Permits.ADMISSION_FULL) {
            runner.rejected(this, RejectionReason.ADMISSION_FULL, 0);
            throw new AdmissionFullException(bulkhead, name, concurrent, extraSlots, runner.stackTraces());
        }
        // What this thread holds, so that the finally block gives back exactly that, whatever is thrown.
        boolean acquired = entered == Permits.ACQUIRED;
        boolean slotOnly = entered == Permits.MUST_WAIT;
        try {
            listener.onAdmitted(this);
            if (slotOnly) {
                slotOnly = false; // await() gives the slot back itself unless it returns ACQUIRED
                try {
                    acquired = permits.await(waitNanos) == Permits.ACQUIRED;
                } catch (InterruptedException interrupted) {
                    runner.rejected(this, RejectionReason.INTERRUPTED, elapsedSince(timed, start));
                    throw interrupted;
                }
            }
            long waited = elapsedSince(timed, start);
            if (!acquired) {
                if (deadlineBinds) {
                    runner.rejected(this, RejectionReason.DEADLINE, waited);
                    throw deadlineExceeded(DeadlineExceededException.Stage.PERMIT_WAIT,
                            -deadline.remainingNanos(runner.clock().getAsLong()));
                }
                runner.rejected(this, RejectionReason.QUEUE_TIMEOUT, waited);
                throw new QueueTimeoutException(bulkhead, name, concurrent, extraSlots, queueWait,
                        runner.stackTraces());
            }
            frame.timed = timed;
            frame.permitWait = waited;
            if (timed) {
                listener.onPermitAcquired(this, waited);
            }
            return runner.run(frame, this, deadline, options, work);
        } finally {
            if (acquired) {
                permits.exit();
            } else if (slotOnly) {
                permits.leave();
            }
        }
    }

    private long elapsedSince(boolean timed, long start) {
        return timed ? runner.clock().getAsLong() - start : 0;
    }

    DeadlineExceededException deadlineExceeded(DeadlineExceededException.Stage stage, long overdueNanos) {
        return new DeadlineExceededException(bulkhead, name, concurrent, extraSlots, stage, overdueNanos,
                runner.stackTraces());
    }

    private static long saturatedNanos(Duration wait) {
        try {
            return wait.toNanos();
        } catch (ArithmeticException tooLong) {
            return Long.MAX_VALUE;
        }
    }

    /** The workload's name. */
    public String name() {
        return name;
    }

    /** The name of the barrier this workload belongs to. */
    public String bulkheadName() {
        return bulkhead;
    }

    /** B: how many operations of this workload may hold a connection at once. */
    public int concurrent() {
        return concurrent;
    }

    /** Q: how many more operations may be admitted to wait for an execution permit. */
    public int extraSlots() {
        return extraSlots;
    }

    /** Free execution permits, for observation only: deciding admission from it is a race. */
    public int available() {
        return permits.available();
    }

    /** Free admission slots (of B + Q), for observation only. */
    public int availableSlots() {
        return permits.availableSlots();
    }

    /** Operations inside the barrier now: admitted and not yet finished (≤ B + Q). */
    public int inside() {
        return permits.admitted();
    }

    /** Operations holding an execution permit now (≤ B). */
    public int executing() {
        return permits.executing();
    }

    /** Operations queued for an execution permit now (≤ Q). */
    public int waiting() {
        return permits.waiting();
    }

    @Override
    public String toString() {
        return "Workload[" + bulkhead + "/" + name + ": concurrent=" + concurrent + ", extraSlots=" + extraSlots
                + ", executing=" + executing() + ", inside=" + inside() + "]";
    }
}
