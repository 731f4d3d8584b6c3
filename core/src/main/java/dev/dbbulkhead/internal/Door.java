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
 * <p>A burst that the deadline absorbs is admitted whole, and so is a closed loop of callers whose wait (their number
 * over the rate permits come back) fits in what they may wait: that line is long, but it serves everyone in time. A
 * door that keeps refusing is looking at more demand than the workload serves: while, in the last
 * {@value #OVERLOAD_MILLIS} ms, it has refused anyone or a waiter has left unserved, a {@code DEADLINE} queue sheds a
 * newcomer whose expected wait (the mean, not the 1 % chance) is longer than it may wait, since an even chance of
 * being served late is then most of the line's. Nobody whose expected wait fits is refused, overloaded or not
 * (2026-12-07: shedding beyond a 5 ms queue delay refused callers the bare pool served in time, and their clients came
 * straight back).
 *
 * <p>Thread-safe; the overload state is one racy timestamp.
 */
final class Door {
    /** The workload is overloaded while its door has refused someone, or a waiter left unserved, within this long. */
    static final long OVERLOAD_MILLIS = 100;

    private static final long OVERLOAD_NANOS = OVERLOAD_MILLIS * 1_000_000;

    private final Drain drain;
    private final Permits permits;
    /** A {@code DEADLINE} queue: the reserve and the overload rules; else the article's queue with prediction. */
    private final boolean deadline;
    /** When the door last refused someone; 0: never. */
    private volatile long refusedAt;

    Door(Drain drain, Permits permits, QueuePolicy policy) {
        this.drain = drain;
        this.permits = permits;
        this.deadline = policy != QueuePolicy.FIFO;
    }

    /**
     * The wait expected at {@code now} for a caller at the end of the line, under {@code limit}; 0 with a permit free.
     */
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

    /** A caller was refused at {@code now}, or left the queue unserved: the line is longer than the workload serves. */
    void refused(long now) {
        if (refusedAt != now) {
            refusedAt = now == 0 ? 1 : now;
        }
    }
}
