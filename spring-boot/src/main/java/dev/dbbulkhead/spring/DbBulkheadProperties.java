package dev.dbbulkhead.spring;

import dev.dbbulkhead.Priority;
import dev.dbbulkhead.QueuePolicy;
import dev.dbbulkhead.WorkloadConfig;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code db-bulkhead.*} properties. Checked at start-up by {@link DbBulkheadSettings}, whose messages name the
 * property and its value.
 *
 * <pre>
 * db-bulkhead.workloads.interactive.concurrent=12
 * db-bulkhead.workloads.batch.concurrent=4
 * db-bulkhead.default-workload=interactive
 * </pre>
 *
 * A declared workload's defaults are the article's (a FIFO queue of {@code extra-slots}, 0 unless set, and a 100 ms
 * {@code queue-wait}); what the measurements recommend for a web application is {@code queue=deadline} and a 500 ms
 * {@code queue-wait}, with {@code borrowing=true} for the workloads users wait on ({@code docs/spring.md}). With no
 * workload declared, one workload named {@code default} is created with that recommendation
 * ({@link WorkloadConfig#recommended}) and {@code concurrent} = the pool's maximum size.
 */
@ConfigurationProperties("db-bulkhead")
public class DbBulkheadProperties {
    /** Whether the barrier is created at all. */
    private boolean enabled = true;
    /** The barrier's name in messages, metrics and the actuator endpoint. */
    private String name = "db";
    /** The workload used where none is named; required when more than one is declared. */
    private @Nullable String defaultWorkload;
    /** Allow JPA's open-in-view, which keeps the connection past the permit's release. */
    private boolean allowOpenInView;
    /**
     * Connections taken from the DataSource outside any admission, once the application has started: count (counted
     * in db.bulkhead.connections.unadmitted, each call site logged once), refuse (getConnection fails, naming the
     * caller) or off.
     */
    private UnadmittedConnections.Mode unadmittedConnections = UnadmittedConnections.Mode.COUNT;
    /**
     * Leak detection: a lease open for longer than this (an admitted method that has not returned) is logged once,
     * with the stack that acquired it, as HikariCP's leakDetectionThreshold does for connections. Zero turns it off.
     */
    private Duration leakDetectionThreshold = Duration.ZERO;
    /**
     * The most operations of all workloads in flight at once, which elastic workloads share with the regular ones.
     * Default: the pool's maximum size.
     */
    private @Nullable Integer sharedLimit;
    /**
     * The workloads, by name: each with concurrent (B: how many may hold a connection at once; required),
     * extra-slots (Q: how many more may wait; default 0), queue (fifo, the default, or deadline: admission bounded by
     * the callers' deadlines, with Q only a memory cap), priority (regular, the default, or elastic), queue-wait
     * (default 100ms), deadline (none by default), predictive-rejection (default false),
     * adaptive-limit-min (none: a fixed limit), adaptive-latency-target (half of what deadlines allow) and
     * allow-requires-new (default false). Without any, one workload named 'default' with concurrent and extra-slots
     * both the pool's size.
     */
    private Map<String, Workload> workloads = new LinkedHashMap<>();

    private final Web web = new Web();

    /**
     * One workload's budget and waits. The budget and admission settings map one to one onto the core's
     * {@link WorkloadConfig} ({@link #config}), which checks them; queue-wait, deadline and allow-requires-new are
     * how the starter calls the workload.
     */
    public static class Workload {
        /** B: operations of this workload that may hold a connection at once. Required. */
        private @Nullable Integer concurrent;
        /**
         * Q: operations more that may wait for an execution permit. Default: 64 × concurrent for a deadline queue
         * (only a memory cap), 0 for fifo (the article's).
         */
        private @Nullable Integer extraSlots;
        /**
         * How the queue admits and serves waiting callers: fifo (the article's, the default: at most Q wait, in
         * arrival order, each up to its queue wait) or deadline (recommended: a caller is admitted while its expected
         * start leaves time for its work within its queue wait or deadline; Q is only a memory cap).
         */
        private QueuePolicy queue = QueuePolicy.FIFO;
        /**
         * How the workload shares the database with the others: regular (admitted up to its concurrent, first) or
         * elastic (background work: what the regular workloads leave of db-bulkhead.shared-limit, as long as they
         * meet their latency objectives, at least one permit).
         */
        private Priority priority = Priority.REGULAR;
        /** How long an operation may wait for an execution permit. */
        private Duration queueWait = DbBulkheadSettings.DEFAULT_QUEUE_WAIT;
        /** A deadline started at admission: bounds the permit wait and, in AdmittedTransactionTemplate, the
         * transaction's timeout. */
        private @Nullable Duration deadline;
        /** Allow REQUIRES_NEW (a second connection) while an admitted transaction is suspended on the thread. */
        private boolean allowRequiresNew;
        /** Refuse at once a caller that almost surely (99 %) cannot get a permit within its queue wait or deadline. */
        private boolean predictiveRejection;
        /**
         * Learn kinds of operation (each @DbWorkload method is one; a kind's name can be set with the annotation's
         * {@code kind}) and, while the workload is contended, cap the kinds that hold their connection far longer than
         * the median operation.
         */
        private boolean kinds;
        /**
         * A regular workload may use the permits the other workloads leave idle, up to db-bulkhead.shared-limit (by
         * default what the workloads' concurrent add up to, or the pool size beside an elastic workload), and gives
         * them back in admission order as their callers return (each waits at most one borrowed hold). Recommended
         * with a queue wait of at least a few holds.
         */
        private boolean borrowing;
        /** When set, the workload's limit adapts to the database's latency, between this minimum and concurrent. */
        private @Nullable Integer adaptiveLimitMin;
        /**
         * The adaptive limit's latency target: the mean time from call to release above which it is cut. Default:
         * half of what the callers' deadlines allow.
         */
        private @Nullable Duration adaptiveLatencyTarget;
        /**
         * A regular workload beside an elastic one: the p99 of its operations' permit wait plus hold that elastic work
         * must leave it. Default: learned, 1.5 × its p99 while elastic work ran at its floor.
         */
        private @Nullable Duration latencyObjective;

        /**
         * These settings as the core's workload configuration, checked there.
         *
         * @throws dev.dbbulkhead.InvalidSettingException naming the setting the core refused
         */
        WorkloadConfig config(String name) {
            var config = WorkloadConfig.builder(name)
                    .concurrent(concurrent == null ? 0 : concurrent) // 0: refused
                    .extraSlots(extraSlots != null ? extraSlots : defaultExtraSlots())
                    .queue(queue)
                    .priority(priority)
                    .predictiveRejection(predictiveRejection)
                    .kinds(kinds)
                    .borrowing(borrowing);
            if (adaptiveLimitMin != null) {
                config.adaptiveLimitMin(adaptiveLimitMin);
            }
            if (adaptiveLatencyTarget != null) {
                config.adaptiveLatencyTarget(adaptiveLatencyTarget);
            }
            if (latencyObjective != null) {
                config.latencyObjective(latencyObjective);
            }
            return config.build();
        }

        public Priority getPriority() {
            return priority;
        }

        public void setPriority(Priority priority) {
            this.priority = priority;
        }

        public QueuePolicy getQueue() {
            return queue;
        }

        public void setQueue(QueuePolicy queue) {
            this.queue = queue;
        }

        public @Nullable Duration getAdaptiveLatencyTarget() {
            return adaptiveLatencyTarget;
        }

        public void setAdaptiveLatencyTarget(@Nullable Duration adaptiveLatencyTarget) {
            this.adaptiveLatencyTarget = adaptiveLatencyTarget;
        }

        public @Nullable Duration getLatencyObjective() {
            return latencyObjective;
        }

        public void setLatencyObjective(@Nullable Duration latencyObjective) {
            this.latencyObjective = latencyObjective;
        }

        public @Nullable Integer getAdaptiveLimitMin() {
            return adaptiveLimitMin;
        }

        public void setAdaptiveLimitMin(@Nullable Integer adaptiveLimitMin) {
            this.adaptiveLimitMin = adaptiveLimitMin;
        }

        public boolean isBorrowing() {
            return borrowing;
        }

        public void setBorrowing(boolean borrowing) {
            this.borrowing = borrowing;
        }

        public boolean isKinds() {
            return kinds;
        }

        public void setKinds(boolean kinds) {
            this.kinds = kinds;
        }

        public boolean isPredictiveRejection() {
            return predictiveRejection;
        }

        public void setPredictiveRejection(boolean predictiveRejection) {
            this.predictiveRejection = predictiveRejection;
        }

        public @Nullable Integer getConcurrent() {
            return concurrent;
        }

        public void setConcurrent(@Nullable Integer concurrent) {
            this.concurrent = concurrent;
        }

        public @Nullable Integer getExtraSlots() {
            return extraSlots;
        }

        /** Q when none is set: 64 × concurrent for a deadline queue ({@link WorkloadConfig#recommended}), else 0. */
        private int defaultExtraSlots() {
            if (queue != QueuePolicy.DEADLINE || concurrent == null || concurrent < 1) {
                return 0;
            }
            return (int) Math.min(
                    Integer.MAX_VALUE - (long) concurrent,
                    (long) WorkloadConfig.RECOMMENDED_SLOTS_PER_PERMIT * concurrent);
        }

        public void setExtraSlots(@Nullable Integer extraSlots) {
            this.extraSlots = extraSlots;
        }

        public Duration getQueueWait() {
            return queueWait;
        }

        public void setQueueWait(Duration queueWait) {
            this.queueWait = queueWait;
        }

        public @Nullable Duration getDeadline() {
            return deadline;
        }

        public void setDeadline(@Nullable Duration deadline) {
            this.deadline = deadline;
        }

        public boolean isAllowRequiresNew() {
            return allowRequiresNew;
        }

        public void setAllowRequiresNew(boolean allowRequiresNew) {
            this.allowRequiresNew = allowRequiresNew;
        }
    }

    /** How a rejection thrown out of a Spring MVC controller is answered. */
    public static class Web {
        /** Whether a rejection becomes 503 Service Unavailable with Retry-After and a problem body. */
        private boolean enabled = true;
        /** The Retry-After value, in whole seconds (at least 1). */
        private Duration retryAfter = Duration.ofSeconds(1);
        /**
         * The status of a refusal: 503 (Service Unavailable, the default; Tomcat closes the connection after it) or
         * 429 (Too Many Requests; the connection stays open for the client's next request).
         */
        private int status = 503;
        /**
         * How long a refusal is held before it is answered (at most retry-after; 0: at once). Default: paced, on
         * virtual threads only: each refusal held for as many of its workload's completions as there are refusals held
         * already, so that clients that come straight back are answered at about the rate the workload serves.
         */
        private @Nullable Duration refusalDelay;

        public @Nullable Duration getRefusalDelay() {
            return refusalDelay;
        }

        public void setRefusalDelay(@Nullable Duration refusalDelay) {
            this.refusalDelay = refusalDelay;
        }

        public int getStatus() {
            return status;
        }

        public void setStatus(int status) {
            this.status = status;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getRetryAfter() {
            return retryAfter;
        }

        public void setRetryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public @Nullable String getDefaultWorkload() {
        return defaultWorkload;
    }

    public void setDefaultWorkload(@Nullable String defaultWorkload) {
        this.defaultWorkload = defaultWorkload;
    }

    public Duration getLeakDetectionThreshold() {
        return leakDetectionThreshold;
    }

    public void setLeakDetectionThreshold(Duration leakDetectionThreshold) {
        this.leakDetectionThreshold = leakDetectionThreshold;
    }

    public @Nullable Integer getSharedLimit() {
        return sharedLimit;
    }

    public void setSharedLimit(@Nullable Integer sharedLimit) {
        this.sharedLimit = sharedLimit;
    }

    public UnadmittedConnections.Mode getUnadmittedConnections() {
        return unadmittedConnections;
    }

    public void setUnadmittedConnections(UnadmittedConnections.Mode unadmittedConnections) {
        this.unadmittedConnections = unadmittedConnections;
    }

    public boolean isAllowOpenInView() {
        return allowOpenInView;
    }

    public void setAllowOpenInView(boolean allowOpenInView) {
        this.allowOpenInView = allowOpenInView;
    }

    public Map<String, Workload> getWorkloads() {
        return workloads;
    }

    public void setWorkloads(Map<String, Workload> workloads) {
        this.workloads = workloads;
    }

    public Web getWeb() {
        return web;
    }
}
