package dev.dbbulkhead.internal;

import org.jspecify.annotations.Nullable;

/**
 * A workload's state at the moment it refused an operation, read from its permits then (each field exact when read,
 * the whole not atomic): what every rejection's message and accessors show.
 *
 * @param concurrent B
 * @param extraSlots Q
 * @param limit L, the limit in force (B for a fixed workload)
 * @param executing operations holding an execution permit
 * @param waiting operations queued for one
 * @param allowedWaitNanos how long this caller could wait for a permit: its queue wait, or what was left of its
 *     deadline ({@link Long#MAX_VALUE}: unbounded)
 * @param kind the caller's kind of operation, for a workload that learns kinds; else null
 */
public record Snapshot(
        String bulkhead,
        String workload,
        int concurrent,
        int extraSlots,
        int limit,
        int executing,
        int waiting,
        long allowedWaitNanos,
        @Nullable String kind) {

    static Snapshot of(
            String bulkhead, String workload, Permits permits, long allowedWaitNanos, @Nullable String kind) {
        return new Snapshot(
                bulkhead,
                workload,
                permits.concurrent(),
                permits.extraSlots(),
                permits.limit(),
                permits.executing(),
                permits.waiting(),
                allowedWaitNanos,
                kind);
    }

    /** The numbers, for a message: {@code (B=16, Q=32, limit=8, executing=8, waiting=3)}, then the kind if any. */
    public String describe() {
        return "(B=" + concurrent + ", Q=" + extraSlots + ", limit=" + limit + ", executing=" + executing + ", waiting="
                + waiting + (kind == null ? "" : ", kind=" + kind) + ")";
    }

    /** Nanoseconds as milliseconds with three decimals, the one unit of every message: {@code 50.000 ms}. */
    public static String millis(long nanos) {
        if (nanos == Long.MAX_VALUE) {
            return "unbounded";
        }
        long micros = Math.max(0, nanos) / 1_000 + (Math.max(0, nanos) % 1_000 >= 500 ? 1 : 0);
        long fraction = micros % 1_000;
        return micros / 1_000 + "." + (fraction < 100 ? fraction < 10 ? "00" : "0" : "") + fraction + " ms";
    }
}
