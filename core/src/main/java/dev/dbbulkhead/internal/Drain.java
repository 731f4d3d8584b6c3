package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * How a workload's permits come back: the mean permit hold of its recent operations (and with the limit L, by Little's
 * law, the rate at which permits free up: L / mean), and the reserve, the time a caller needs left for its own work
 * once it starts: a high quantile of those holds and a margin. Fed by every release of a workload that predicts; read
 * at admission.
 *
 * <p>Windows of {@value #WINDOW_HOLDS} holds (or {@value #WINDOW_MILLIS} ms with at least {@value #MIN_HOLDS} holds)
 * each give a mean, smoothed across windows (a quarter per window): a mean over many operations, so that one long
 * operation among short ones moves it by its share only. The quantile is read at each window's end from the last
 * {@value #RECENT} holds. Before the first hold ends (a burst on a new barrier), the time the first permit has been
 * held so far stands in for the mean: a lower bound that grows until the first release.
 *
 * <p>Thread-safe: holds are added with atomic adds, the window is closed by the one release that wins a CAS; a sample
 * lost to a race shifts an estimate, never a permit.
 */
final class Drain {
    /** Holds per window. */
    static final int WINDOW_HOLDS = 64;
    /** A window also ends after this long, if it has {@value #MIN_HOLDS} holds: slow workloads still update. */
    static final long WINDOW_MILLIS = 250;

    static final int MIN_HOLDS = 4;
    /** How many recent holds the quantile is read from (a power of two). */
    static final int RECENT = 256;
    /** The quantile of recent holds reserved for a caller's own work... */
    static final double RESERVE_QUANTILE = 0.95;
    /**
     * ...and this much more: a hold starts when the caller runs with its permit, so the time between a grant and the
     * waiter running (its wake-up, on a busy machine) and the first statement's set-up are not in it.
     */
    static final double RESERVE_MARGIN = 1.25;

    private static final long WINDOW_NANOS = WINDOW_MILLIS * 1_000_000;
    private static final VarHandle COUNT;
    private static final VarHandle SUM;
    private static final VarHandle NEXT;
    private static final VarHandle WINDOW_START;

    static {
        try {
            var lookup = MethodHandles.lookup();
            COUNT = lookup.findVarHandle(Drain.class, "count", long.class);
            SUM = lookup.findVarHandle(Drain.class, "sum", long.class);
            NEXT = lookup.findVarHandle(Drain.class, "next", int.class);
            WINDOW_START = lookup.findVarHandle(Drain.class, "windowStart", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long[] recent = new long[RECENT];

    @SuppressWarnings("unused") // through NEXT
    private volatile int next;

    @SuppressWarnings("unused") // through COUNT
    private volatile long count;

    @SuppressWarnings("unused") // through SUM
    private volatile long sum;

    private volatile long windowStart;
    private volatile long mean; // 0: no window closed yet
    private volatile long reserve;
    private volatile long firstGrantAt; // 0: no permit granted yet

    /** A permit was granted at {@code now}: until the first release, the cold start's reference. */
    void granted(long now) {
        if (firstGrantAt == 0 && mean == 0 && count == 0) {
            firstGrantAt = now == 0 ? 1 : now; // racy: any of the first grants will do
        }
    }

    /** An operation held its permits for {@code holdNanos}, released at {@code now}. */
    void record(long holdNanos, long now) {
        if (holdNanos <= 0) {
            return;
        }
        recent[(int) NEXT.getAndAdd(this, 1) & (RECENT - 1)] = holdNanos;
        long n = (long) COUNT.getAndAdd(this, 1L) + 1;
        SUM.getAndAdd(this, holdNanos);
        long start = windowStart;
        if (start == 0) {
            WINDOW_START.compareAndSet(this, 0L, now);
        } else if ((n >= WINDOW_HOLDS || (n >= MIN_HOLDS && now - start >= WINDOW_NANOS))
                && WINDOW_START.compareAndSet(this, start, now)) {
            closeWindow();
        }
    }

    private void closeWindow() {
        long n = (long) COUNT.getAndSet(this, 0L);
        long total = (long) SUM.getAndSet(this, 0L);
        if (n == 0) {
            return;
        }
        long windowMean = total / n;
        long m = mean;
        mean = m == 0 ? windowMean : m + (windowMean - m) / 4;
        int written = next;
        int filled = written < 0 || written > RECENT ? RECENT : written; // < 0: the index wrapped around
        long[] sorted = Arrays.copyOf(recent, filled);
        Arrays.sort(sorted);
        reserve = (long) (RESERVE_MARGIN * sorted[Math.min(filled - 1, (int) (RESERVE_QUANTILE * filled))]);
    }

    /** The mean hold in nanoseconds, 0 before any operation (see {@link #expectedWaitNanos} for the cold start). */
    long meanNanos() {
        long m = mean;
        if (m != 0) {
            return m;
        }
        long n = count;
        return n == 0 ? 0 : sum / n; // the first window, still open
    }

    /** The time a caller needs left for its own work: a high quantile of recent holds and a margin; 0 before any. */
    long reserveNanos() {
        long r = reserve;
        return r != 0 ? r : meanNanos();
    }

    /**
     * The expected wait of a caller arriving at {@code now} behind {@code queued} waiters, with {@code free} of
     * {@code limit} execution permits free: none with a free permit; else the time for {@code queued + 1} permits to
     * come back at {@code limit / mean} per nanosecond.
     */
    long expectedWaitNanos(int queued, int free, int limit, long now) {
        return free > 0 ? 0 : Nanos.saturatedMultiply(holdNanos(now), queued + 1L) / Math.max(1, limit);
    }

    /**
     * Whether a caller arriving at {@code now} behind {@code queued} waiters, with no permit free, has a chance below
     * {@link StartChance#REFUSE_BELOW} to start within {@code withinNanos}: permits coming back at {@code limit / mean}
     * per nanosecond, one at a time and at random ({@link StartChance}).
     */
    boolean unlikelyToStart(int queued, int limit, long withinNanos, long now) {
        long hold = holdNanos(now);
        if (hold == 0) {
            return false; // nothing to predict from
        }
        return StartChance.unlikely(queued + 1, (double) withinNanos * Math.max(1, limit) / hold);
    }

    /** The mean hold; before any release, how long the first permit has been held so far (0: none granted yet). */
    private long holdNanos(long now) {
        long hold = meanNanos();
        if (hold != 0) {
            return hold;
        }
        long first = firstGrantAt;
        return first == 0 ? 0 : Math.max(0, now - first);
    }
}
