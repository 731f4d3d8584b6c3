package dev.dbbulkhead.internal;

/**
 * A workload's recent permit hold time (an exponentially weighted moving average, weight 1/8 per operation),
 * and from it the expected wait for an execution permit, for predictive rejection; each hold also goes to the
 * workload's {@link AdaptiveLimit}, if it has one. Updates race benignly (a lost sample shifts an estimate, never a
 * permit). Thread-safe.
 */
public final class HoldTimes {
    private final AdaptiveLimit adaptive;
    private volatile long averageNanos; // 0: no operation measured yet

    /** @param adaptive the workload's adaptive limit, or {@code null} */
    public HoldTimes(AdaptiveLimit adaptive) {
        this.adaptive = adaptive;
    }

    /**
     * One operation held its permits for {@code nanos}, until {@code now}; {@code overload}: it failed with a sign
     * of an overloaded database ({@link Overload}).
     */
    public void record(long nanos, boolean overload, long now) {
        if (adaptive != null) {
            adaptive.sample(nanos, overload, now);
        }
        if (nanos <= 0) {
            return;
        }
        long a = averageNanos;
        averageNanos = a == 0 ? nanos : a + (nanos - a) / 8;
    }

    /** The recent average hold time in nanoseconds, 0 before the first operation. */
    public long averageNanos() {
        return averageNanos;
    }

    /**
     * The expected wait of a caller arriving now, behind {@code queued} waiters, when {@code free} execution permits
     * of {@code concurrent} (the limit in force, L or B) are free: none with a free permit or before any measurement;
     * else the time for {@code queued + 1} permits to be released when L permits are released once per average hold:
     * {@code (queued + 1) × hold / L}. (With {@code B + 1} in the denominator, the estimate of a wait's lower side,
     * a third of the callers it admitted in the standard overload run still timed out: docs/performance.md.)
     */
    public long expectedWaitNanos(int queued, int free, int concurrent) {
        long hold = averageNanos;
        if (free > 0 || hold == 0) {
            return 0;
        }
        return Nanos.saturatedMultiply(hold, queued + 1L) / concurrent;
    }
}
