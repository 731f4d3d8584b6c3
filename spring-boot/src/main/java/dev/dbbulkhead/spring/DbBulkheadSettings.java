package dev.dbbulkhead.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The {@link DbBulkheadProperties}, checked: every workload's budget and waits, the default workload, and the sum of
 * the workloads' {@code concurrent} against the pool's maximum size. Immutable and thread-safe.
 */
public final class DbBulkheadSettings {
    /** The queue wait of a workload that sets none. */
    public static final Duration DEFAULT_QUEUE_WAIT = Duration.ofMillis(100);
    /** The workload created when none is declared. */
    public static final String DEFAULT_WORKLOAD = "default";
    private static final String PREFIX = "db-bulkhead.";

    /**
     * One workload, checked. {@code deadline} is null when none is set; {@code adaptiveLimitMin} is 0 for a fixed
     * limit.
     */
    public record WorkloadSettings(String name, int concurrent, int extraSlots, Duration queueWait,
            Duration deadline, boolean allowRequiresNew, boolean predictiveRejection, int adaptiveLimitMin) {
        /** The property prefix of this workload. */
        String property(String field) {
            return PREFIX + "workloads." + name + "." + field;
        }
    }

    private final String name;
    private final Map<String, WorkloadSettings> workloads;
    private final String defaultWorkload;
    private final boolean allowOpenInView;

    private DbBulkheadSettings(String name, Map<String, WorkloadSettings> workloads, String defaultWorkload,
            boolean allowOpenInView) {
        this.name = name;
        this.workloads = workloads;
        this.defaultWorkload = defaultWorkload;
        this.allowOpenInView = allowOpenInView;
    }

    /**
     * Checks {@code properties} against a pool of {@code poolSize} connections ({@code <= 0}: unknown, not checked).
     *
     * @throws DbBulkheadConfigurationException naming the first property that cannot work
     */
    public static DbBulkheadSettings of(DbBulkheadProperties properties, int poolSize) {
        String name = properties.getName();
        if (name == null || name.isBlank()) {
            throw invalid("name", name, "must not be blank");
        }
        var workloads = new LinkedHashMap<String, WorkloadSettings>();
        if (properties.getWorkloads().isEmpty()) {
            int concurrent = poolSize > 0 ? poolSize : 10;
            workloads.put(DEFAULT_WORKLOAD,
                    new WorkloadSettings(DEFAULT_WORKLOAD, concurrent, concurrent, DEFAULT_QUEUE_WAIT, null, false,
                            false, 0));
        }
        properties.getWorkloads().forEach((key, w) -> workloads.put(key, workload(key, w)));
        String defaultWorkload = defaultWorkload(properties.getDefaultWorkload(), workloads);
        if (poolSize > 0) {
            checkPool(workloads, poolSize);
        }
        return new DbBulkheadSettings(name, Collections.unmodifiableMap(workloads), defaultWorkload, properties.isAllowOpenInView());
    }

    private static WorkloadSettings workload(String key, DbBulkheadProperties.Workload w) {
        String field = "workloads." + key + ".";
        if (key.isBlank()) {
            throw invalid("workloads", "''", "a workload needs a name");
        }
        if (w.getConcurrent() == null) {
            throw new DbBulkheadConfigurationException(PREFIX + field + "concurrent is not set",
                    "Set " + PREFIX + field + "concurrent to how many operations of workload '" + key
                            + "' may hold a connection at once (at least 1).");
        }
        if (w.getConcurrent() < 1) {
            throw invalid(field + "concurrent", w.getConcurrent(), "must be >= 1");
        }
        int extraSlots = w.getExtraSlots() == null ? 0 : w.getExtraSlots();
        if (extraSlots < 0) {
            throw invalid(field + "extra-slots", extraSlots, "must be >= 0");
        }
        if ((long) w.getConcurrent() + extraSlots > Integer.MAX_VALUE) {
            throw invalid(field + "extra-slots", extraSlots, "plus concurrent " + w.getConcurrent()
                    + " must fit in an int");
        }
        Duration queueWait = w.getQueueWait() == null ? DEFAULT_QUEUE_WAIT : w.getQueueWait();
        if (queueWait.isNegative()) {
            throw invalid(field + "queue-wait", queueWait, "must be >= 0");
        }
        if (w.getDeadline() != null && (w.getDeadline().isNegative() || w.getDeadline().isZero())) {
            throw invalid(field + "deadline", w.getDeadline(), "must be > 0 (leave it unset for none)");
        }
        Integer min = w.getAdaptiveLimitMin();
        if (min != null && (min < 1 || min > w.getConcurrent())) {
            throw invalid(field + "adaptive-limit-min", min, "must be between 1 and concurrent " + w.getConcurrent()
                    + " (leave it unset for a fixed limit)");
        }
        return new WorkloadSettings(key, w.getConcurrent(), extraSlots, queueWait, w.getDeadline(),
                w.isAllowRequiresNew(), w.isPredictiveRejection(), min == null ? 0 : min);
    }

    private static String defaultWorkload(String configured, Map<String, WorkloadSettings> workloads) {
        if (configured == null || configured.isBlank()) {
            if (workloads.size() > 1) {
                throw new DbBulkheadConfigurationException(PREFIX + "default-workload is not set, and "
                        + workloads.size() + " workloads are declared " + workloads.keySet(),
                        "Set " + PREFIX + "default-workload to the one used where none is named, one of "
                                + workloads.keySet() + ".");
            }
            return workloads.keySet().iterator().next();
        }
        if (!workloads.containsKey(configured)) {
            throw invalid("default-workload", configured, "is not a declared workload " + workloads.keySet());
        }
        return configured;
    }

    private static void checkPool(Map<String, WorkloadSettings> workloads, int poolSize) {
        long sum = workloads.values().stream().mapToLong(WorkloadSettings::concurrent).sum();
        if (sum <= poolSize) {
            return;
        }
        String parts = workloads.values().stream().map(w -> w.name() + "=" + w.concurrent())
                .collect(Collectors.joining(", "));
        List<String> properties = new ArrayList<>();
        workloads.values().forEach(w -> properties.add(w.property("concurrent")));
        throw new DbBulkheadConfigurationException("The db-bulkhead workloads' concurrent add up to " + sum + " ("
                + parts + "), more than the connection pool's maximum size " + poolSize + ": the barrier would "
                + "admit more operations than the pool has connections, and they would queue inside the pool "
                + "instead, where nothing bounds or rejects them.",
                "Lower " + String.join(", ", properties) + " so that they add up to at most " + poolSize
                        + ", or raise the pool's maximum size (spring.datasource.hikari.maximum-pool-size), within "
                        + "the database's connection budget.");
    }

    private static DbBulkheadConfigurationException invalid(String property, Object value, String rule) {
        return new DbBulkheadConfigurationException(PREFIX + property + " " + rule + ", was " + value,
                "Change " + PREFIX + property + ".");
    }

    /** The barrier's name. */
    public String name() {
        return name;
    }

    /** The workload used where none is named. */
    public String defaultWorkload() {
        return defaultWorkload;
    }

    /** The workloads, the default one first. */
    public List<WorkloadSettings> workloads() {
        var ordered = new ArrayList<WorkloadSettings>();
        ordered.add(workloads.get(defaultWorkload));
        workloads.values().stream().filter(w -> !w.name().equals(defaultWorkload)).forEach(ordered::add);
        return ordered;
    }

    /** The workload called {@code name}, or null. */
    public WorkloadSettings workload(String name) {
        return workloads.get(name);
    }

    /** Whether JPA's open-in-view is allowed. */
    public boolean allowOpenInView() {
        return allowOpenInView;
    }
}
