package dev.dbbulkhead.internal;

import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.Workload;
import java.util.Optional;

/**
 * The lease that admission hands out: both permits of one workload, owned by the thread that acquired them. It is
 * also that caller's node in the permit queue, so that nothing needs allocating once a permit is taken.
 *
 * <p>A lease handed to a caller ({@code acquire()}) is used once. The one inside {@code transaction()}, which no
 * caller ever sees, is the thread's spare ({@link Frames.Frame#spare}), reset for each operation: no allocation on
 * the hot path.
 *
 * <p>Used by its owner thread only; {@link #close()} from another thread is refused.
 */
public final class PermitLease extends Permits.Node implements Lease {
    private final Frames.Frame frame;
    private Workload workload;
    private Permits permits;
    private Telemetry telemetry;
    private HoldTimes holds;
    private Deadline deadline;
    private boolean timed;
    private long permitWaitNanos;
    private long grantedAt;
    /** onFinished was reported by the transaction runner; close() must not report again. */
    private boolean reported;
    /** The transaction failed with a sign of an overloaded database (see {@link Overload}); set by the runner. */
    boolean overloaded;
    /** close() was called: if permits are still held, it failed part-way (a stack overflow) and is finished later. */
    private boolean closing;
    /**
     * Set by admission, as a plain field write, when something unexpected (a stack overflow) was thrown while this
     * lease held permits and before it reached the caller: if giving them back failed too, the thread's next call
     * gives them back. Never set once the caller has the lease.
     */
    public boolean failed;

    /** Built before any permit is taken: a failure to allocate it then holds nothing. */
    public PermitLease(Workload workload, Permits permits, HoldTimes holds, Telemetry telemetry, Frames.Frame frame,
            Deadline deadline, boolean timed) {
        super(Thread.currentThread());
        this.frame = frame;
        reset(workload, permits, holds, telemetry, deadline, timed);
    }

    /** For another operation of the same thread, once the previous one has fully ended (its node unlinked). */
    PermitLease reset(Workload workload, Permits permits, HoldTimes holds, Telemetry telemetry, Deadline deadline,
            boolean timed) {
        this.workload = workload;
        this.permits = permits;
        this.holds = holds;
        this.telemetry = telemetry;
        this.deadline = deadline;
        this.timed = timed;
        this.permitWaitNanos = 0;
        this.grantedAt = 0;
        this.reported = false;
        this.overloaded = false;
        this.closing = false;
        this.failed = false;
        renew();
        // The thread's current lease from now on; it counts as "inside" only while it holds permits, so nothing
        // needs undoing when admission refuses, and nothing is left to write once the permits are taken.
        frame.active = this;
        return this;
    }

    /** Both permits are now held, after waiting {@code permitWaitNanos}. Field writes only. */
    public void granted(long permitWaitNanos, long now) {
        this.permitWaitNanos = permitWaitNanos;
        this.grantedAt = now;
    }

    /** Whether this operation reports its durations (a listener or a flight recording wants them). */
    public boolean timed() {
        return timed;
    }

    public Telemetry telemetry() {
        return telemetry;
    }

    /** The deadline, or {@code null}. */
    public Deadline deadlineOrNull() {
        return deadline;
    }

    /** Reports the transaction's end; {@link #close()} then reports nothing more. */
    public void finished(Outcome outcome, long poolWait, long hold, long work) {
        reported = true;
        if (timed) {
            telemetry.finished(workload, outcome, permitWaitNanos, poolWait, hold, work);
        }
    }

    @Override
    public void transactionFailed(Throwable failure) {
        if (failure != null && Overload.signalled(failure)) {
            overloaded = true;
        }
    }

    @Override
    public Workload workload() {
        return workload;
    }

    @Override
    public long permitWaitNanos() {
        return permitWaitNanos;
    }

    @Override
    public Optional<Deadline> deadline() {
        return Optional.ofNullable(deadline);
    }

    @Override
    public void close() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("db-bulkhead '" + workload.bulkheadName() + "', workload '"
                    + workload.name() + "': a lease is released by the thread that acquired it (" + thread
                    + "), not by " + Thread.currentThread() + "; nothing was released");
        }
        if (released) { // the field, not released(): no call before closing is set
            return;
        }
        closing = true; // a field write before any call: see finishClose()
        boolean report = !reported && timed;
        reported = true;
        long now = report || holds != null ? telemetry.now() : 0; // one clock read for both
        long held = now - grantedAt;
        if (report) {
            telemetry.finished(workload, Outcome.RELEASED, permitWaitNanos, 0, held, 0);
        }
        permits.exit(this);
        if (holds != null) { // after the permits are back: this may decide a new adaptive limit and report it
            holds.record(held, overloaded, now);
        }
    }

    /**
     * A {@link #close()} that a stack overflow interrupted before both permits were back (the caller's code between
     * acquire and close used up its stack), or an admission that failed so after taking them ({@link #failed}), is
     * finished by the thread's next call to the barrier, at whatever depth that is, instead of being taken for
     * re-entry. Idempotent, as {@link Permits#abandon} is.
     *
     * @return true when this lease was being closed and now holds nothing
     */
    boolean finishClose() {
        if (!closing && !failed) {
            return false;
        }
        permits.abandon(this);
        return true;
    }

    @Override
    public String toString() {
        return "Lease[" + workload.bulkheadName() + "/" + workload.name() + (released() ? ", released" : ", held")
                + "]";
    }
}
