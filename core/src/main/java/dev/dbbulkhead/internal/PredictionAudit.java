package dev.dbbulkhead.internal;

import java.util.function.Supplier;

/**
 * A measuring hook, not a setting: a barrier built inside {@link #auditing} admits a random share of the callers that
 * predictive rejection would refuse, and reports whether each got its permit in time
 * ({@code BulkheadListener.onPredictionAudited}): how many refusals were false. The capacity tool measures with it;
 * nothing in the public configuration sets it, and the module does not export this package. Workloads that do not
 * predict (a FIFO queue without predictive rejection) ignore it.
 */
public final class PredictionAudit {
    private static final ThreadLocal<Double> SHARE = ThreadLocal.withInitial(() -> 0.0);

    private PredictionAudit() {}

    /**
     * What {@code build} returns, every predicting workload of a barrier it builds auditing {@code share} (0 to 1) of
     * its predicted refusals.
     *
     * @throws IllegalArgumentException naming the value when {@code share} is not between 0 and 1
     */
    public static <T> T auditing(double share, Supplier<T> build) {
        if (!(share >= 0 && share <= 1)) {
            throw new IllegalArgumentException("prediction audit share must be between 0 and 1, was " + share);
        }
        double outer = SHARE.get();
        SHARE.set(share);
        try {
            return build.get();
        } finally {
            SHARE.set(outer);
        }
    }

    /** The share asked for on this thread, while a barrier is built; 0 outside {@link #auditing}. */
    static double share() {
        return SHARE.get();
    }
}
