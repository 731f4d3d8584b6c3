package dev.dbbulkhead.spring;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.InvalidSettingException;
import dev.dbbulkhead.Setting;
import dev.dbbulkhead.WorkloadConfig;
import dev.dbbulkhead.spring.web.DbBulkheadProblemResolver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The {@link DbBulkheadProperties}, checked: each workload's budget and admission by the core's
 * {@link WorkloadConfig}, the sum of the workloads' B against the pool by the core's builder, and here only what the
 * starter adds (a workload without {@code concurrent}, waits and deadlines, the default workload, the web settings).
 * One rule, one message, naming the property and, in the start-up report, where it was set. Immutable and
 * thread-safe.
 */
public final class DbBulkheadSettings {
    /** The queue wait of a workload that sets none. */
    public static final Duration DEFAULT_QUEUE_WAIT = Duration.ofMillis(100);
    /**
     * The queue wait of the workload created when none is declared, and the one docs/spring.md recommends for a web
     * application: about half of a 1 s answer, chosen with bin/flood (performance.md §14).
     */
    public static final Duration RECOMMENDED_QUEUE_WAIT = Duration.ofMillis(500);
    /** The workload created when none is declared. */
    public static final String DEFAULT_WORKLOAD = "default";

    private static final String PREFIX = "db-bulkhead.";
    /** A setting's builder name inside a rule (e.g. "needs adaptiveLimitMin"), to name it as a property. */
    private static final Pattern SETTING_NAME = Pattern.compile("\\b[a-z]+(?:[A-Z][a-z]*)*\\b");

    /**
     * One workload: its core configuration, and how the starter calls it: the longest wait for a permit, the
     * deadline started at admission (null: none), and whether a second connection (REQUIRES_NEW) is allowed.
     */
    public record WorkloadSettings(
            WorkloadConfig config,
            Duration queueWait,
            @Nullable Duration deadline,
            boolean allowRequiresNew) {
        /** The workload's name. */
        public String name() {
            return config.name();
        }

        /** The full name of one of this workload's properties, e.g. {@code allow-requires-new}. */
        public String property(String field) {
            return PREFIX + "workloads." + name() + "." + field;
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
    private final @Nullable Integer sharedLimit;

    private DbBulkheadSettings(
            String name,
            Map<String, WorkloadSettings> workloads,
            String defaultWorkload,
            boolean allowOpenInView,
            int poolSize,
            Duration leakDetectionThreshold,
            @Nullable Integer sharedLimit) {
        this.sharedLimit = sharedLimit;
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
        var workloads = new LinkedHashMap<String, WorkloadSettings>();
        if (properties.getWorkloads().isEmpty()) {
            int concurrent = poolSize > 0 ? poolSize : 10;
            workloads.put(
                    DEFAULT_WORKLOAD,
                    new WorkloadSettings(
                            WorkloadConfig.recommended(DEFAULT_WORKLOAD, concurrent),
                            RECOMMENDED_QUEUE_WAIT,
                            null,
                            false));
        }
        properties.getWorkloads().forEach((key, w) -> workloads.put(key, workload(key, w)));
        String defaultWorkload = defaultWorkload(properties.getDefaultWorkload(), workloads);
        retryAfter(properties.getWeb().getRetryAfter());
        status(properties.getWeb().getStatus());
        refusalDelay(properties.getWeb());
        Duration leaks = properties.getLeakDetectionThreshold();
        return new DbBulkheadSettings(
                properties.getName(),
                Collections.unmodifiableMap(workloads),
                defaultWorkload,
                properties.isAllowOpenInView(),
                poolSize,
                leaks == null ? Duration.ZERO : leaks,
                properties.getSharedLimit());
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

    /** The fixed hold of every refusal, or null: paced ({@code RefusalPacer}), the default. */
    static @Nullable Duration refusalDelay(DbBulkheadProperties.Web web) {
        Duration delay = web.getRefusalDelay();
        if (delay == null) {
            return null;
        }
        if (delay.isNegative() || delay.compareTo(web.getRetryAfter()) > 0) {
            throw invalid(
                    "web.refusal-delay", delay, "must be >= 0 and at most web.retry-after " + web.getRetryAfter());
        }
        return delay;
    }

    static DbBulkheadProblemResolver.Status status(int status) {
        try {
            return DbBulkheadProblemResolver.Status.of(status);
        } catch (IllegalArgumentException e) {
            throw invalid("web.status", status, "must be 503 or 429");
        }
    }

    /**
     * The barrier these settings describe, over {@code dataSource}: the workloads, the pool size, leak detection,
     * {@code listeners}, then {@code customizers} in order. What the builder refuses fails start-up as a
     * {@link DbBulkheadConfigurationException} naming the property.
     */
    public DbBulkhead build(
            DataSource dataSource, List<BulkheadListener> listeners, List<DbBulkheadBuilderCustomizer> customizers) {
        try {
            var builder = DbBulkhead.builder(dataSource).name(name);
            workloads().forEach(w -> builder.workload(w.config()));
            if (poolSize > 0) {
                builder.poolSize(poolSize);
            }
            builder.leakDetectionThreshold(leakDetectionThreshold);
            if (sharedLimit != null) {
                builder.sharedLimit(sharedLimit);
            }
            listeners.forEach(builder::listener);
            customizers.forEach(c -> c.customize(builder));
            return builder.build();
        } catch (InvalidSettingException refused) {
            throw refused(refused, workloads.keySet());
        }
    }

    /** What the core refused, named as the property that set it ({@code declared}: the workloads properties set). */
    private static DbBulkheadConfigurationException refused(InvalidSettingException e, Collection<String> declared) {
        String workload = e.workload().filter(declared::contains).orElse(null);
        String property = property(e.setting(), workload);
        String rule = inProperties(e.rule(), workload);
        if (e.setting() == Setting.POOL_SIZE) {
            return new DbBulkheadConfigurationException(
                    property + " " + rule + ", was " + e.value() + ": the barrier "
                            + "would admit more operations than the pool has connections, and they would queue inside "
                            + "the pool instead, where nothing bounds or rejects them.",
                    "Lower the workloads' concurrent ("
                            + String.join(
                                    ", ",
                                    declared.stream()
                                            .map(w -> property(Setting.CONCURRENT, w))
                                            .toList())
                            + ") so that they add up to at most the pool size, or raise the pool's maximum size ("
                            + property + "), within the database's connection budget.",
                    property,
                    e);
        }
        if (property == null) {
            return new DbBulkheadConfigurationException(
                    "db-bulkhead: " + e.getMessage(),
                    "Change the DbBulkheadBuilderCustomizer that sets " + e.setting() + ".",
                    null,
                    e);
        }
        return new DbBulkheadConfigurationException(
                property + " " + rule + ", was " + e.value(), "Change " + property + ".", property, e);
    }

    /**
     * The property behind a setting of {@code workload} (null for the barrier's), or null where only a customizer sets
     * it (a workload no property declares, the sizing hint).
     */
    private static @Nullable String property(Setting setting, @Nullable String workload) {
        return switch (setting) {
            case POOL_SIZE -> "spring.datasource.hikari.maximum-pool-size";
            case SIZING_HINT_QUEUE_WAIT, SIZING_HINT_HOLD_TIME -> null;
            case WORKLOAD_NAME -> PREFIX + "workloads";
            default ->
                !setting.perWorkload()
                        ? PREFIX + setting.propertyName()
                        : workload == null ? null : PREFIX + "workloads." + workload + "." + setting.propertyName();
        };
    }

    /** A rule of the core's with the settings it names written as this workload's (or the barrier's) properties. */
    private static String inProperties(String rule, @Nullable String workload) {
        Matcher m = SETTING_NAME.matcher(rule);
        var out = new StringBuilder();
        while (m.find()) {
            String property = null;
            for (Setting s : Setting.values()) {
                if (s.builderName().equals(m.group()) && s != Setting.NAME && s != Setting.WORKLOAD_NAME) {
                    property = property(s, workload);
                }
            }
            m.appendReplacement(out, Matcher.quoteReplacement(property != null ? property : m.group()));
        }
        return m.appendTail(out).toString();
    }

    private static WorkloadSettings workload(String key, DbBulkheadProperties.Workload w) {
        String field = "workloads." + key + ".";
        if (key.isBlank()) {
            throw invalid("workloads", "''", "a workload needs a name");
        }
        if (w.getConcurrent() == null) {
            throw new DbBulkheadConfigurationException(
                    PREFIX + field + "concurrent is not set",
                    "Set " + PREFIX + field + "concurrent to how many operations of workload '" + key
                            + "' may hold a connection at once (at least 1).",
                    PREFIX + field + "concurrent",
                    null);
        }
        Duration queueWait = w.getQueueWait() == null ? DEFAULT_QUEUE_WAIT : w.getQueueWait();
        if (queueWait.isNegative()) {
            throw invalid(field + "queue-wait", queueWait, "must be >= 0");
        }
        if (w.getDeadline() != null
                && (w.getDeadline().isNegative() || w.getDeadline().isZero())) {
            throw invalid(field + "deadline", w.getDeadline(), "must be > 0 (leave it unset for none)");
        }
        try {
            return new WorkloadSettings(w.config(key), queueWait, w.getDeadline(), w.isAllowRequiresNew());
        } catch (InvalidSettingException refused) {
            throw refused(refused, List.of(key));
        }
    }

    private static String defaultWorkload(@Nullable String configured, Map<String, WorkloadSettings> workloads) {
        if (configured == null || configured.isBlank()) {
            if (workloads.size() > 1) {
                throw new DbBulkheadConfigurationException(
                        PREFIX + "default-workload is not set, and " + workloads.size() + " workloads are declared "
                                + workloads.keySet(),
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
        return new DbBulkheadConfigurationException(
                PREFIX + property + " " + rule + ", was " + value,
                "Change " + PREFIX + property + ".",
                PREFIX + property,
                null);
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
        workloads.values().stream()
                .filter(w -> !w.name().equals(defaultWorkload))
                .forEach(ordered::add);
        return ordered;
    }

    /**
     * The workload {@code caller} names ({@code null} or empty: the default one).
     *
     * @throws IllegalArgumentException naming the caller, the workload and the ones declared, when there is none
     */
    public WorkloadSettings named(@Nullable String workload, String caller) {
        String wanted = workload == null || workload.isEmpty() ? defaultWorkload : workload;
        WorkloadSettings found = workloads.get(wanted);
        if (found == null) {
            throw new IllegalArgumentException(caller + " names an unknown workload '" + wanted + "' of db-bulkhead '"
                    + name + "'; known: " + workloads.keySet());
        }
        return found;
    }

    /** The workload called {@code name}, or null. */
    public @Nullable WorkloadSettings workload(String name) {
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
