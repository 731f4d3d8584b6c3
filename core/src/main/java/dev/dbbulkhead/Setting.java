package dev.dbbulkhead;

import java.util.Locale;

/**
 * The settings {@link DbBulkhead.Builder} and {@link WorkloadConfig.Builder} check, as {@link InvalidSettingException}
 * names them. Each has its builder name ({@code extraSlots}) and a property name derived from it
 * ({@code extra-slots}), for integrations that map their own configuration onto the builders.
 */
public enum Setting {
    /** The barrier's name. */
    NAME("name", false),
    /** Its pool's size, also when the workloads' {@code concurrent} add up to more than it. */
    POOL_SIZE("poolSize", false),
    /** The most operations of all workloads in flight at once. */
    SHARED_LIMIT("sharedLimit", false),
    /** Leak detection's threshold. */
    LEAK_DETECTION_THRESHOLD("leakDetectionThreshold", false),
    /** The queue wait of {@link DbBulkhead.Builder#sizingHint}. */
    SIZING_HINT_QUEUE_WAIT("sizingHintQueueWait", false),
    /** The hold time of {@link DbBulkhead.Builder#sizingHint}. */
    SIZING_HINT_HOLD_TIME("sizingHintHoldTime", false),
    /** A workload's name: not blank, unique in its barrier. */
    WORKLOAD_NAME("workloadName", true),
    /** B. */
    CONCURRENT("concurrent", true),
    /** Q. */
    EXTRA_SLOTS("extraSlots", true),
    /** How the queue admits and serves waiting callers. */
    QUEUE("queue", true),
    /** How the workload shares the database with the barrier's others. */
    PRIORITY("priority", true),
    /** Predictive rejection. */
    PREDICTIVE_REJECTION("predictiveRejection", true),
    /** The adaptive limit's minimum (0: a fixed limit). */
    ADAPTIVE_LIMIT_MIN("adaptiveLimitMin", true),
    /** The adaptive limit's latency target. */
    ADAPTIVE_LATENCY_TARGET("adaptiveLatencyTarget", true),
    /** A regular workload's latency objective under priorities. */
    LATENCY_OBJECTIVE("latencyObjective", true);

    private final String builderName;
    private final boolean perWorkload;

    Setting(String builderName, boolean perWorkload) {
        this.builderName = builderName;
        this.perWorkload = perWorkload;
    }

    /** The name of the builder method that sets it, e.g. {@code extraSlots}. */
    public String builderName() {
        return builderName;
    }

    /** The same in kebab case, as a property: {@code extra-slots}. */
    public String propertyName() {
        return builderName.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    /** Whether it belongs to one workload ({@link WorkloadConfig}) rather than to the whole barrier. */
    public boolean perWorkload() {
        return perWorkload;
    }

    @Override
    public String toString() {
        return builderName;
    }
}
