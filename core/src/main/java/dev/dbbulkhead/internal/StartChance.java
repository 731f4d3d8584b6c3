package dev.dbbulkhead.internal;

/**
 * The chance that a caller in line gets its permit within the time it may wait, when permits come back one at a time
 * at a known mean rate: the number coming back within that time taken as Poisson (the M/M/c queue's waiting time, an
 * Erlang distribution). A caller behind {@code queued} others starts within {@code t} when at least {@code queued + 1}
 * permits come back within {@code t}.
 *
 * <p>Used to refuse a caller only when it almost surely cannot be served in time: a mean alone refuses everyone whose
 * expected wait is a little over what it may wait, and about half of those would have been served.
 */
final class StartChance {
    /** A caller is refused at once only when its chance to start in time is below this. */
    static final double REFUSE_BELOW = 0.01;
    /** Beyond this many permits expected back, the Poisson count is taken as normal (its skew is 1/√mean: ≤ 0.1). */
    private static final double NORMAL_FROM = 100;
    /** The standard normal quantile of 1 - {@link #REFUSE_BELOW}. */
    private static final double Z_REFUSE = 2.3263;

    private StartChance() {}

    /**
     * Whether at least {@code needed} permits coming back within the time allowed, {@code expectedBack} of them on
     * average, has a chance below {@link #REFUSE_BELOW}.
     */
    static boolean unlikely(int needed, double expectedBack) {
        if (needed <= 0) {
            return false;
        }
        if (expectedBack <= 0) {
            return true;
        }
        if (expectedBack > NORMAL_FROM) { // continuity-corrected: P(N >= needed) = P(N > needed - 0.5)
            return (needed - 0.5 - expectedBack) / Math.sqrt(expectedBack) > Z_REFUSE;
        }
        return atLeast(needed, expectedBack) < REFUSE_BELOW;
    }

    /**
     * P(N ≥ {@code k}) for N Poisson with mean {@code mean} ≤ {@value #NORMAL_FROM} (so e^-mean is a normal double);
     * below {@link #REFUSE_BELOW} / 1000 it may stop early and return an upper bound.
     */
    static double atLeast(int k, double mean) {
        double term = Math.exp(-mean); // P(N = 0)
        double below = 0; // P(N < i)
        for (int i = 0; i < k; i++) {
            below += term;
            if (1 - below < REFUSE_BELOW / 1000 || (i > mean && term < 1e-18)) {
                break; // the rest of the sum no longer matters to the decision
            }
            term *= mean / (i + 1);
        }
        return Math.max(0, 1 - below);
    }
}
