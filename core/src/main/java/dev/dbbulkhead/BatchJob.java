package dev.dbbulkhead;

import dev.dbbulkhead.internal.Preconditions;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A batch job that works in chunks through a workload, usually an {@link Priority#ELASTIC} one: each chunk asks for
 * a permit and runs as one transaction with a deadline of its own, so that the job takes the database only a chunk at
 * a time and the barrier can give the room back to regular work between two chunks. A chunk the barrier refuses
 * (no permit in time: the elastic allowance is small while regular workloads need the room) ran nothing: the job
 * pauses and asks again, instead of failing. The pauses start at the workload's recent hold and double up to
 * {@code maxPause}; one chunk admitted resets them.
 *
 * <pre>{@code
 * BatchJob job = BatchJob.of(db.workload("batch"), Duration.ofSeconds(5));
 * long last = 0;
 * while (true) {
 *     long from = last;
 *     Long next = job.chunk(c -> archiveAfter(c, from, 500)); // one transaction of at most 500 rows
 *     if (next == null) break;
 *     last = next;
 * }
 * }</pre>
 *
 * A chunk must be a transaction that can be asked again: one that was rolled back (or never started) leaves nothing
 * behind. {@link #chunk} retries only what ran nothing; an error of the work itself, a deadline that passed inside
 * the transaction (rolled back), or an {@link CommitOutcomeUnknownException} reaches the caller. For code that
 * admits itself (a Spring {@code @DbWorkload} method), {@link #step} paces the calls the same way. Thread-safe: the
 * counters are shared by every thread that runs chunks of this job.
 */
public final class BatchJob {
    /** The first pause when the workload has no recent hold to go by. */
    static final Duration FIRST_PAUSE = Duration.ofMillis(10);
    /**
     * Refusals in a row after which a chunk or step gives up, unless set ({@link #givingUpAfter}): with pauses doubling
     * to the default second, about a minute and a half of asking.
     */
    public static final int DEFAULT_GIVE_UP_AFTER = 100;

    private final Workload workload;
    private final Duration chunkDeadline;
    private final Duration maxPause;
    private final int giveUpAfter;
    private final AtomicLong chunks = new AtomicLong();
    private final AtomicLong slowdowns = new AtomicLong();
    private final AtomicLong pausedNanos = new AtomicLong();
    /** Refusals since the last chunk admitted. */
    private final AtomicLong streak = new AtomicLong();

    private BatchJob(Workload workload, Duration chunkDeadline, Duration maxPause, int giveUpAfter) {
        this.workload = Preconditions.notNull(workload, "workload");
        this.chunkDeadline = Preconditions.positive(chunkDeadline, "chunkDeadline");
        this.maxPause = Preconditions.positive(maxPause, "maxPause");
        if (giveUpAfter < 1) {
            throw new IllegalArgumentException("giveUpAfter must be >= 1, was " + giveUpAfter);
        }
        this.giveUpAfter = giveUpAfter;
    }

    /** A job whose chunks run on {@code workload}, each within {@code chunkDeadline}; pauses up to one second. */
    public static BatchJob of(Workload workload, Duration chunkDeadline) {
        return new BatchJob(workload, chunkDeadline, Duration.ofSeconds(1), DEFAULT_GIVE_UP_AFTER);
    }

    /**
     * A job whose chunks run on {@code workload}, each within {@code chunkDeadline}, pausing up to {@code maxPause}.
     */
    public static BatchJob of(Workload workload, Duration chunkDeadline, Duration maxPause) {
        return new BatchJob(workload, chunkDeadline, maxPause, DEFAULT_GIVE_UP_AFTER);
    }

    /**
     * This job, its chunks and steps giving up after {@code refusals} refusals in a row (at least 1; default
     * {@value #DEFAULT_GIVE_UP_AFTER}): a step that can never be admitted (its own deadline already passed) then ends
     * instead of asking forever. Its counters start again at zero.
     */
    public BatchJob givingUpAfter(int refusals) {
        return new BatchJob(workload, chunkDeadline, maxPause, refusals);
    }

    /**
     * Runs one chunk: {@code work} in one transaction on the job's workload, bounded by the chunk deadline from its
     * call. Refused before it ran (no permit within the deadline, or refused at once), it pauses and asks again until
     * admitted, at most {@link #givingUpAfter} refusals in a row.
     *
     * @throws RejectedExecutionException refused that many times in a row: names the job, the refusals, the time spent
     *     and the last reason; its cause is the last refusal. Nothing of this chunk ran
     * @throws SQLException what the work or the database raised; the transaction was rolled back (or its commit's
     *     outcome is unknown: {@link CommitOutcomeUnknownException})
     * @throws DeadlineExceededException the deadline passed inside the transaction, which was rolled back
     * @throws InterruptedException interrupted while waiting for a permit or pausing; nothing of this chunk committed
     */
    public <T extends @Nullable Object> T chunk(SqlWork<T> work) throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        return paced(() -> workload.transaction(Deadline.in(chunkDeadline), work));
    }

    /**
     * Runs one step that admits itself (a method annotated {@code @DbWorkload}, a {@code transaction()} of its own):
     * when it is refused before it ran, the job pauses and calls it again until it is admitted, at most
     * {@link #givingUpAfter} refusals in a row.
     *
     * @throws Exception what the step threw, but a refusal that ran nothing; a {@link RejectedExecutionException} once
     *     it was refused that many times in a row, naming the job, the refusals and the last reason
     */
    public <T extends @Nullable Object> T step(Callable<T> step) throws Exception {
        Preconditions.notNull(step, "step");
        return paced(step::call);
    }

    /** One try of a chunk or a step, throwing what it throws. */
    @FunctionalInterface
    private interface Attempt<T extends @Nullable Object, X extends Exception> {
        T run() throws X, InterruptedException;
    }

    /** {@code attempt} until it is admitted: after each refusal that ran nothing, a pause; at most so many refusals. */
    private <T extends @Nullable Object, X extends Exception> T paced(Attempt<T, X> attempt)
            throws X, InterruptedException {
        long start = System.nanoTime();
        for (int refusals = 1; ; refusals++) {
            try {
                T result = attempt.run();
                chunks.incrementAndGet();
                streak.set(0);
                return result;
            } catch (BulkheadRejectedException refused) {
                if (refusals >= giveUpAfter) {
                    throw gaveUp(refused, refusals, System.nanoTime() - start);
                }
                slowDown(refused);
            }
        }
    }

    private RejectedExecutionException gaveUp(BulkheadRejectedException last, int refusals, long nanos) {
        var e = new RejectedExecutionException(this + " gave up after " + refusals + " refusals in a row in "
                + Duration.ofNanos(nanos).toMillis() + " ms; the last: " + last.reason() + " (" + last.getMessage()
                + "). Nothing of this chunk ran: ask again later, or give the job more room (a larger allowance "
                + "or a deadline that can still be met).");
        e.initCause(last);
        return e;
    }

    /** Pauses after a refusal that ran nothing; rethrows any other. */
    private void slowDown(BulkheadRejectedException refused) throws InterruptedException {
        if (refused instanceof DeadlineExceededException late
                && (late.stage() == DeadlineExceededException.Stage.STATEMENT
                        || late.stage() == DeadlineExceededException.Stage.NO_ANSWER)) {
            throw late; // the work ran: rolled back, but the caller decides whether to ask again
        }
        slowdowns.incrementAndGet();
        long doublings = streak.getAndIncrement();
        long most = maxPause.toNanos();
        long hold = workload.recentHoldTime().toNanos();
        long pause = Math.min(most, hold > 0 ? hold : FIRST_PAUSE.toNanos());
        for (long i = 0; i < doublings && pause < most; i++) {
            pause = Math.min(most, 2 * pause);
        }
        pausedNanos.addAndGet(pause);
        TimeUnit.NANOSECONDS.sleep(pause);
    }

    /** Chunks (or steps) admitted so far. */
    public long chunks() {
        return chunks.get();
    }

    /** How many times the job was told to slow down: refusals that ran nothing, each followed by a pause. */
    public long slowdowns() {
        return slowdowns.get();
    }

    /** The time spent pausing so far. */
    public Duration paused() {
        return Duration.ofNanos(pausedNanos.get());
    }

    @Override
    public String toString() {
        return "BatchJob[workload=" + workload.name() + ", chunkDeadline=" + chunkDeadline + ", chunks=" + chunks()
                + ", slowdowns=" + slowdowns() + "]";
    }
}
