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
     * at least one permit so that it never starves, as long as every regular workload meets its latency objective
     * ({@link WorkloadConfig.Builder#latencyObjective}, set or learned). An elastic operation cannot be pre-empted, so
     * its allowance follows what regular callers saw over a window: it halves when an objective is missed (to the
     * floor when one operation in ten missed), grows by one per window while all are met, and never takes the
     * headroom kept for the regular workloads' peak demand; with no regular work it is all the room at once. Cut
     * batch jobs into chunks ({@link BatchJob}) so that the room comes back between two of them. Why it is what it
     * is now: {@link Workload#sharing()}.
     */
    ELASTIC
}
