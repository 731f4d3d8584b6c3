package dev.dbbulkhead.internal;

import java.time.Duration;

/** Nanosecond arithmetic that saturates instead of overflowing: a 30-day or {@code Long.MAX_VALUE} wait just works. */
public final class Nanos {
    private Nanos() {}

    /** {@code a + b}, clamped to {@link Long#MIN_VALUE} .. {@link Long#MAX_VALUE}. */
    public static long saturatedAdd(long a, long b) {
        long sum = a + b;
        // Overflow iff both operands have the same sign and the sum's sign differs.
        if (((a ^ sum) & (b ^ sum)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return sum;
    }

    /** {@code a - b}, clamped. */
    public static long saturatedSubtract(long a, long b) {
        long difference = a - b;
        if (((a ^ b) & (a ^ difference)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return difference;
    }

    /** {@code duration} in nanoseconds, clamped to the range of a long. */
    public static long of(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException tooLong) {
            return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /**
     * How long ago a deadline passed, from its remaining time ({@code <= 0}): {@code -remaining}, with the far past
     * ({@link Long#MIN_VALUE}, a deadline at {@code Instant.MIN}) as {@link Long#MAX_VALUE} rather than overflowing.
     */
    public static long overdue(long remaining) {
        return remaining == Long.MIN_VALUE ? Long.MAX_VALUE : -remaining;
    }

    /** {@code a × b} for non-negative operands, saturating at {@link Long#MAX_VALUE}. */
    public static long saturatedMultiply(long a, long b) {
        long high = Math.multiplyHigh(a, b);
        long low = a * b;
        return high != 0 || low < 0 ? Long.MAX_VALUE : low;
    }
}
