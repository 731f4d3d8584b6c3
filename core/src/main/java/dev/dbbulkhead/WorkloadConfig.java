package dev.dbbulkhead;

import dev.dbbulkhead.internal.Preconditions;
import java.time.Duration;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Every setting of one workload, checked once: its budget (B, Q) and how it admits. Built by {@link #builder(String)},
 * declared on {@link DbBulkhead.Builder#workload(WorkloadConfig)}:
 * <pre>{@code
 * var interactive = WorkloadConfig.builder("interactive").concurrent(12).extraSlots(24).build();
 * var batch = WorkloadConfig.builder("batch").concurrent(4).adaptiveLimitMin(1).build();
 * DbBulkhead db = DbBulkhead.builder(pool).workload(interactive).workload(batch).build();
 * }</pre>
 * Each setter checks its own value; {@link Builder#build()} checks the settings together. Every refusal is an
 * {@link InvalidSettingException} naming the workload, the {@link Setting} and the value.
 *
 * <p>Immutable and thread-safe.
 */
public record WorkloadConfig(
        String name,
        int concurrent,
        int extraSlots,
        QueuePolicy queue,
        Priority priority,
        boolean predictiveRejection,
        int adaptiveLimitMin,
        Optional<Duration> adaptiveLatencyTarget,
        boolean kinds,
        Optional<Duration> latencyObjective,
        boolean borrowing) {

    /**
     * Every setting, checked together; prefer {@link #builder(String)}, which reads better and has the defaults.
     *
     * @param name the workload's name, unique in its barrier
     * @param concurrent B: how many of its operations may hold a connection at once, at least 1
     * @param extraSlots Q: how many more may be admitted to wait for an execution permit, beyond the limit in force
     * @param queue how the queue admits and serves waiting callers ({@link Builder#queue})
     * @param priority how the workload shares the database with the barrier's others ({@link Builder#priority})
     * @param predictiveRejection whether a caller that almost surely cannot start within what it may wait is refused
     *     at once ({@link Builder#predictiveRejection}); always true for a {@code DEADLINE} queue
     * @param adaptiveLimitMin the adaptive limit's minimum ({@link Builder#adaptiveLimitMin}); 0 for a fixed limit B
     * @param adaptiveLatencyTarget the adaptive limit's latency target ({@link Builder#adaptiveLatencyTarget}); empty:
     *     half of what the callers' deadlines allow
     * @param kinds whether the workload learns its kinds of operation and caps the slow ones while contended ({@link
     *     Builder#kinds})
     * @param latencyObjective a regular workload's latency objective under priorities ({@link
     *     Builder#latencyObjective}); empty: learned
     * @param borrowing whether a regular workload may use the permits other workloads leave idle, up to the
     *     barrier's shared limit ({@link Builder#borrowing}); an elastic workload already runs in what the regular ones
     *     leave, and borrows nothing whatever this says (so that {@code recommended(...).toBuilder().priority(ELASTIC)}
     *     stays valid)
     * @throws InvalidSettingException naming the workload, the {@link Setting} and the value, for the first setting
     *     refused
     */
    public WorkloadConfig {
        var check = new Check(name);
        check.that(concurrent >= 1, Setting.CONCURRENT, concurrent, "must be >= 1");
        check.that(extraSlots >= 0, Setting.EXTRA_SLOTS, extraSlots, "must be >= 0");
        check.that(
                (long) concurrent + extraSlots <= Integer.MAX_VALUE,
                Setting.EXTRA_SLOTS,
                extraSlots,
                "must fit in an int together with concurrent: " + concurrent + " + " + extraSlots + " = "
                        + ((long) concurrent + extraSlots));
        check.that(queue != null, Setting.QUEUE, queue, "must not be null");
        check.that(priority != null, Setting.PRIORITY, priority, "must not be null");
        predictiveRejection |= queue != QueuePolicy.FIFO;
        check.that(
                adaptiveLimitMin >= 0, Setting.ADAPTIVE_LIMIT_MIN, adaptiveLimitMin, "must be >= 0 (0: a fixed limit)");
        check.that(
                adaptiveLimitMin <= concurrent,
                Setting.ADAPTIVE_LIMIT_MIN,
                adaptiveLimitMin,
                "must be <= concurrent " + concurrent);
        check.that(
                adaptiveLatencyTarget != null,
                Setting.ADAPTIVE_LATENCY_TARGET,
                adaptiveLatencyTarget,
                "must not be null (empty: none)");
        Duration target = adaptiveLatencyTarget.orElse(null);
        check.that(target == null || target.isPositive(), Setting.ADAPTIVE_LATENCY_TARGET, target, "must be > 0");
        check.that(
                target == null || adaptiveLimitMin > 0,
                Setting.ADAPTIVE_LATENCY_TARGET,
                target,
                "needs adaptiveLimitMin (the adaptive limit it is the target of)");
        check.that(
                latencyObjective != null,
                Setting.LATENCY_OBJECTIVE,
                latencyObjective,
                "must not be null (empty: learned)");
        Duration objective = latencyObjective.orElse(null);
        check.that(objective == null || objective.isPositive(), Setting.LATENCY_OBJECTIVE, objective, "must be > 0");
        check.that(
                objective == null || priority == Priority.REGULAR,
                Setting.LATENCY_OBJECTIVE,
                objective,
                "is a regular workload's: an elastic workload yields to the regular workloads' objectives");
    }

    /** A builder for the workload called {@code name}. */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The article's workload: B = {@code concurrent}, Q = {@code extraSlots}, nothing else. */
    public static WorkloadConfig of(String name, int concurrent, int extraSlots) {
        return builder(name).concurrent(concurrent).extraSlots(extraSlots).build();
    }

    /**
     * What the measurements recommend for a workload of B = {@code concurrent}: a queue bounded by the callers'
     * deadlines ({@link QueuePolicy#DEADLINE}) with Q = {@value #RECOMMENDED_SLOTS_PER_PERMIT} × B as its memory cap,
     * and kinds of operation learned ({@link Builder#kinds}: slow kinds capped while the workload is contended), and
     * the idle permits of the barrier's other workloads borrowed while they leave them ({@link Builder#borrowing}).
     * Give its callers a {@link Deadline}. Why: {@code docs/performance.md}; how to size B: {@code docs/sizing.md}.
     */
    public static WorkloadConfig recommended(String name, int concurrent) {
        var b = builder(name)
                .concurrent(concurrent)
                .queue(QueuePolicy.DEADLINE)
                .kinds(true)
                .borrowing(true);
        return b.extraSlots((int) Math.min(
                        Integer.MAX_VALUE - (long) concurrent, (long) RECOMMENDED_SLOTS_PER_PERMIT * concurrent))
                .build();
    }

    /** Q per permit in {@link #recommended}: only a memory cap, since the deadline bounds the queue. */
    public static final int RECOMMENDED_SLOTS_PER_PERMIT = 64;

    /** A builder holding these settings, to change some. */
    public Builder toBuilder() {
        var b = new Builder(name);
        b.concurrent = concurrent;
        b.extraSlots = extraSlots;
        b.queue = queue;
        b.priority = priority;
        b.predictiveRejection = predictiveRejection;
        b.adaptiveLimitMin = adaptiveLimitMin;
        b.adaptiveLatencyTarget = adaptiveLatencyTarget.orElse(null);
        b.kinds = kinds;
        b.latencyObjective = latencyObjective.orElse(null);
        b.borrowing = borrowing;
        return b;
    }

    /** Whether the limit adapts (between {@link #adaptiveLimitMin()} and B). */
    public boolean adaptive() {
        return adaptiveLimitMin > 0;
    }

    /** Throws the first refusal, naming the workload, the setting and the value. */
    private record Check(String workload) {
        Check {
            if (Preconditions.notNull(workload, "workload name").isBlank()) {
                throw new InvalidSettingException(
                        null, Setting.WORKLOAD_NAME, "'" + workload + "'", "must not be blank");
            }
        }

        void that(boolean holds, Setting setting, @Nullable Object value, String rule) {
            if (!holds) {
                throw new InvalidSettingException(workload, setting, value, rule);
            }
        }
    }

    /**
     * Builds a {@link WorkloadConfig}. {@link #concurrent(int)} is required; everything else has the article's
     * default (Q = 0, a fixed limit, no prediction). The settings are checked by {@link #build()}, in the record's
     * constructor, the one place each rule is written. Not thread-safe.
     */
    public static final class Builder {
        private final String name;
        private int concurrent;
        private int extraSlots;
        private QueuePolicy queue = QueuePolicy.FIFO;
        private Priority priority = Priority.REGULAR;
        private boolean predictiveRejection;
        private int adaptiveLimitMin;
        private @Nullable Duration adaptiveLatencyTarget;
        private boolean kinds;
        private @Nullable Duration latencyObjective;
        private boolean borrowing;

        private Builder(String name) {
            this.name = new Check(name).workload();
        }

        /** B, at least 1. Required. */
        public Builder concurrent(int concurrent) {
            this.concurrent = concurrent;
            return this;
        }

        /** Q, at least 0; default 0. */
        public Builder extraSlots(int extraSlots) {
            this.extraSlots = extraSlots;
            return this;
        }

        /** How the queue admits and serves waiting callers; default {@link QueuePolicy#FIFO}, the article's. */
        public Builder queue(QueuePolicy queue) {
            this.queue = queue;
            return this;
        }

        /**
         * How the workload shares the database with the barrier's others: {@link Priority#REGULAR} (the default) or
         * {@link Priority#ELASTIC} (background work that gets what the regular workloads leave, as long as they meet
         * their latency objectives ({@link #latencyObjective}), at least one permit).
         */
        public Builder priority(Priority priority) {
            this.priority = priority;
            return this;
        }

        /**
         * Predictive rejection on a {@link QueuePolicy#FIFO} queue: with no permit free, a caller whose expected wait
         * for an execution permit (its place in line, over the rate at which the workload's permits come back: L over
         * the mean hold of its recent operations) is longer than it may wait (its queue wait, or what is left of its
         * deadline) is refused at once with {@link WouldTimeOutException}, instead of being admitted to wait and then
         * time out. The {@code DEADLINE} policies always predict. Default off: the article's barrier decides on counts
         * only. When to use it: {@code docs/sizing.md}.
         */
        public Builder predictiveRejection(boolean enabled) {
            this.predictiveRejection = enabled;
            return this;
        }

        /**
         * An adaptive limit: the number of the workload's operations holding an execution permit, L, moves between
         * {@code min} and B, to the lowest concurrency that still gives the most throughput within a latency
         * target ({@link #adaptiveLatencyTarget}). It starts at B and only ever lowers the workload's budget; Q stays
         * as it is. Without it (the default), a fixed limit B, as the article's barrier has. The algorithm and when to
         * use it: {@code docs/sizing.md}.
         */
        public Builder adaptiveLimitMin(int min) {
            new Check(name).that(min >= 1, Setting.ADAPTIVE_LIMIT_MIN, min, "must be >= 1");
            this.adaptiveLimitMin = min;
            return this;
        }

        /**
         * The adaptive limit's latency target: the mean time from call to release (permit wait + hold) above which
         * L is cut. Default: half of what the callers' deadlines allow (callers without a deadline set none). Needs
         * {@link #adaptiveLimitMin}.
         */
        public Builder adaptiveLatencyTarget(Duration target) {
            this.adaptiveLatencyTarget = target;
            return this;
        }

        /**
         * Kinds of operation, learned: each operation's kind is its call site (the class of its {@code SqlWork}: one
         * per lambda in the source) or the name its caller gives ({@link TransactionOptions#kind}). The workload
         * measures each kind's arrivals and holds; while the workload is contended (no execution permit free, now or
         * for a caller in the last 100 ms), a kind whose operations hold their connection more than twice as long as
         * the median operation may have at most its share of the arrivals, times the median's hold over its own, of
         * the limit inside (at least one): its other callers are refused at once with {@link KindCappedException}.
         * Slow operations then cannot take the connections that fast ones would turn into many completions.
         * Uncontended, it caps nothing. Default off, as the article's barrier; callers of
         * {@code acquire()} have no kind. The rule and its measurements: {@code docs/sizing.md}.
         */
        public Builder kinds(boolean enabled) {
            this.kinds = enabled;
            return this;
        }

        /**
         * A regular workload's latency objective, when the barrier has elastic workloads ({@link Priority#ELASTIC}):
         * the 99th percentile of its operations' latency (the wait for a permit plus the hold; a caller refused
         * counts as over it) that elastic work must leave it. Elastic allowances grow while every regular workload
         * meets its objective and shrink when one misses it ({@link Sharing}). Default: learned, 1.5 × the p99 its
         * operations had while elastic work ran at its floor of one permit, measured again every minute.
         */
        public Builder latencyObjective(Duration objective) {
            this.latencyObjective = objective;
            return this;
        }

        /**
         * Whether this regular workload may use the permits the barrier's other workloads leave idle, up to the shared
         * limit ({@code DbBulkhead.Builder.sharedLimit}; by default the workloads' B added up, or the pool's size with
         * an elastic workload). Its own B stays its guarantee, and so does every other workload's: while it borrows,
         * an idle workload lends all its permits, and when its callers come back they get them back in admission order
         * as the borrowed operations end (none is pre-empted): its first caller waits at most one borrowed hold and a
         * tick of the barrier's clock (10 ms), so give a workload that lends a queue wait longer than that. Extra room
         * goes to the borrowers in the order they were declared. Default off, as the article's barrier; on in
         * {@link WorkloadConfig#recommended}. A barrier of one workload has nothing to borrow.
         */
        public Builder borrowing(boolean enabled) {
            this.borrowing = enabled;
            return this;
        }

        /** The settings, checked together. */
        public WorkloadConfig build() {
            return new WorkloadConfig(
                    name,
                    concurrent,
                    extraSlots,
                    queue,
                    priority,
                    predictiveRejection,
                    adaptiveLimitMin,
                    Optional.ofNullable(adaptiveLatencyTarget),
                    kinds,
                    Optional.ofNullable(latencyObjective),
                    borrowing);
        }
    }
}
