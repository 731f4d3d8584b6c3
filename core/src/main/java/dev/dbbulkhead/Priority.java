package dev.dbbulkhead;

/**
 * How a workload shares its barrier's database with the others ({@link WorkloadConfig.Builder#priority}). Workloads of
 * one barrier together never hold more than its shared limit ({@link DbBulkhead.Builder#sharedLimit}, the pool size by
 * default) at once. When to use priorities, and when separate pools: {@code docs/sizing.md}.
 */
public enum Priority {
    /**
     * Admitted up to its B, first: what it needs (what it holds, what waits, and room to grow) is taken from the
     * shared limit before any elastic workload gets the rest. The default, and what every workload of a barrier
     * without elastic ones is.
     */
    REGULAR,
    /**
     * Background work (batch jobs, reports, backfills): it gets what the regular workloads leave of the shared limit,
     * at least one permit so that it never starves, and only while the regular workloads show no congestion (no caller
     * waiting for a permit, their operations not slower than they were lately); under congestion its allowance halves
     * every window, and grows by one per window once the congestion is gone.
     */
    ELASTIC
}
