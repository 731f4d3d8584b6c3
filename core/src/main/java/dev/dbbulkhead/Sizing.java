package dev.dbbulkhead;

import dev.dbbulkhead.internal.Preconditions;
import java.time.Duration;

/** Sizing arithmetic from {@code docs/sizing.md}. */
public final class Sizing {
    private Sizing() {}

    /**
     * How many queued callers B execution permits can serve within {@code queueWait} when each operation holds
     * its permit for {@code holdTime}: {@code floor(B × queueWait / holdTime)}. A larger Q only turns rejections
     * into queue timeouts. Example: B=4, 50 ms, 22 ms per operation: 9.
     */
    public static long usefulExtraSlots(int concurrent, Duration queueWait, Duration holdTime) {
        Preconditions.atLeast(concurrent, 1, "concurrent");
        Preconditions.notNegative(queueWait, "queueWait");
        Preconditions.notNegative(holdTime, "holdTime");
        if (holdTime.isZero()) {
            throw new IllegalArgumentException("holdTime must be > 0, was " + holdTime);
        }
        // In seconds as doubles: no overflow for durations of any size (the result saturates at Long.MAX_VALUE).
        double perPermit = seconds(queueWait) / seconds(holdTime);
        return (long) Math.floor(concurrent * perPermit);
    }

    private static double seconds(Duration d) {
        return d.getSeconds() + d.getNano() / 1e9;
    }
}
