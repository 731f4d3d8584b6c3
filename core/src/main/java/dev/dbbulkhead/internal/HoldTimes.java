package dev.dbbulkhead.internal;

/**
 * A workload's recent permit hold time (an exponentially weighted moving average, weight 1/8 per operation), and
 * from it the expected wait for an execution permit, for predictive rejection; each hold also goes to the workload's
 * {@link AdaptiveLimit}, if it has one. Before the first operation completes (a burst on a new barrier), the time
 * the first permit has been held so far stands in for the hold: a lower bound that grows until the first release.
 * Updates race benignly (a lost sample shifts an estimate, never a permit). Thread-safe.
 */
final class HoldTimes {
    private final AdaptiveLimit adaptive;
    private volatile long averageNanos; // 0: no operation measured yet
    private volatile long firstGrantAt; // 0: no permit granted yet

    /** @param adaptive the workload's adaptive limit, or {@code null} */
    public HoldTimes(AdaptiveLimit adaptive) {
        this.adaptive = adaptive;
    }

    /** A permit was granted at {@code now}: until the first release, the cold start's reference. */
    public void granted(long now) {
        if (firstGrantAt == 0 && averageNanos == 0) {
            firstGrantAt = now == 0 ? 1 : now; // racy: any of the first grants will do
        }
    }

    /**
     * One operation held its permits for {@code nanos} after waiting {@code waitNanos} for them; {@code overload}:
     * it failed with a sign of an overloaded database ({@link Overload}).
     */
    public void record(long nanos, long waitNanos, boolean overload) {
        if (adaptive != null) {
            adaptive.sample(nanos, waitNanos + nanos, overload);
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
     * The expected wait of a caller arriving at {@code now}, behind {@code queued} waiters, when {@code free}
     * execution permits of {@code concurrent} (the limit in force, L or B) are free: none with a free permit; else
     * the time for {@code queued + 1} permits to be released when L permits are released once per average hold:
     * {@code (queued + 1) × hold / L}. Before any release, the hold is how long the first permit has been held.
     */
    public long expectedWaitNanos(int queued, int free, int concurrent, long now) {
        if (free > 0) {
            return 0;
        }
        long hold = averageNanos;
        if (hold == 0) {
            long first = firstGrantAt;
            if (first == 0) {
                return 0;
            }
            hold = Math.max(0, now - first);
        }
        return Nanos.saturatedMultiply(hold, queued + 1L) / concurrent;
    }
}
