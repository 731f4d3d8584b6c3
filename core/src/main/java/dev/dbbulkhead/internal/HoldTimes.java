package dev.dbbulkhead.internal;

/**
 * A workload's recent connection hold time (an exponentially weighted moving average, weight 1/8 per operation),
 * and from it the expected wait for an execution permit, for predictive rejection. Updates race benignly (a lost
 * sample shifts an estimate, never a permit). Thread-safe.
 */
public final class HoldTimes {
    private volatile long averageNanos; // 0: no operation measured yet

    /** One operation held its permits for {@code nanos}. */
    public void record(long nanos) {
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
     * of {@code concurrent} are free: none with a free permit or before any measurement; else the time for
     * {@code queued + 1} permits to be released when B permits are released once per average hold:
     * {@code (queued + 1) × hold / B}. (With {@code B + 1} in the denominator, the estimate of a wait's lower side,
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
