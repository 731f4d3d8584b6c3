package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A workload's adaptive limit L, between a minimum and B: the most operations completed within a latency budget,
 * with no more concurrency than buys throughput.
 *
 * <p><b>Clock.</b> Decisions are taken on a clock of their own ({@link #tick}, every {@value #TICK_MILLIS} ms from
 * the barrier's scheduler), never by a releasing caller: a window ends on time whether or not anything completes, so
 * a 40 s operation or a lease never closed cannot freeze the limit. A window lasts about {@value #WINDOW_HOLDS} mean
 * holds (at least {@value #MIN_WINDOW_MILLIS} ms, at most {@value #MAX_WINDOW_MILLIS} ms, longer if fewer than
 * {@value #MIN_COMPLETIONS} operations completed); its first quarter, where operations admitted under the previous
 * limit still finish, is not measured.
 *
 * <p><b>Measured per window</b>, as BBR measures a path: the mean hold R (connection wait, statements, commit: where
 * the database shows its latency), the mean time from call to release (permit wait + hold), the permits in use
 * (sampled every tick) and whether the limit bound (every permit in use at most ticks), the overload signals
 * ({@link Overload}). The uncontended hold R₀ is the median of the window means measured at the minimum limit in the
 * last {@value #BASELINE_SECONDS} s (longer for slow operations, below): like BBR's min-RTT, it is measured on a
 * drained path only, so a window at a higher limit, however quiet, never moves it and a long overload cannot make
 * its own queue look normal; a median rather than a minimum, so that it does not creep down as noisy measurements
 * accumulate.
 *
 * <p><b>The rule.</b> With K truly parallel resources (cores, locks) and n > K in flight, R grows as n/K × R₀ while
 * throughput n/R stays at K/R₀; but an operation also spends time outside the resource (round trips, begin, commit),
 * so throughput still rises a little past K. Accepting a hold up to {@code (1 + τ) × R₀} (τ = 1 by default)
 * keeps at least {@code 1 − f/(1 + τ)} of the most throughput any concurrency gives, f being the share of R₀ spent
 * outside the resource, at a hold no worse than twice the uncontended one. So, when the limit binds:
 * <ul>
 * <li>{@code R > (1 + τ) R₀}: L × {@code (1 + τ) R₀ / R} (at most halved) — the concurrency that had the hold
 * at the tolerance;</li>
 * <li>{@code R < (1 + τ/2) R₀}: L + max(1, L/8); by half when {@code R < 1.1 R₀} (nothing queues at all);</li>
 * <li>in between, L stays.</li>
 * </ul>
 * Before that rule, on every window: overload signals from at least {@value #MIN_SIGNALS} operations and 1 in
 * {@value #SIGNAL_SHARE} cut L by a quarter (one bad query never does; the application's own errors never count);
 * a mean time from call to release above the latency target cuts L in proportion (at most by half). The target
 * defaults to half of the time the callers' deadlines allow (a moving average over admissions); callers without a
 * deadline set none. Nothing is changed while the limit does not bind: a workload that leaves permits free says
 * nothing about capacity.
 *
 * <p><b>Measuring R₀ again</b> costs at most a few percent whatever the hold time: every
 * {@value #REMEASURE_WINDOWS} windows (and at least {@value #REMEASURE_SECONDS} s), the limit drops to the minimum
 * until no more than the minimum hold permits (the drain: about one hold; two mean holds at most), then measures
 * {@value #REMEASURE_COMPLETIONS} completions of operations admitted after the drain (or stops at the longer of
 * one and a half times what they take at the last R₀ and {@value #REMEASURE_HOLDS} mean holds, 5 s at most), then
 * goes back. A
 * window in which nothing completed while every permit was held raises L by one: the holders are stuck (a very long
 * operation, a lease never closed), and the worst it can come to is B, the fixed limit's behaviour. Holds below
 * {@value #UNMEASURABLE_NANOS} ns leave L at B: the permits are not where such a workload waits.
 *
 * <p>It starts at B (a database pool's B is already safe: the pool budget) and measures R₀ in its second window.
 * Thread-safe: samples are added atomically by releasing callers; {@link #tick} is called by one thread at a time.
 */
final class AdaptiveLimit {
    /** Told of every change, by the ticking thread. */
    public interface Changes {
        void changed(int from, int to, String cause, long baselineNanos, long latencyNanos);
    }

    static final long TICK_MILLIS = 10;
    static final int WINDOW_HOLDS = 6;
    static final long MIN_WINDOW_MILLIS = 100;
    static final long MAX_WINDOW_MILLIS = 5_000;
    static final int MIN_COMPLETIONS = 20;
    static final double TOLERANCE = Double.parseDouble(System.getProperty("dbbulkhead.adaptive.tolerance", "1.0"));
    static final int MIN_SIGNALS = 2;
    static final int SIGNAL_SHARE = 20;
    static final long UNMEASURABLE_NANOS = 2_000;
    static final int BASELINE_SECONDS = 45;
    static final int REMEASURE_WINDOWS = 50;
    static final int REMEASURE_SECONDS = 20;
    static final int REMEASURE_COMPLETIONS = 30;
    /** A measurement of R₀ may last this many mean holds (at the limit before), if that is longer than it needs. */
    static final int REMEASURE_HOLDS = 4;
    private static final long TICK_NANOS = TICK_MILLIS * 1_000_000;
    private static final long SECOND = 1_000_000_000;
    private static final long MIN_WINDOW_NANOS = MIN_WINDOW_MILLIS * 1_000_000;
    private static final long MAX_WINDOW_NANOS = MAX_WINDOW_MILLIS * 1_000_000;
    private static final VarHandle COUNT;
    private static final VarHandle HOLD;
    private static final VarHandle CALL;
    private static final VarHandle SIGNALS;
    private static final VarHandle BUDGET;
    private static final VarHandle STALE;

    static {
        try {
            var lookup = MethodHandles.lookup();
            COUNT = lookup.findVarHandle(AdaptiveLimit.class, "count", long.class);
            HOLD = lookup.findVarHandle(AdaptiveLimit.class, "holdSum", long.class);
            STALE = lookup.findVarHandle(AdaptiveLimit.class, "stale", int.class);
            CALL = lookup.findVarHandle(AdaptiveLimit.class, "callSum", long.class);
            SIGNALS = lookup.findVarHandle(AdaptiveLimit.class, "signals", long.class);
            BUDGET = lookup.findVarHandle(AdaptiveLimit.class, "budget", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Permits permits;
    private final int min;
    private final int max;
    /** The latency target set by the user, in nanoseconds; 0: half of the callers' budget. */
    private final long target;
    private final Changes changes;

    // Added by releasing callers, during the measured part of a window.
    @SuppressWarnings("unused") // through COUNT
    private volatile long count;
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
    /** Completions still to ignore: operations admitted before a measurement of R₀ began. */
    @SuppressWarnings("unused") // through STALE
    private volatile int stale;

    // The ticking thread's state.
    private double limit;
    /** The limit to go back to after a window at the minimum; 0 when not re-measuring. */
    private double remeasuring;
    private int windowsSinceMeasure;
    private long measuredAt;
    private long windowStart;
    private long windowLength;
    private int windowLimit;
    private int previousWindowLimit;
    /** The length of the last window at the decided limit. */
    private long usualWindow = MIN_WINDOW_NANOS;
    private long settleEnd;
    private long heldSum;
    private int ticks;
    private int bindingTicks;
    private volatile long meanHold;
    private volatile long latency;
    private final long[] history = new long[64];
    private final long[] historyAt = new long[64];
    private int historyNext;
    private volatile long baseline;
    /** {@link #level()}, for callers' threads. */
    private volatile int decided;

    /** One window's measurements. */
    private record Window(double inflight, long meanHold, long meanCall, long completions, long signals,
            boolean binding) {}

    /** @param targetNanos the latency target, or 0 for half of what the callers' deadlines allow */
    public AdaptiveLimit(Permits permits, int min, int max, long targetNanos, long now, Changes changes) {
        this.permits = permits;
        this.min = min;
        this.max = max;
        this.target = targetNanos;
        this.changes = changes;
        this.limit = max;
        this.measuredAt = now;
        // No baseline yet: the second window measures it.
        startWindow(now, MIN_WINDOW_NANOS, 0);
    }

    /**
     * One operation held its permits for {@code holdNanos}, {@code callNanos} after its call; {@code overload}: it
     * failed with an overload signal. Called after its permits are back.
     */
    public void sample(long holdNanos, long callNanos, boolean overload) {
        if (!measuring || stale > 0 && (int) STALE.getAndAdd(this, -1) > 0) {
            return;
        }
        COUNT.getAndAdd(this, 1L);
        HOLD.getAndAdd(this, Math.max(0, holdNanos));
        CALL.getAndAdd(this, Math.max(0, callNanos));
        if (overload) {
            SIGNALS.getAndAdd(this, 1L);
        }
    }

    /** An admitted caller's deadline allows {@code allowedNanos}. */
    public void budget(long allowedNanos) {
        if (allowedNanos <= 0 || allowedNanos == Long.MAX_VALUE || target != 0) {
            return;
        }
        long b = budget; // a racy moving average: a lost update shifts it by one caller's weight
        BUDGET.setOpaque(this, b == 0 ? allowedNanos : b + (allowedNanos - b) / 16);
    }

    /** The latency target in force, in nanoseconds; 0 when none. */
    public long targetNanos() {
        return target != 0 ? target : budget / 2;
    }

    /** Every {@value #TICK_MILLIS} ms: samples the permits in use; at a window's end, decides. */
    public void tick(long now) {
        if (remeasuring != 0) {
            tickRemeasuring(now);
            return;
        }
        if (!measuring && now >= settleEnd) {
            measuring = true;
        }
        if (measuring) {
            heldSum += permits.executing();
            ticks++;
            if (permits.available() == 0) {
                bindingTicks++;
            }
        }
        long elapsed = now - windowStart;
        if (elapsed < windowLength || count < MIN_COMPLETIONS && elapsed < 4 * windowLength) {
            return;
        }
        decide(takeWindow(), now);
    }

    /** Ends the measured part of a window: what the releasing callers added, and the ticks' samples. */
    private Window takeWindow() {
        measuring = false;
        long n = (long) COUNT.getAndSet(this, 0L);
        long holds = (long) HOLD.getAndSet(this, 0L);
        long calls = (long) CALL.getAndSet(this, 0L);
        long overloads = (long) SIGNALS.getAndSet(this, 0L);
        return new Window(ticks == 0 ? 0 : (double) heldSum / ticks, n == 0 ? 0 : holds / n, n == 0 ? 0 : calls / n,
                n, overloads, ticks > 0 && bindingTicks * 2 >= ticks);
    }

    /**
     * At the minimum to measure R₀: first drained (until no more than the minimum hold permits, or two mean holds
     * if holders are stuck), then measured for {@value #REMEASURE_COMPLETIONS} completions, or for as long as they
     * should take, whichever comes first.
     */
    private void tickRemeasuring(long now) {
        long elapsed = now - windowStart;
        if (!measuring) {
            int executing = permits.executing();
            if (executing <= min || elapsed >= windowLength) {
                // Those still running were admitted under contention: their holds are not R₀.
                STALE.setVolatile(this, executing);
                measuring = true;
                windowStart = now;
                // Long enough for the completions wanted if R₀ has not changed, or for a few of the holds seen.
                long wanted = baseline * REMEASURE_COMPLETIONS * 3 / (2 * min);
                windowLength = clampWindow(Math.max(wanted, REMEASURE_HOLDS * meanHold));
            }
            return;
        }
        if (count < REMEASURE_COMPLETIONS && elapsed < windowLength) {
            return;
        }
        Window w = takeWindow();
        STALE.setVolatile(this, 0);
        int from = level();
        if (w.completions() > 0) {
            remember(w.meanHold(), now, true);
        }
        limit = remeasuring;
        remeasuring = 0;
        measuredAt = now;
        windowsSinceMeasure = 0;
        report(from, "uncontended hold measured");
        startWindow(now, usualLength(), 0);
    }

    private void decide(Window w, long now) {
        int from = level();
        if (w.completions() > 0) {
            meanHold = meanHold == 0 ? w.meanHold() : (meanHold + w.meanHold()) / 2;
            latency = w.meanCall();
            // At the minimum for two windows running: drained, so a measurement of R₀ too.
            remember(w.meanHold(), now, windowLimit == min && previousWindowLimit == min);
        }
        String cause = judge(w);
        boolean stale = !baselineCurrent(now);
        if (limit > min && !unmeasurable() && (stale || ++windowsSinceMeasure >= REMEASURE_WINDOWS
                && now - measuredAt >= REMEASURE_SECONDS * SECOND)) {
            remeasuring = limit;
            // Draining takes about one mean hold of the limit left; two at most before measuring anyway.
            startWindow(now, clampWindow(2 * meanHold), min);
            report(from, cause);
            return;
        }
        report(from, cause);
        startWindow(now, usualLength(), 0);
    }

    private long usualLength() {
        return clampWindow(WINDOW_HOLDS * meanHold);
    }

    private static long clampWindow(long nanos) {
        return Math.min(MAX_WINDOW_NANOS, Math.max(MIN_WINDOW_NANOS, nanos));
    }

    private void report(int from, String cause) {
        if (cause != null && level() != from) {
            changes.changed(from, level(), cause, baseline, latency);
        }
    }

    /** The window's verdict on L; the cause of a change, or null. */
    private String judge(Window w) {
        if (w.completions() == 0) {
            if (w.binding() && limit < max) {
                limit = Math.min(max, limit + 1);
                return "nothing completed while every permit was held";
            }
            return null;
        }
        if (unmeasurable()) {
            limit = max;
            return "holds below the clock's resolution";
        }
        if (w.signals() >= MIN_SIGNALS && w.signals() * SIGNAL_SHARE >= w.completions()) {
            limit = Math.max(min, limit * 0.75);
            return "overload signals";
        }
        long t = targetNanos();
        if (t > 0 && w.meanCall() > t) {
            limit = Math.max(min, limit * Math.max(0.5, Math.min(0.9, (double) t / w.meanCall())));
            return "latency target";
        }
        long r0 = baseline;
        if (!w.binding() || r0 == 0) {
            return null; // not using the limit: nothing learnt about capacity
        }
        double ratio = (double) w.meanHold() / r0;
        if (ratio > 1 + TOLERANCE) {
            limit = Math.max(min, Math.min(limit - 1, limit * Math.max(0.5, (1 + TOLERANCE) / ratio)));
            return "hold above tolerance";
        }
        if (ratio < 1 + TOLERANCE / 2 && limit < max) {
            double step = ratio < 1.1 ? Math.max(1, limit / 2) : Math.max(1, limit / 8);
            limit = Math.min(max, limit + step);
            return "hold within tolerance";
        }
        return null;
    }

    private boolean unmeasurable() {
        long hold = meanHold;
        return hold > 0 && hold < UNMEASURABLE_NANOS;
    }

    /** @param forced a limit for this window only (the minimum, to measure R₀), or 0 */
    private void startWindow(long now, long length, int forced) {
        decided = level();
        int l = forced != 0 ? forced : decided;
        previousWindowLimit = windowLimit;
        windowLimit = l;
        if (l != permits.limit()) {
            permits.limit(l);
        }
        windowStart = now;
        windowLength = length;
        if (forced == 0) {
            usualWindow = length;
        }
        // Operations admitted under the previous limit still finish in the first quarter: not measured. (While
        // re-measuring, tickRemeasuring decides when the drain is over and this is not read.)
        settleEnd = now + length / 4;
        heldSum = 0;
        ticks = 0;
        bindingTicks = 0;
        measuring = false;
    }

    /**
     * How long a measurement of R₀ counts: {@value #BASELINE_SECONDS} s, or twice the re-measurement period where
     * windows are long (slow operations), so that re-measuring stays a few percent of the time.
     */
    private long baselineLifetime() {
        return Math.max(BASELINE_SECONDS * SECOND, 2 * Math.max(REMEASURE_SECONDS * SECOND,
                REMEASURE_WINDOWS * usualWindow));
    }

    /** Whether a measurement young enough backs the baseline. */
    private boolean baselineCurrent(long now) {
        for (int i = 0; i < history.length; i++) {
            if (history[i] > 0 && now - historyAt[i] <= baselineLifetime()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Adds a window's mean hold to the baseline's history: always when measured at the minimum or lower than the
     * baseline; the baseline is the lowest of the last {@value #BASELINE_SECONDS} s.
     */
    private void remember(long mean, long now, boolean atMinimum) {
        if (mean <= 0 || !atMinimum) {
            return;
        }
        history[historyNext] = mean;
        historyAt[historyNext] = now;
        historyNext = (historyNext + 1) % history.length;
        long[] current = new long[history.length];
        int n = 0;
        for (int i = 0; i < history.length; i++) {
            if (history[i] > 0 && now - historyAt[i] <= baselineLifetime()) {
                current[n++] = history[i];
            }
        }
        java.util.Arrays.sort(current, 0, n);
        baseline = n % 2 == 1 ? current[n / 2] : (current[n / 2 - 1] + current[n / 2]) / 2;
    }

    public int min() {
        return min;
    }

    /** Sets the limit, as a decision would (tests: a state to start from). */
    void forceForTest(int to) {
        limit = to;
        decided = to;
        permits.limit(to);
    }

    /**
     * The limit that predictive rejection counts on: the one in force, or the decided one while the limit is at the
     * minimum for a measurement of R₀ (a fraction of a second, after which the queue drains at the decided limit;
     * predicting with the minimum refused callers that were then served in time).
     */
    public int predictionLimit() {
        return Math.max(permits.limit(), decided);
    }

    /** The limit the controller has decided (during a re-measurement of R₀ the limit in force is the minimum). */
    public int level() {
        return (int) Math.round(limit);
    }

    /** The period of {@link #tick}, in nanoseconds. */
    public static long tickNanos() {
        return TICK_NANOS;
    }

    /** R₀: the uncontended mean hold in nanoseconds; 0 before it is first measured. */
    public long baselineNanos() {
        return baseline;
    }

    /** The last window's mean time from call to release, in nanoseconds: 0 before the first window. */
    public long latencyNanos() {
        return latency;
    }
}
