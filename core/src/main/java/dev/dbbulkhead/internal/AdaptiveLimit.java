package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.SplittableRandom;

/**
 * A workload's adaptive limit L, between a minimum and B: the machinery around its algorithm ({@link GoodputLimit}).
 * It measures windows on the barrier's clock, hands each window to the algorithm, and keeps the limit it answers
 * ({@link #wanted()}), which the workload's {@link Controls} apply to its {@link Permits}.
 *
 * <p><b>Clock.</b> Decisions are taken on {@link #tick}, every {@link BarrierClock#TICK_MILLIS} ms from the barrier's
 * clock, never by a releasing caller: a window ends on time whether or not anything completes, so a 40 s operation or a
 * lease never closed cannot freeze the limit. A window lasts about {@value #WINDOW_HOLDS} mean holds (at least
 * {@value #MIN_WINDOW_MILLIS} ms, at most {@value #MAX_WINDOW_MILLIS} ms, and up to four times longer while fewer than
 * {@value #MIN_COMPLETIONS} operations completed). Its first quarter, where operations admitted under the previous
 * limit still finish, is not measured: what a window measures is what its own limit did.
 *
 * <p><b>Measured</b>, from the releases of the measured part: completions, those within their caller's deadline
 * (all of them for callers without one), the mean time from call to release, overload signals ({@link Overload}); and
 * from the ticks, whether the limit bound (every permit in use in at least half of them). Holds below
 * {@value #UNMEASURABLE_NANOS} ns leave L at B: the permits are not where such a workload waits. The latency ceiling
 * is the target set, or half of what the admitted callers' deadlines allow (a moving average over admissions).
 *
 * <p>It starts at B. Thread-safe: samples are added atomically by releasing callers; {@link #tick} is called by one
 * thread at a time.
 */
final class AdaptiveLimit {
    /** Told of every change of the level, by the ticking thread. */
    interface Changes {
        void changed(int from, int to, String cause, long latencyNanos);
    }

    /** A window lasts this many mean holds... */
    static final int WINDOW_HOLDS = 6;
    /** ...but at least this long... */
    static final long MIN_WINDOW_MILLIS = 100;
    /** ...and at most this long. */
    static final long MAX_WINDOW_MILLIS = 5_000;
    /**
     * A window is stretched (up to four times) until this many operations completed in its measured part: fewer make a
     * goodput too noisy to compare (tens of completions: ±15-20 %).
     */
    static final int MIN_COMPLETIONS = 64;
    /** Holds shorter than this leave L at B. */
    static final long UNMEASURABLE_NANOS = 2_000;

    private static final long MIN_WINDOW_NANOS = MIN_WINDOW_MILLIS * 1_000_000;
    private static final long MAX_WINDOW_NANOS = MAX_WINDOW_MILLIS * 1_000_000;
    private static final VarHandle COUNT;
    private static final VarHandle IN_TIME;
    private static final VarHandle HOLD;
    private static final VarHandle CALL;
    private static final VarHandle SIGNALS;
    private static final VarHandle BUDGET;

    static {
        try {
            var lookup = MethodHandles.lookup();
            COUNT = lookup.findVarHandle(AdaptiveLimit.class, "count", long.class);
            IN_TIME = lookup.findVarHandle(AdaptiveLimit.class, "inTime", long.class);
            HOLD = lookup.findVarHandle(AdaptiveLimit.class, "holdSum", long.class);
            CALL = lookup.findVarHandle(AdaptiveLimit.class, "callSum", long.class);
            SIGNALS = lookup.findVarHandle(AdaptiveLimit.class, "signals", long.class);
            BUDGET = lookup.findVarHandle(AdaptiveLimit.class, "budget", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Permits permits;
    private final int max;
    /** The latency ceiling set by the user, in nanoseconds; 0: half of the callers' budget. */
    private final long target;

    private final Changes changes;
    private final GoodputLimit rule;

    // Added by releasing callers, during the measured part of a window.
    @SuppressWarnings("unused") // through COUNT
    private volatile long count;

    @SuppressWarnings("unused") // through IN_TIME
    private volatile long inTime;

    @SuppressWarnings("unused") // through HOLD
    private volatile long holdSum;

    @SuppressWarnings("unused") // through CALL
    private volatile long callSum;

    @SuppressWarnings("unused") // through SIGNALS
    private volatile long signals;
    /** Moving average of the time admitted callers' deadlines allow; 0: none seen. */
    @SuppressWarnings("unused") // through BUDGET
    private volatile long budget;

    private volatile boolean measuring;

    // The ticking thread's state.
    private long windowStart;
    private long windowLength;
    private long settleEnd;
    private int ticks;
    private int bindingTicks;
    private volatile long meanHold;
    private volatile long latency;
    /** {@link GoodputLimit#level()}, for callers' threads. */
    private volatile int level;
    /** The limit the last decision asks for: the level, or one step away while a probe runs. */
    private volatile int wanted;

    /**
     * @param targetNanos the latency ceiling, or 0 for half of what the callers' deadlines allow
     * @param seed the seed of the probes' jitter
     */
    AdaptiveLimit(Permits permits, int min, int max, long targetNanos, long now, long seed, Changes changes) {
        this.permits = permits;
        this.max = max;
        this.target = targetNanos;
        this.changes = changes;
        this.rule = new GoodputLimit(min, max, new SplittableRandom(seed));
        this.level = max;
        this.wanted = max;
        startWindow(now, MIN_WINDOW_NANOS);
    }

    /**
     * One operation held its permits for {@code holdNanos}, {@code callNanos} after its call; {@code inTime}: it ended
     * within its deadline (or had none); {@code overload}: it failed with an overload signal. Called after its permits
     * are back.
     */
    void sample(long holdNanos, long callNanos, boolean inTime, boolean overload) {
        if (!measuring) {
            return;
        }
        COUNT.getAndAdd(this, 1L);
        if (inTime && !overload) {
            IN_TIME.getAndAdd(this, 1L);
        }
        HOLD.getAndAdd(this, Math.max(0, holdNanos));
        CALL.getAndAdd(this, Math.max(0, callNanos));
        if (overload) {
            SIGNALS.getAndAdd(this, 1L);
        }
    }

    /** An admitted caller's deadline allows {@code allowedNanos}. */
    void budget(long allowedNanos) {
        if (allowedNanos <= 0 || allowedNanos == Long.MAX_VALUE || target != 0) {
            return;
        }
        long b = budget; // a racy moving average: a lost update shifts it by one caller's weight
        BUDGET.setOpaque(this, b == 0 ? allowedNanos : b + (allowedNanos - b) / 16);
    }

    /** The latency ceiling in force, in nanoseconds; 0 when none. */
    long targetNanos() {
        return target != 0 ? target : budget / 2;
    }

    /** Every tick of the barrier's clock: samples whether the limit binds; at a window's end, decides. */
    void tick(long now) {
        if (!measuring && now >= settleEnd) {
            measuring = true;
        }
        if (measuring) {
            ticks++;
            if (permits.available() == 0) {
                bindingTicks++;
            }
        }
        long elapsed = now - windowStart;
        if (elapsed < windowLength || (count < MIN_COMPLETIONS && elapsed < 4 * windowLength)) {
            return;
        }
        decide(takeWindow(now), now);
    }

    /** Ends the measured part of a window: what the releasing callers added, and the ticks' samples. */
    private GoodputLimit.Window takeWindow(long now) {
        measuring = false;
        long n = (long) COUNT.getAndSet(this, 0L);
        long timely = (long) IN_TIME.getAndSet(this, 0L);
        long holds = (long) HOLD.getAndSet(this, 0L);
        long calls = (long) CALL.getAndSet(this, 0L);
        long overloads = (long) SIGNALS.getAndSet(this, 0L);
        if (n > 0) {
            long hold = holds / n;
            meanHold = meanHold == 0 ? hold : (meanHold + hold) / 2;
            latency = calls / n;
        }
        double seconds = Math.max(1, now - settleEnd) / 1e9;
        return new GoodputLimit.Window(
                permits.limit(),
                n,
                timely / seconds,
                n == 0 ? 0 : calls / n,
                overloads,
                ticks > 0 && bindingTicks * 2 >= ticks);
    }

    private void decide(GoodputLimit.Window w, long now) {
        int from = level;
        int next;
        String cause;
        if (meanHold > 0 && meanHold < UNMEASURABLE_NANOS) {
            next = max;
            cause = from == max ? null : "holds below the clock's resolution";
        } else {
            var decision = rule.next(w, targetNanos());
            next = decision.limit();
            cause = decision.cause();
        }
        level = rule.level();
        wanted = next;
        if (cause != null && level != from) {
            changes.changed(from, level, cause, latency);
        }
        startWindow(now, Math.min(MAX_WINDOW_NANOS, Math.max(MIN_WINDOW_NANOS, WINDOW_HOLDS * meanHold)));
    }

    private void startWindow(long now, long length) {
        windowStart = now;
        windowLength = length;
        // Operations admitted under the previous limit still finish in the first quarter: not measured.
        settleEnd = now + length / 4;
        ticks = 0;
        bindingTicks = 0;
        measuring = false;
    }

    /**
     * The limit that predictive rejection counts on: the one in force, or the level while a probe below it runs (one
     * window, after which the queue drains at the level again).
     */
    int predictionLimit() {
        return Math.max(permits.limit(), level);
    }

    /** The level the controller has decided (while a probe runs, the limit in force is one step away). */
    int level() {
        return level;
    }

    /** The limit the last decision asks for: the level, or one step away from it while a probe runs. */
    int wanted() {
        return wanted;
    }
}
