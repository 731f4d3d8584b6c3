package dev.dbbulkhead.spring;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.InvalidSettingException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The {@link DbBulkheadProperties}, checked where only the starter can check them (a workload without
 * {@code concurrent}, waits and deadlines, the default workload, the web settings), and mapped onto the barrier's
 * builder, which checks the budgets themselves (B, Q, the adaptive minimum, the sum of the workloads' B against the
 * pool): one rule, one message, naming the property and, in the start-up report, where it was set. Immutable and
 * thread-safe.
 */
public final class DbBulkheadSettings {
    /** The queue wait of a workload that sets none. */
    public static final Duration DEFAULT_QUEUE_WAIT = Duration.ofMillis(100);
    /** The workload created when none is declared. */
    public static final String DEFAULT_WORKLOAD = "default";
    private static final String PREFIX = "db-bulkhead.";

    /**
     * One workload, checked. {@code deadline} is null when none is set; {@code adaptiveLimitMin} is null for a fixed
     * limit, {@code adaptiveLatencyTarget} for the default target, {@code predictionAudit} for none (values set are
     * passed to the barrier's builder as they are, for it to check).
     */
    public record WorkloadSettings(String name, int concurrent, int extraSlots, Duration queueWait,
            Duration deadline, boolean allowRequiresNew, boolean predictiveRejection, Integer adaptiveLimitMin,
            Duration adaptiveLatencyTarget, Double predictionAudit) {
        /** The property prefix of this workload. */
        String property(String field) {
            return PREFIX + "workloads." + name + "." + field;
        }
    }

    /** The largest Retry-After the web answer takes: a day. */
    static final Duration MAX_RETRY_AFTER = Duration.ofDays(1);

    private final String name;
    private final Map<String, WorkloadSettings> workloads;
    private final String defaultWorkload;
    private final boolean allowOpenInView;
    private final int poolSize;
    private final Duration leakDetectionThreshold;

    private DbBulkheadSettings(String name, Map<String, WorkloadSettings> workloads, String defaultWorkload,
            boolean allowOpenInView, int poolSize, Duration leakDetectionThreshold) {
        this.name = name;
        this.workloads = workloads;
        this.defaultWorkload = defaultWorkload;
        this.allowOpenInView = allowOpenInView;
        this.poolSize = poolSize;
        this.leakDetectionThreshold = leakDetectionThreshold;
    }

    /**
     * Checks {@code properties} against a pool of {@code poolSize} connections ({@code <= 0}: unknown, not checked).
     *
     * @throws DbBulkheadConfigurationException naming the first property that cannot work
     */
    public static DbBulkheadSettings of(DbBulkheadProperties properties, int poolSize) {
        String name = properties.getName();
        var workloads = new LinkedHashMap<String, WorkloadSettings>();
        if (properties.getWorkloads().isEmpty()) {
            int concurrent = poolSize > 0 ? poolSize : 10;
            workloads.put(DEFAULT_WORKLOAD,
                    new WorkloadSettings(DEFAULT_WORKLOAD, concurrent, concurrent, DEFAULT_QUEUE_WAIT, null, false,
                            false, null, null, null));
        }
        properties.getWorkloads().forEach((key, w) -> workloads.put(key, workload(key, w)));
        String defaultWorkload = defaultWorkload(properties.getDefaultWorkload(), workloads);
        retryAfter(properties.getWeb().getRetryAfter());
        Duration leaks = properties.getLeakDetectionThreshold();
        return new DbBulkheadSettings(name, Collections.unmodifiableMap(workloads), defaultWorkload,
                properties.isAllowOpenInView(), poolSize, leaks == null ? Duration.ZERO : leaks);
    }

    /** The web answer's Retry-After: more than zero and at most a day. */
    static Duration retryAfter(Duration retryAfter) {
        if (retryAfter == null || retryAfter.isNegative() || retryAfter.isZero()) {
            throw invalid("web.retry-after", retryAfter, "must be > 0 (it is sent in whole seconds, rounded up)");
        }
        if (retryAfter.compareTo(MAX_RETRY_AFTER) > 0) {
            throw invalid("web.retry-after", retryAfter, "must be at most " + MAX_RETRY_AFTER + " (a day)");
        }
        return retryAfter;
    }

    /**
     * The barrier these settings describe, over {@code dataSource}: the workloads, the pool size, leak detection,
     * {@code listeners}, then {@code customizers} in order. What the builder refuses fails start-up as a
     * {@link DbBulkheadConfigurationException} naming the property.
     */
    public DbBulkhead build(DataSource dataSource, List<BulkheadListener> listeners,
            List<DbBulkheadBuilderCustomizer> customizers) {
        try {
            var builder = DbBulkhead.builder(dataSource).name(name);
            for (WorkloadSettings w : workloads()) {
                builder.workload(w.name(), w.concurrent(), w.extraSlots());
                if (w.predictiveRejection()) {
                    builder.predictiveRejection(w.name());
                }
                if (w.adaptiveLimitMin() != null && w.adaptiveLatencyTarget() != null) {
                    builder.adaptiveLimit(w.name(), w.adaptiveLimitMin(), w.adaptiveLatencyTarget());
                } else if (w.adaptiveLimitMin() != null) {
                    builder.adaptiveLimit(w.name(), w.adaptiveLimitMin());
                }
                if (w.predictionAudit() != null) {
                    builder.predictionAudit(w.name(), w.predictionAudit());
                }
            }
            if (poolSize > 0) {
                builder.poolSize(poolSize);
            }
            builder.leakDetectionThreshold(leakDetectionThreshold);
            listeners.forEach(builder::listener);
            customizers.forEach(c -> c.customize(builder));
            return builder.build();
        } catch (InvalidSettingException refused) {
            throw refused(refused);
        }
    }

    /** What the builder refused, named as the property that set it. */
    private DbBulkheadConfigurationException refused(InvalidSettingException e) {
        String property = property(e);
        if (e.setting().equals("poolSize")) {
            List<String> concurrent = workloads.values().stream().map(w -> w.property("concurrent")).toList();
            return new DbBulkheadConfigurationException(e.getMessage() + ": the barrier would admit more "
                    + "operations than the pool has connections, and they would queue inside the pool instead, where "
                    + "nothing bounds or rejects them.", "Lower " + String.join(", ", concurrent) + " so that they "
                    + "add up to at most the pool size, or raise the pool's maximum size "
                    + "(spring.datasource.hikari.maximum-pool-size), within the database's connection budget.",
                    property, e);
        }
        if (property == null) {
            return new DbBulkheadConfigurationException("db-bulkhead: " + e.getMessage(),
                    "Change the DbBulkheadBuilderCustomizer that sets " + e.setting() + ".", null, e);
        }
        String description = e.rule().map(rule -> property + " " + rule + ", was " + e.value())
                .orElse(property + ": " + e.getMessage());
        return new DbBulkheadConfigurationException(description, "Change " + property + ".", property, e);
    }

    /** The property behind a setting the builder names, or null (a customizer's). */
    private String property(InvalidSettingException e) {
        String w = e.workload().orElse(null);
        String field = switch (e.setting()) {
            case "name" -> "name";
            case "concurrent" -> "concurrent";
            case "extraSlots" -> "extra-slots";
            case "adaptiveLimit minLimit" -> "adaptive-limit-min";
            case "adaptiveLimit latencyTarget" -> "adaptive-latency-target";
            case "predictionAudit" -> "prediction-audit";
            case "leakDetectionThreshold" -> "leak-detection-threshold";
            case "poolSize" -> "spring.datasource.hikari.maximum-pool-size";
            default -> null;
        };
        if (field == null) {
            return null;
        }
        if (field.startsWith("spring.")) {
            return field;
        }
        return w == null || workloads.get(w) == null ? PREFIX + field : workloads.get(w).property(field);
    }

    private static WorkloadSettings workload(String key, DbBulkheadProperties.Workload w) {
        String field = "workloads." + key + ".";
        if (key.isBlank()) {
            throw invalid("workloads", "''", "a workload needs a name");
        }
        if (w.getConcurrent() == null) {
            throw new DbBulkheadConfigurationException(PREFIX + field + "concurrent is not set",
                    "Set " + PREFIX + field + "concurrent to how many operations of workload '" + key
                            + "' may hold a connection at once (at least 1).", PREFIX + field + "concurrent", null);
        }
        // B, Q and the adaptive minimum are the barrier's to check (build()): one rule, one message.
        int extraSlots = w.getExtraSlots() == null ? 0 : w.getExtraSlots();
        Duration queueWait = w.getQueueWait() == null ? DEFAULT_QUEUE_WAIT : w.getQueueWait();
        if (queueWait.isNegative()) {
            throw invalid(field + "queue-wait", queueWait, "must be >= 0");
        }
        if (w.getDeadline() != null && (w.getDeadline().isNegative() || w.getDeadline().isZero())) {
            throw invalid(field + "deadline", w.getDeadline(), "must be > 0 (leave it unset for none)");
        }
        Integer min = w.getAdaptiveLimitMin();
        if (w.getAdaptiveLatencyTarget() != null && min == null) {
            throw invalid(field + "adaptive-latency-target", w.getAdaptiveLatencyTarget(), "needs "
                    + PREFIX + field + "adaptive-limit-min (the adaptive limit it is the target of)");
        }
        return new WorkloadSettings(key, w.getConcurrent(), extraSlots, queueWait, w.getDeadline(),
                w.isAllowRequiresNew(), w.isPredictiveRejection(), min, w.getAdaptiveLatencyTarget(),
                w.getPredictionAudit());
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

    private static DbBulkheadConfigurationException invalid(String property, Object value, String rule) {
        return new DbBulkheadConfigurationException(PREFIX + property + " " + rule + ", was " + value,
                "Change " + PREFIX + property + ".", PREFIX + property, null);
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

    /** The pool's maximum size, as Spring Boot reads it, or -1 when unknown. */
    public int poolSize() {
        return poolSize;
    }

    /** Whether JPA's open-in-view is allowed. */
    public boolean allowOpenInView() {
        return allowOpenInView;
    }
}
