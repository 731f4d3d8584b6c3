package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A workload's adaptive limit L, between a minimum and B, driven by what the database shows: how long operations
 * hold their permits (connection wait, statements and commit; never the wait for a permit), and the errors that
 * only an overloaded database gives. One decision per window of at least {@value #WINDOW_MILLIS} ms and
 * {@link #minSamples(int)} operations, taken by the thread whose release closes the window.
 *
 * <p>Per window: the mean hold time R, the mean number of operations holding permits {@code n = Σ hold / window}
 * (Little's law) and the throughput X. The baseline R₀ is the lowest R, over the last 30 s, of the windows that
 * either lowered it or ran at the minimum limit, so it cannot drift up while the database is overloaded: only
 * windows at the minimum, where nothing queues, can raise it. Every 20 s the limit spends two windows at the
 * minimum (the first lets the operations admitted before drain, the second is measured) and goes back: when the
 * operations themselves got slower (a plan change, a bigger table), the baseline follows within 30 s. From them, Vegas' estimate of the operations queued inside the database,
 * {@code q = n × (1 − R₀/R)}: with K truly parallel resources (cores, locks) and n > K in use, R = n/K × R₀ and
 * q = n − K exactly.
 * <ol>
 * <li>Overload signals (SQLState 57014, 55P03, 40P01, 53300, a pool timeout) from at least 1 in
 * {@value #SIGNAL_SHARE} operations of the window: L × 3/4.</li>
 * <li>A queue ({@code q ≥ max(1, n/8)}): L = round(n × R₀/R), the concurrency the database served without one.
 * (Tolerating a queue of two let noisy probes ratchet L up by half in a 10-minute overload on PostgreSQL, for no
 * measurable goodput.)</li>
 * <li>No queue ({@code q < max(0.5, n/10)}) and the limit used ({@code n ≥ max(L − 1, 0.8 L)}): probe L + 1
 * (doubling until the first decrease);
 * kept only if the next window's throughput followed (a quarter of the proportional gain, at least 3 %), else undone
 * and the next probe
 * waits twice as long (up to {@value #MAX_BACKOFF} windows).</li>
 * </ol>
 * It starts at the minimum, so that the first baseline is measured without a queue. Thread-safe: samples are added
 * atomically; one thread at a time decides, and a sample lost to a race shifts an estimate, never a permit.
 */
public final class AdaptiveLimit {
    /** Told of every change, by the deciding thread. */
    public interface Changes {
        void changed(int from, int to, String cause, long baselineNanos, long latencyNanos);
    }

    static final long WINDOW_MILLIS = 200;
    static final int HISTORY = 50;
    static final int MAX_BACKOFF = 16;
    /** How often the baseline is measured again at the minimum limit (two windows, about 1 % of the time). */
    static final long MEASURE_EVERY_NANOS = 20_000_000_000L;
    /** How long a window's mean counts for the baseline. */
    static final long HISTORY_NANOS = 30_000_000_000L;
    /**
     * An overload signal counts when at least 1 in this many operations of the window gave one: a deadline cancels
     * now and then the statement of a caller admitted at the margin, which says nothing about the database.
     */
    static final int SIGNAL_SHARE = 20;
    private static final long WINDOW_NANOS = WINDOW_MILLIS * 1_000_000;
    private static final VarHandle COUNT;
    private static final VarHandle SUM;
    private static final VarHandle SIGNALS;
    private static final VarHandle BUSY;

    static {
        try {
            var lookup = MethodHandles.lookup();
            COUNT = lookup.findVarHandle(AdaptiveLimit.class, "count", long.class);
            SUM = lookup.findVarHandle(AdaptiveLimit.class, "sum", long.class);
            SIGNALS = lookup.findVarHandle(AdaptiveLimit.class, "signals", long.class);
            BUSY = lookup.findVarHandle(AdaptiveLimit.class, "busy", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Permits permits;
    private final int min;
    private final int max;
    private final Changes changes;

    @SuppressWarnings("unused") // through COUNT
    private volatile long count;
    @SuppressWarnings("unused") // through SUM
    private volatile long sum;
    @SuppressWarnings("unused") // through SIGNALS
    private volatile long signals;
    @SuppressWarnings("unused") // through BUSY
    private volatile int busy;
    private volatile long windowStart;

    // The deciding thread's state (one at a time, under BUSY).
    private final long[] history = new long[HISTORY];
    private final long[] historyAt = new long[HISTORY];
    /** The limit to go back to after the baseline's measurement at the minimum; 0 when not measuring. */
    private int measuring;
    private int measuringWindows;
    private long measuredAt;
    private int historySize;
    private int historyNext;
    private volatile long baseline;
    private volatile long latency;
    private boolean slowStart = true;
    private int backoff = 1;
    private int windowsToProbe = 1;
    private int probedFrom; // 0: not probing
    private double throughputBefore;

    public AdaptiveLimit(Permits permits, int min, int max, long now, Changes changes) {
        this.permits = permits;
        this.min = min;
        this.max = max;
        this.changes = changes;
        this.windowStart = now;
        this.measuredAt = now;
        permits.limit(min);
    }

    /** Operations a window needs before it is judged: enough for a mean, and a few per permit. */
    static int minSamples(int limit) {
        return Math.max(10, 2 * limit);
    }

    /** One operation held its permits for {@code holdNanos}; {@code overload}: it failed with an overload signal. */
    public void sample(long holdNanos, boolean overload, long now) {
        COUNT.getAndAdd(this, 1L);
        SUM.getAndAdd(this, Math.max(0, holdNanos));
        if (overload) {
            SIGNALS.getAndAdd(this, 1L);
        }
        long start = windowStart;
        if (now - start >= WINDOW_NANOS && (count >= minSamples(permits.limit()) || signals > 0)
                && BUSY.compareAndSet(this, 0, 1)) {
            try {
                if (windowStart == start) {
                    windowStart = now;
                    decide(now - start, now);
                }
            } finally {
                busy = 0; // a field write: the decider's flag goes back even if deciding failed
            }
        }
    }

    private void decide(long elapsed, long now) {
        long n = (long) COUNT.getAndSet(this, 0L);
        long total = (long) SUM.getAndSet(this, 0L);
        long overloads = (long) SIGNALS.getAndSet(this, 0L);
        if (n == 0) {
            return;
        }
        int limit = permits.limit();
        long mean = total / n;
        latency = mean;
        double inflight = (double) total / elapsed;
        double throughput = n * 1e9 / elapsed;
        if (overloads > 0 && overloads * SIGNAL_SHARE >= n) {
            // During a baseline measurement, cut from the limit it would go back to, and end it.
            int from = measuring != 0 ? measuring : limit;
            if (measuring != 0) {
                measuring = 0;
                measuredAt = now;
            }
            probedFrom = 0;
            slowStart = false;
            waitLonger();
            change(limit, Math.max(min, Math.min(from - 1, from * 3 / 4)), "overload signal");
            return;
        }
        if (measuring != 0 && settleMeasuring(limit, mean, now)) {
            return;
        }
        // Lower means always enter the baseline; higher ones only from the minimum limit, where nothing queues: a
        // window "without a queue" at a higher limit is judged against the baseline itself, and letting it in made
        // the baseline (and the limit) creep up by half in a 10-minute overload on PostgreSQL.
        if (baseline == 0 || mean < baseline || limit == min) {
            remember(mean, now);
        }
        if (limit > min && now - measuredAt >= MEASURE_EVERY_NANOS) {
            measuring = limit; // the baseline's periodic measurement: two windows at the minimum, then back
            measuringWindows = 0;
            probedFrom = 0;
            change(limit, min, "baseline measurement");
            return;
        }
        double gradient = Math.min(1, (double) baseline / Math.max(1, mean));
        double queue = inflight * (1 - gradient);
        if (probedFrom != 0) {
            int from = probedFrom;
            probedFrom = 0;
            // Kept if throughput grew by a quarter of the proportional gain (and more than the noise of a window).
            double expectedGain = (double) (limit - from) / from;
            if (throughput < throughputBefore * (1 + Math.max(0.03, expectedGain / 4))) {
                slowStart = false;
                waitLonger();
                change(limit, from, "probe: throughput did not follow");
                return;
            }
            backoff = 1;
        }
        if (queue >= Math.max(1, inflight / 8)) {
            slowStart = false;
            windowsToProbe = backoff;
            change(limit, Math.max(min, Math.min(limit - 1, (int) Math.round(inflight * gradient))), "queue");
            return;
        }
        boolean used = inflight >= Math.max(limit - 1, 0.8 * limit);
        if (used && limit < max && queue < Math.max(0.5, inflight / 10) && --windowsToProbe <= 0) {
            probedFrom = limit;
            throughputBefore = throughput;
            windowsToProbe = 1;
            change(limit, Math.min(max, limit + (slowStart ? limit : Math.max(1, limit / 8))), "probe");
        }
    }

    private void waitLonger() {
        backoff = Math.min(MAX_BACKOFF, backoff * 2);
        windowsToProbe = backoff;
    }

    /**
     * During the baseline's measurement: the first window at the minimum only lets the operations admitted at the
     * old limit finish; the second is measured, and the limit goes back to where it was. True while measuring.
     */
    private boolean settleMeasuring(int limit, long mean, long now) {
        if (++measuringWindows < 2) {
            return true;
        }
        int back = measuring;
        measuring = 0;
        measuredAt = now;
        remember(mean, now);
        change(limit, back, "baseline measured");
        return true;
    }

    /** Adds a window's mean; the baseline is the lowest of the last {@value #HISTORY} that are under 30 s old. */
    private void remember(long mean, long now) {
        history[historyNext] = mean;
        historyAt[historyNext] = now;
        historyNext = (historyNext + 1) % HISTORY;
        historySize = Math.min(HISTORY, historySize + 1);
        long lowest = mean;
        for (int i = 0; i < historySize; i++) {
            if (now - historyAt[i] <= HISTORY_NANOS) {
                lowest = Math.min(lowest, history[i]);
            }
        }
        baseline = lowest;
    }

    private void change(int from, int to, String cause) {
        if (to == from) {
            return;
        }
        permits.limit(to);
        changes.changed(from, to, cause, baseline, latency);
    }

    public int min() {
        return min;
    }

    /** The baseline hold time in nanoseconds: 0 before the first window. */
    public long baselineNanos() {
        return baseline;
    }

    /** The last window's mean hold time in nanoseconds: 0 before the first window. */
    public long latencyNanos() {
        return latency;
    }
}
