package dev.dbbulkhead.internal;

import dev.dbbulkhead.QueuePolicy;

/**
 * A predicting workload's door: with no permit free, whether a caller can be served in time, and how long it may wait.
 *
 * <p>The expected wait is the caller's place in line over the rate at which permits come back ({@link Drain}). It may
 * wait its queue wait or, with a deadline, what is left of it; a {@code DEADLINE} queue also keeps back the time the
 * caller needs for its own work (the reserve: a high quantile of recent holds), so that nobody is admitted, or kept
 * waiting, to start work it cannot finish. A caller whose chance to start within that is below 1 % (permits coming
 * back at random at the measured rate: {@link StartChance}) is refused at once (a prediction, which admission audits);
 * one admitted waits that long at most, then leaves.
 *
 * <p>A burst that the deadline absorbs is admitted whole. A door that keeps refusing is not looking at a burst but at
 * more demand than the workload serves: while, in the last {@value #OVERLOAD_MILLIS} ms, it has refused anyone or a
 * waiter has left unserved, a {@code DEADLINE} queue sheds newcomers whose expected wait exceeds a short queue delay
 * ({@link #sheddingTargetNanos}: a few permits coming back, 5 ms at least; controlled delay, at the door), so that the callers it serves are fresh, its successes wait
 * little and its refusals are told at once; and a {@code DEADLINE_NEWEST_FIRST} queue also serves the newest waiter
 * first. Nobody already admitted is refused for it, and an admitted caller keeps its whole wait: the target decides
 * who comes in, not how long those inside may wait.
 *
 * <p>Thread-safe; the overload state is one racy timestamp.
 */
final class Door {
    /** The workload is overloaded while its door has refused someone, or a waiter left unserved, within this long. */
    static final long OVERLOAD_MILLIS = 100;
    /** Under overload, newcomers are admitted for a queue delay of at least this long... */
    static final long TARGET_MILLIS = 5;
    /** ...or of this many permits coming back, whichever is longer: enough that a freed permit finds a waiter. */
    static final int TARGET_RELEASES = 4;

    private static final long OVERLOAD_NANOS = OVERLOAD_MILLIS * 1_000_000;
    private static final long TARGET_NANOS = TARGET_MILLIS * 1_000_000;

    private final Drain drain;
    private final Permits permits;
    /** A {@code DEADLINE} queue: the reserve and the overload rules; else the article's queue with prediction. */
    private final boolean deadline;

    private final boolean newestFirst;
    /** When the door last refused someone; 0: never. */
    private volatile long refusedAt;

    Door(Drain drain, Permits permits, QueuePolicy policy) {
        this.drain = drain;
        this.permits = permits;
        this.deadline = policy != QueuePolicy.FIFO;
        this.newestFirst = policy == QueuePolicy.DEADLINE_NEWEST_FIRST;
    }

    /** The wait expected at {@code now} for a caller at the end of the line, under {@code limit}; 0 with a permit free. */
    long expectedWaitNanos(int limit, long now) {
        return drain.expectedWaitNanos(permits.waiting(), permits.available(), limit, now);
    }

    /**
     * Whether a caller at the end of the line at {@code now} almost surely cannot start within {@code allowedNanos}
     * under {@code limit}: its chance is below {@link StartChance#REFUSE_BELOW}. Refusing on the expected wait alone
     * would turn away about half of those whose expected wait is just over what they may wait, and who would be served.
     */
    boolean unlikelyToStart(int limit, long allowedNanos, long now) {
        return drain.unlikelyToStart(permits.waiting(), limit, allowedNanos, now);
    }

    /**
     * How long a caller may wait for a permit, from what it allows ({@code allowedNanos}: its queue wait, or what is
     * left of its deadline when {@code deadlineBinds}): on a {@code DEADLINE} queue, less the reserve for its own work
     * when its deadline binds. Never negative.
     */
    long waitNanos(long allowedNanos, boolean deadlineBinds) {
        return deadline && deadlineBinds ? Math.max(0, allowedNanos - drain.reserveNanos()) : allowedNanos;
    }

    /**
     * Whether the workload is overloaded at {@code now}: its door refused someone, or a waiter left unserved, within
     * the last {@value #OVERLOAD_MILLIS} ms. Always false on the article's queue, which never sheds.
     */
    boolean overloaded(long now) {
        long at = refusedAt;
        return deadline && at != 0 && now - at < OVERLOAD_NANOS;
    }

    /** Serves the newest waiter first while {@code overloaded}, on a {@code DEADLINE_NEWEST_FIRST} queue. */
    void serveNewestFirst(boolean overloaded) {
        if (newestFirst && permits.newestFirst() != overloaded) {
            permits.newestFirst(overloaded);
        }
    }

    /** The queue delay a newcomer is admitted for while the workload is overloaded, under {@code limit}. */
    long sheddingTargetNanos(int limit) {
        return Math.max(TARGET_NANOS, TARGET_RELEASES * drain.meanNanos() / Math.max(1, limit));
    }

    /** A caller was refused at {@code now}, or left the queue unserved: the line is longer than the workload serves. */
    void refused(long now) {
        if (refusedAt != now) {
            refusedAt = now == 0 ? 1 : now;
        }
    }
}
