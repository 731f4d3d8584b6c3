package dev.dbbulkhead.internal;

import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * The adaptive limit's algorithm, apart from the machinery that samples and applies it ({@link AdaptiveLimit}): given
 * what one window measured, the limit for the next window. A pure function of its inputs and its own state; no clock,
 * no threads, no permits. Its objective is completions within the deadline.
 *
 * <p><b>Probes.</b> The limit sits at a level L. Now and then it probes: a window at L ± Δ (Δ = a fifth of L, at least
 * 1) between two windows at L, and the probe's goodput against the mean of the two around it, which cancels a drift in
 * the load. A probe is one window one step away: never a drop to the minimum. One probe says little (a window of tens
 * of completions is noisy by several percent, more than the slope near the top), so each direction's results at this
 * level are averaged, and L moves only when the mean clears its threshold by a standard error (of the probes, and at
 * least of the noise measured between the two references around each; one probe is enough upwards when it clears it by
 * two, as when capacity returns):
 * <ul>
 * <li>up (L + Δ) when more in flight completed at least {@value #GAIN} more in time;</li>
 * <li>down (L − Δ) when fewer in flight completed at most {@value #LOSS} fewer, than the level and than the peak of
 * this regime (the highest the references came to since the last change), so that small steps down a shallow slope
 * cannot add up (a load that falls slowly, by less than a change, leaves L higher than it needs: the safe side): the
 * fewest in flight that give the most completions, so that
 * latency and the database's load are not spent for nothing.</li>
 * </ul>
 * Down also moves when {@value #SETTLED_PROBES} probes lose no more than half the bound on average (a flat curve,
 * whose noise the mean of a few windows cannot beat). A direction whose mean clears the opposite bound, or that has had
 * {@value #MAX_PROBES} probes, gives way to the
 * other. Where neither moves (the top of a flat curve), the wait between probes doubles, up to {@value #MAX_BACKOFF}
 * windows (plus one at random), so that a settled limit pays for few probes. A move in the same direction as the last
 * takes a step twice as long (downwards only while exploring after a change: when the references moved by
 * {@value #CHANGED} or more, the load or the capacity changed, and evidence and waits start again). Only windows where
 * the limit bound (every permit in use most of the time) count: a workload that leaves permits free says nothing about
 * capacity.
 *
 * <p><b>Before probes, every window:</b> overload signals from at least {@value #MIN_SIGNALS} operations and 1 in
 * {@value #SIGNAL_SHARE} (saturation only: {@link Overload}) cut L by a quarter; a mean time from call to release above
 * the latency ceiling (half of what the callers' deadlines allow, or a target set) cuts it in proportion, by half at
 * most; a window in which nothing completed while every permit was held raises it by one (the holders are stuck: a
 * very long operation, a lease never closed), up to B. Any of these ends a probe in progress and clears the evidence.
 *
 * <p>Not thread-safe: one controller calls it, one window at a time.
 */
final class GoodputLimit {
    /** L goes up when more in flight completed at least this share more within the deadline... */
    static final double GAIN = 0.01;
    /** ...and down when fewer in flight completed at most this share fewer... */
    static final double LOSS = 0.01;
    /** ...the mean of at least this many probes in that direction clearing the bound by a standard error... */
    static final int MIN_PROBES = 2;
    /**
     * A down move also needs no standard error once this many probes agree on average: a flat curve proves "no loss"
     * by the mean only (half the bound), never by a noise that the mean of a few windows cannot beat.
     */
    static final int SETTLED_PROBES = 4;
    /** ...and a direction with this many probes and no move gives way to the other. */
    static final int MAX_PROBES = 6;
    /** A probe's step, as a share of L (at least 1). */
    static final double STEP = 0.2;
    /** References this far from the last ones, below or above: the load or the capacity changed. */
    static final double CHANGED = 0.2;
    /** The most one pair of references counts for in the noise: a larger spread is a change, not noise. */
    static final double MAX_SPREAD = 0.3;
    /** After a probe that moved nothing, the wait before the next doubles, up to this many windows. */
    static final int MAX_BACKOFF = 8;

    static final int MIN_SIGNALS = 2;
    static final int SIGNAL_SHARE = 20;

    /**
     * What one window measured at the limit {@code limit}: completions (within their deadline: {@code inTime}) per
     * second of its measured part, their mean time from call to release, overload signals, and whether the limit bound.
     */
    record Window(
            int limit, long completions, double inTimePerSecond, long meanCallNanos, long signals, boolean binding) {}

    /** The limit for the next window, and why the level changed ({@code null}: it did not). */
    record Decision(int limit, @Nullable String cause) {}

    private enum Phase {
        BEFORE,
        PROBE,
        AFTER
    }

    /** The probes of one direction at the current level: relative changes of goodput, their mean and spread. */
    private static final class Evidence {
        int n;
        double sum;
        double sumOfSquares;

        void add(double change) {
            n++;
            sum += change;
            sumOfSquares += change * change;
        }

        double mean() {
            return n == 0 ? 0 : sum / n;
        }

        /** The standard error of the mean: the probes' spread, at least {@code floor} (one probe's noise), over √n. */
        double standardError(double floor) {
            double variance = n < 3 ? 0 : Math.max(0, (sumOfSquares - sum * sum / n) / (n - 1));
            return Math.max(Math.sqrt(variance), floor) / Math.sqrt(Math.max(1, n));
        }

        void clear() {
            n = 0;
            sum = 0;
            sumOfSquares = 0;
        }
    }

    private final int min;
    private final int max;
    private final RandomGenerator random;
    private final Evidence upward = new Evidence();
    private final Evidence downward = new Evidence();
    /** Down-probes against the peak of this regime. */
    private final Evidence belowPeak = new Evidence();

    private double level;
    private Phase phase = Phase.BEFORE;
    /** Windows at the level still to go before the next probe's first reference. */
    private int pause;
    /** The pause after a probe that moved nothing: doubles each time, 0 after a move. */
    private int backoff;

    private boolean up;
    private int probeLimit;
    private double before;
    private double probed;
    /** The last references' goodput (a moving average), to notice a change in the load or the capacity. */
    private double recent;
    /** The highest {@link #recent} of this regime; 0 after a change. */
    private double peak;
    /** How much two references around a probe differ, relatively (a moving average): one window's noise. */
    private double noise;
    /** Moves kept in a row in the same direction: each takes a step twice the last, up to half of L. */
    private int momentum;
    /** After a change: steps down may grow too, until a direction gives way. */
    private boolean exploring;

    GoodputLimit(int min, int max, RandomGenerator random) {
        this(min, max, max, random);
    }

    /** Starting at {@code level} rather than at B: a state to start from, as a decision would leave it. */
    GoodputLimit(int min, int max, int level, RandomGenerator random) {
        this.min = min;
        this.max = max;
        this.random = random;
        this.level = level;
    }

    /** The level L (between probes, the limit in force). */
    int level() {
        return (int) Math.round(level);
    }

    /**
     * The next window's limit, from what this one measured; {@code latencyCeilingNanos}: the mean time from call to
     * release above which L is cut (0: none).
     */
    Decision next(Window w, long latencyCeilingNanos) {
        String cause = reflex(w, latencyCeilingNanos);
        if (cause != null) {
            phase = Phase.BEFORE;
            pause = 1;
            startOver(false);
            return new Decision(level(), cause);
        }
        if (!w.binding() && phase != Phase.PROBE) {
            phase = Phase.BEFORE; // nothing learnt about capacity: start the probe again once the limit binds
            return new Decision(level(), null);
        }
        return switch (phase) {
            case BEFORE -> reference(w);
            case PROBE -> probe(w);
            case AFTER -> decide(w);
        };
    }

    /** The rules that act on one window alone; the cause of a change, or null. */
    private @Nullable String reflex(Window w, long ceiling) {
        if (w.completions() == 0) {
            if (w.binding() && level < max) {
                level = Math.min(max, level + 1);
                return "nothing completed while every permit was held";
            }
            return null;
        }
        if (w.signals() >= MIN_SIGNALS && w.signals() * SIGNAL_SHARE >= w.completions()) {
            level = Math.max(min, level * 0.75);
            return "overload signals";
        }
        if (ceiling > 0 && w.meanCallNanos() > ceiling) {
            level = Math.max(min, level * Math.max(0.5, Math.min(0.9, (double) ceiling / w.meanCallNanos())));
            return "latency ceiling";
        }
        return null;
    }

    /** A window at the level: after the pause, the reference before a probe, and the probe's limit next. */
    private Decision reference(Window w) {
        if (pause > 0) {
            pause--;
            return new Decision(level(), null);
        }
        int l = level();
        if (l >= max) {
            up = false;
        } else if (l <= min) {
            up = true;
        }
        int boost = up || exploring ? Math.min(momentum, 4) : 0;
        int step = Math.max(1, Math.min(Math.max(1, l / 2), (int) Math.round(l * STEP) << boost));
        probeLimit = up ? Math.min(max, l + step) : Math.max(min, l - step);
        if (probeLimit == l) {
            return new Decision(l, null);
        }
        before = w.inTimePerSecond();
        phase = Phase.PROBE;
        return new Decision(probeLimit, null);
    }

    private Decision probe(Window w) {
        probed = w.inTimePerSecond();
        phase = Phase.AFTER;
        return new Decision(level(), null);
    }

    /** The window after a probe: the probe against the mean of the two windows around it, added to the evidence. */
    private Decision decide(Window w) {
        double after = w.inTimePerSecond();
        double reference = (before + after) / 2;
        phase = Phase.BEFORE;
        if (reference <= 0) {
            return new Decision(level(), null);
        }
        double spread = Math.min(MAX_SPREAD, Math.abs(before - after) / reference);
        noise = noise == 0 ? spread : noise + (spread - noise) / 4;
        boolean changed = recent > 0 && Math.abs(reference / recent - 1) >= CHANGED;
        if (changed) {
            // The pair straddles the change: the new regime starts from its newer window, its peak from the next pair.
            recent = after;
            startOver(true);
        } else {
            recent = recent == 0 ? reference : recent + (reference - recent) / 4;
            peak = Math.max(recent, peak);
        }
        Evidence evidence = up ? upward : downward;
        evidence.add(probed / reference - 1);
        if (!up) {
            belowPeak.add(probed / peak - 1);
        }
        String cause = judge(evidence);
        if (cause != null || changed) {
            backoff = 0;
        } else if (evidence.n == 0) { // the direction just gave way: probe the other soon
            backoff = Math.min(MAX_BACKOFF, Math.max(1, 2 * backoff));
        }
        pause = backoff + random.nextInt(2);
        return new Decision(level(), cause);
    }

    /** Moves the level when the evidence of this probe's direction is clear; turns to the other when it is not. */
    private @Nullable String judge(Evidence evidence) {
        double mean = evidence.mean();
        double error = evidence.standardError(noise);
        boolean clearGain = (evidence.n >= MIN_PROBES && mean - error >= GAIN) || mean - 2 * error >= GAIN;
        if (up && clearGain) {
            return move("more in flight completed more in time");
        }
        boolean noLoss = evidence.n >= MIN_PROBES
                && mean - error >= -LOSS
                && belowPeak.mean() - belowPeak.standardError(noise) >= -LOSS;
        // The peak is the highest of noisy references: on average, a probe is allowed that noise below it.
        boolean noLossOnAverage =
                evidence.n >= SETTLED_PROBES && mean >= -LOSS / 2 && belowPeak.mean() >= -LOSS - noise;
        if (!up && (noLoss || noLossOnAverage)) {
            return move("fewer in flight completed as many in time");
        }
        boolean clearlyNot = evidence.n >= MIN_PROBES && (up ? mean + error < GAIN : mean + error < -LOSS);
        if (clearlyNot || evidence.n >= MAX_PROBES) {
            evidence.clear();
            belowPeak.clear();
            exploring &= up;
            up = !up;
            momentum = 0;
        }
        return null;
    }

    private String move(String cause) {
        level = probeLimit;
        momentum++;
        upward.clear();
        downward.clear();
        belowPeak.clear();
        return cause;
    }

    /** Evidence and waits start again: a reflex acted, or the load or the capacity changed. */
    private void startOver(boolean explore) {
        upward.clear();
        downward.clear();
        belowPeak.clear();
        peak = 0;
        backoff = 0;
        momentum = 0;
        exploring = explore;
    }
}
