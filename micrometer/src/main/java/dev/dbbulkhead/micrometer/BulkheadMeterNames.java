package dev.dbbulkhead.micrometer;

/**
 * The names of every meter {@link DbBulkheadMetrics} registers, and their tags. Shaped after the OpenTelemetry
 * conventions for database client connection pools ({@code db.client.connection.wait_time}, {@code use_time},
 * {@code pending_requests}, ...), under their own prefix so that they never clash with a pool's own meters.
 * See {@code docs/metrics.md}.
 */
public final class BulkheadMeterNames {
    private BulkheadMeterNames() {}

    /** Counter: operations refused before they took a connection. Tag {@link #REASON}. */
    public static final String REJECTIONS = "db.bulkhead.rejections";
    /** Counter: operations that held an execution permit, by how they ended. Tag {@link #OUTCOME}. */
    public static final String OPERATIONS = "db.bulkhead.operations";
    /** Timer: from the call to the execution permit, for operations that got one. */
    public static final String PERMIT_WAIT = "db.bulkhead.permit.wait_time";
    /** Timer: from asking the pool for a connection to getting it (or failing). */
    public static final String CONNECTION_WAIT = "db.bulkhead.connection.wait_time";
    /** Timer: from connection acquired to connection closed. */
    public static final String CONNECTION_USE = "db.bulkhead.connection.use_time";
    /** Timer: time spent inside the caller's work. */
    public static final String WORK = "db.bulkhead.work.duration";
    /** Gauge: operations holding an execution permit now (≤ B). */
    public static final String EXECUTING = "db.bulkhead.executing";
    /** Gauge: operations queued for an execution permit now (≤ Q). */
    public static final String PENDING = "db.bulkhead.pending_requests";
    /** Gauge: free execution permits now. */
    public static final String PERMITS_AVAILABLE = "db.bulkhead.permits.available";
    /** Gauge: free admission slots now. */
    public static final String SLOTS_AVAILABLE = "db.bulkhead.slots.available";
    /** Gauge: B, the workload's execution budget. */
    public static final String PERMITS_MAX = "db.bulkhead.permits.max";
    /** Gauge: B + Q, the workload's admission budget. */
    public static final String SLOTS_MAX = "db.bulkhead.slots.max";

    /**
     * Gauges per kind of operation, for a workload that learns kinds (tag {@link #KIND}; at most 32 kinds and
     * {@code other}): recent arrivals per second.
     */
    public static final String KIND_ARRIVALS = "db.bulkhead.kind.arrivals";
    /** Gauge per kind: its share of the workload's arrivals, 0 to 1. */
    public static final String KIND_SHARE = "db.bulkhead.kind.share";
    /** Gauge per kind: the recent median hold, seconds (within 19 %). */
    public static final String KIND_HOLD_P50 = "db.bulkhead.kind.hold.p50";
    /** Gauge per kind: the recent 99th percentile hold, seconds (within 19 %). */
    public static final String KIND_HOLD_P99 = "db.bulkhead.kind.hold.p99";
    /** Gauge per kind: how many of its operations may be inside while the workload is contended; -1: no cap. */
    public static final String KIND_CAP = "db.bulkhead.kind.cap";
    /** Gauge per kind: its operations counted inside now (admitted while the workload was contended). */
    public static final String KIND_INSIDE = "db.bulkhead.kind.inside";
    /** Gauge per kind: callers refused at its cap so far ({@code KindCappedException}). */
    public static final String KIND_CAPPED = "db.bulkhead.kind.capped";

    /** Gauge: L, how many operations may hold an execution permit now (B unless the workload is adaptive). */
    public static final String LIMIT = "db.bulkhead.limit";
    /**
     * Gauge, elastic workloads only: 1 while the workload is held to its floor of one permit (a regular workload
     * missed its latency objective, or leaves no more of the shared limit), else 0.
     */
    public static final String ELASTIC_AT_FLOOR = "db.bulkhead.elastic.at_floor";
    /** Gauge, elastic workloads only: the permits the regular workloads' latency objectives allow it now. */
    public static final String ELASTIC_ALLOWANCE = "db.bulkhead.elastic.allowance";
    /** Gauge, elastic workloads only: the permits kept back for the regular workloads' peak demand. */
    public static final String ELASTIC_HEADROOM = "db.bulkhead.elastic.headroom";
    /**
     * Gauge, every workload of a barrier with an elastic one, one per {@link #STATE}: 1 for the state of the last
     * window (why the elastic allowance is what it is: {@code objective_met}, {@code objective_missed},
     * {@code backing_off}, {@code no_room}, {@code idle}, {@code learning}), 0 for the others.
     */
    public static final String SHARING_STATE = "db.bulkhead.sharing.state";
    /** Gauge, regular workloads beside an elastic one: the latency objective in force (NaN while learned). */
    public static final String LATENCY_OBJECTIVE = "db.bulkhead.latency.objective";
    /** Gauge, regular workloads beside an elastic one: the p99 of permit wait plus hold in the last window. */
    public static final String LATENCY_P99 = "db.bulkhead.latency.p99";
    /**
     * Timer: how long each operation held its execution permit, on every path: inside {@code transaction()} the wait
     * for a connection and its use; a {@code Lease} (the starter's {@code @DbWorkload} methods) from grant to close.
     * The hold time of sizing's arithmetic ({@code Q ≈ B × queueWait / hold}).
     */
    public static final String PERMIT_HOLD = "db.bulkhead.permit.hold";
    /** Gauge, predictive or adaptive workloads only: the recent average permit hold time, seconds. */
    public static final String HOLD_RECENT = "db.bulkhead.hold.recent";
    /** Gauge, predictive workloads only: the wait a caller arriving now would be expected to have, seconds. */
    public static final String WAIT_EXPECTED = "db.bulkhead.wait.expected";
    /**
     * Function counter: leases (and queued callers) reclaimed because their thread terminated or left without giving
     * their permits back. Should stay 0; anything else is a lease that is not closed.
     */
    public static final String RECLAIMED = "db.bulkhead.leases.reclaimed";
    /**
     * Counter: admitted operations whose transaction could not get a connection from the pool in time (the pool is
     * the bottleneck, or something outside the barrier holds its connections).
     */
    public static final String POOL_TIMEOUTS = "db.bulkhead.pool.timeouts";
    /**
     * Counter: admitted operations that failed with a sign of saturation (deadline passed waiting for a connection or
     * an answer, pool timeout, 53300, PgBouncer's refusals), the signals an adaptive limit counts.
     */
    public static final String OVERLOAD_SIGNALS = "db.bulkhead.overload.signals";
    /** Counter: leases reported by leak detection (open for longer than the barrier's leak detection threshold). */
    public static final String LEAKS_SUSPECTED = "db.bulkhead.leases.leak_suspected";

    /**
     * Counter: connections discarded instead of going back to the pool, because work may have changed their session
     * in a way its SQL text could not show (a {@code DO} block, a {@code CALL}) and it did, or it could not be told.
     */
    public static final String SESSIONS_DISCARDED = "db.bulkhead.sessions.discarded";

    /** Tag: the barrier's name. */
    public static final String BULKHEAD = "bulkhead";
    /** Tag: the workload's name. */
    public static final String WORKLOAD = "workload";
    /** Tag: the kind of operation (a call site, a name its caller gave, or {@code other}). */
    public static final String KIND = "kind";
    /** Tag: the workload's priority, {@code regular} or {@code elastic}: every meter per class by this tag. */
    public static final String PRIORITY = "priority";
    /** Tag of {@link #SHARING_STATE}: a {@code Sharing.State}, in lower case. */
    public static final String STATE = "state";
    /** Tag: admission_full, queue_timeout, deadline, interrupted. */
    public static final String REASON = "reason";
    /** Tag: committed, rolled_back, outcome_unknown, no_connection. */
    public static final String OUTCOME = "outcome";
}
