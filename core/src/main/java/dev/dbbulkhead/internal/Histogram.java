package dev.dbbulkhead.internal;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Durations (a kind's holds in {@link Kinds}, a regular workload's latencies in {@link Arbiter}) in buckets four to a
 * power of two (within 19 %), halved at every {@link #decay}: the recent ones weigh most. Recorded without an atomic
 * instruction (opaque reads and writes): two operations ending at the same instant may count once, which an estimate
 * can afford and the uncontended path's cost cannot.
 */
final class Histogram {
    private static final int BUCKETS = 4 * 64;
    private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
    /** Durations recorded, ever (as the buckets, an estimate). */
    private final AtomicLong recorded = new AtomicLong();

    static int bucket(long nanos) {
        if (nanos < 4) {
            return (int) Math.max(0, nanos);
        }
        int log = 63 - Long.numberOfLeadingZeros(nanos);
        return 4 * log + (int) ((nanos >>> (log - 2)) & 3);
    }

    /** The smallest value of bucket {@code b}. */
    static long lower(int b) {
        if (b < 4) {
            return b;
        }
        int log = b / 4;
        return (1L << log) + ((long) (b % 4) << (log - 2));
    }

    void record(long nanos) {
        int b = bucket(nanos);
        counts.setOpaque(b, counts.getOpaque(b) + 1);
        recorded.setOpaque(recorded.getOpaque() + 1);
    }

    long completions() {
        return recorded.getOpaque();
    }

    void clear() {
        for (int i = 0; i < BUCKETS; i++) {
            if (counts.getOpaque(i) != 0) {
                counts.setOpaque(i, 0);
            }
        }
    }

    void decay() {
        for (int i = 0; i < BUCKETS; i++) {
            long c = counts.getOpaque(i);
            if (c != 0) {
                counts.setOpaque(i, c / 2);
            }
        }
    }

    /** The mean of the recent durations (from the buckets' midpoints); 0 without any. */
    double mean() {
        double sum = 0;
        long n = 0;
        for (int i = 0; i < BUCKETS; i++) {
            long c = counts.getOpaque(i);
            if (c != 0) {
                sum += c * (double) mid(i);
                n += c;
            }
        }
        return n == 0 ? 0 : sum / n;
    }

    private static long mid(int b) {
        return b + 1 < BUCKETS ? (lower(b) + lower(b + 1)) / 2 : lower(b);
    }

    /** The value below which {@code q} of the recent durations lie (a bucket's midpoint); 0 without any. */
    long quantile(double q) {
        long total = 0;
        for (int i = 0; i < BUCKETS; i++) {
            total += counts.getOpaque(i);
        }
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts.getOpaque(i);
            if (seen >= rank) {
                return mid(i);
            }
        }
        return lower(BUCKETS - 1);
    }
}
