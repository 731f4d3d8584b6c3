package dev.dbbulkhead;

import dev.dbbulkhead.internal.Admission;
import dev.dbbulkhead.internal.Frames;
import dev.dbbulkhead.internal.Nanos;
import dev.dbbulkhead.internal.Permits;
import dev.dbbulkhead.internal.PoolSizes;
import dev.dbbulkhead.internal.Preconditions;
import dev.dbbulkhead.internal.Snapshot;
import dev.dbbulkhead.internal.Telemetry;
import dev.dbbulkhead.internal.TransactionRunner;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * Admission control in front of a JDBC connection pool: bounds how many operations run against the database
 * (B, {@code concurrent}) and how many more may wait for their turn (Q, {@code extraSlots}), rejects the rest
 * at once, and owns each operation's JDBC transaction so that its permits are never lost or inflated.
 *
 * <p>Share one instance per application instance and pool, never one per request. The article's API:
 * <pre>{@code
 * var gate = new DbBulkhead(pool, 16, 32);
 * int n = gate.transaction(Duration.ofMillis(50), connection -> {
 *     try (var s = connection.prepareStatement("UPDATE account SET balance = balance - ? WHERE id = ?")) { ... }
 * });
 * }</pre>
 * Named workloads with their own budgets over one pool, deadlines and listeners come from {@link #builder}.
 *
 * <p>{@code work} runs synchronously on the caller's thread and must return a fully materialised value; it must
 * not commit, roll back, change auto-commit or close the connection (the connection it gets refuses to), must
 * not return a {@code Connection}, {@code Statement}, {@code ResultSet} or stream (rejected), and must not
 * start asynchronous database work. The barrier is not reentrant: calling it again from inside {@code work}, or
 * on a thread that holds one of its {@link Lease}s, fails with {@link IllegalStateException}.
 *
 * <p>Thread-safe.
 */
public final class DbBulkhead {
    /** The work of one transaction. Runs synchronously; its return value reaches the caller after commit. */
    @FunctionalInterface
    public interface SqlWork<T> {
        T run(Connection connection) throws SQLException;
    }

    /** The name of the workload that the article's constructor creates. */
    public static final String DEFAULT_WORKLOAD = "default";

    private static final System.Logger LOG = System.getLogger(DbBulkhead.class.getName());

    private final String name;
    private final DataSource source;
    private final Map<String, Workload> workloads;
    private final Workload defaultWorkload;

    /**
     * The article's barrier: one workload of {@code concurrent} execution permits and {@code concurrent +
     * extraSlots} admission slots over {@code source}.
     *
     * @throws NullPointerException when {@code source} is null
     * @throws IllegalArgumentException when {@code concurrent < 1}, {@code extraSlots < 0}, or their sum
     *     overflows an int
     */
    public DbBulkhead(DataSource source, int concurrent, int extraSlots) {
        // The article's barrier is not refused when B exceeds the pool size, as in the article: it is logged.
        this(builder(source).workload(DEFAULT_WORKLOAD, concurrent, extraSlots).validated(false));
    }

    private DbBulkhead(Builder b) {
        this.name = b.name;
        this.source = b.source;
        var telemetry = new Telemetry(b.listeners, b.nanoClock, LOG);
        // Initialise here the classes a rejection or an outcome needs: a class whose initialisation fails (say, on
        // a caller at its stack limit) stays unusable for the JVM's lifetime, so it must not happen in a call.
        initialised(RejectionReason.values(), Outcome.values(), DeadlineExceededException.Stage.values(),
                Permits.Entry.values(), Snapshot.millis(0));
        var runner = new TransactionRunner(b.source, telemetry, b.statementTimeouts, b.lockTimeouts);
        var shared = new Admission.Shared(b.name, new Frames(), telemetry, runner,
                new RejectionFactory(b.rejectionStackTraces), b.leakThreshold == null ? 0 : Nanos.of(b.leakThreshold));
        var map = new LinkedHashMap<String, Workload>();
        for (var spec : b.specs.values()) {
            String w = spec.name();
            var options = new Admission.Options(b.predictive.contains(w), b.audits.getOrDefault(w, 0.0),
                    b.adaptive.getOrDefault(w, 0), b.latencyTargets.containsKey(w) ? Nanos.of(b.latencyTargets.get(w))
                            : 0);
            map.put(w, new Workload(w, spec.concurrent(), spec.extraSlots(), options, shared));
        }
        this.workloads = Collections.unmodifiableMap(map);
        this.defaultWorkload = map.values().iterator().next();
    }

    private static void initialised(Object... classes) {
        // Nothing to do: evaluating the arguments initialised them.
    }

    /** A builder for a barrier with named workloads, deadlines and listeners over {@code source}. */
    public static Builder builder(DataSource source) {
        return new Builder(source);
    }

    /**
     * Runs {@code work} in one JDBC transaction of the default workload (the first one declared), waiting at
     * most {@code queueWait} for an execution permit.
     *
     * <ol>
     * <li>No admission slot free: {@link AdmissionFullException}, at once.</li>
     * <li>No execution permit within {@code queueWait}: {@link QueueTimeoutException}; interrupted while
     * waiting: {@link InterruptedException}. Only the admission slot is released.</li>
     * <li>Otherwise: a connection, auto-commit off, {@code work}, {@code commit()}, and the value is returned
     * after the connection is closed. If {@code work} throws, the transaction is rolled back (a rollback failure
     * is added as suppressed) and the same exception is rethrown. If {@code commit()} fails, or cleanup after
     * it, {@link CommitOutcomeUnknownException}: the write may have happened.</li>
     * </ol>
     * Both permits are released after the connection is closed, by this thread, whatever happened.
     *
     * @throws NullPointerException when {@code queueWait} or {@code work} is null
     * @throws IllegalArgumentException when {@code queueWait} is negative
     * @throws IllegalStateException when called from inside {@code work} of this barrier on the same thread, or
     *     when {@code work} returns a JDBC resource or a stream
     */
    public <T> T transaction(Duration queueWait, SqlWork<T> work) throws SQLException, InterruptedException {
        return defaultWorkload.transaction(queueWait, work);
    }

    /** Runs {@code work} in the default workload, bounded end to end by {@code deadline}. */
    public <T> T transaction(Deadline deadline, SqlWork<T> work) throws SQLException, InterruptedException {
        return defaultWorkload.transaction(deadline, work);
    }

    /** Runs {@code work} in the default workload with {@code options}. */
    public <T> T transaction(TransactionOptions options, SqlWork<T> work)
            throws SQLException, InterruptedException {
        return defaultWorkload.transaction(options, work);
    }

    /**
     * Admission to the default workload without a transaction, for callers that run their own (Spring's
     * {@code TransactionTemplate}, jOOQ, JPA): see {@link Workload#acquire(Duration)} and {@link Lease}.
     */
    public Lease acquire(Duration queueWait) throws InterruptedException {
        return defaultWorkload.acquire(queueWait);
    }

    /** Admission to the default workload without a transaction, bounded by {@code deadline}. */
    public Lease acquire(Deadline deadline) throws InterruptedException {
        return defaultWorkload.acquire(deadline);
    }

    /** The workload called {@code name}. */
    public Workload workload(String name) {
        Workload w = workloads.get(Preconditions.notNull(name, "workload name"));
        if (w == null) {
            throw new IllegalArgumentException("unknown workload '" + name + "' in db-bulkhead '" + this.name
                    + "'; known: " + workloads.keySet());
        }
        return w;
    }

    /** All workloads, in the order they were declared; the first is the default. */
    public List<Workload> workloads() {
        return List.copyOf(workloads.values());
    }

    /** The default workload. */
    public Workload defaultWorkload() {
        return defaultWorkload;
    }

    /** The barrier's name, used in messages and metrics. */
    public String name() {
        return name;
    }

    /** The data source behind the barrier. */
    public DataSource dataSource() {
        return source;
    }

    /** Free execution permits of the default workload; for observation only (deciding from it is a race). */
    public int available() {
        return defaultWorkload.available();
    }

    /** Free admission slots of the default workload; for observation only. */
    public int availableSlots() {
        return defaultWorkload.availableSlots();
    }

    @Override
    public String toString() {
        return "DbBulkhead[" + name + ", workloads=" + workloads.values() + "]";
    }

    /**
     * Builds a {@link DbBulkhead}. Each setter checks its own argument; {@link #build()} checks the whole: at
     * least one workload, and the workloads' B adding up to no more than the pool size when the pool size is
     * known (given with {@link #poolSize} or read from a HikariCP {@code HikariDataSource}).
     *
     * <p>Not thread-safe; build once, share the barrier.
     */
    public static final class Builder {
        private final DataSource source;
        private final Map<String, WorkloadSpec> specs = new LinkedHashMap<>();
        private final List<BulkheadListener> listeners = new ArrayList<>();
        private final Set<String> predictive = new LinkedHashSet<>();
        private final Map<String, Integer> adaptive = new LinkedHashMap<>();
        private final Map<String, Duration> latencyTargets = new LinkedHashMap<>();
        private final Map<String, Double> audits = new LinkedHashMap<>();
        private String name = "db";
        private int poolSize = -1;
        private LongSupplier nanoClock = System::nanoTime;
        private boolean statementTimeouts = true;
        private boolean lockTimeouts;
        private boolean rejectionStackTraces;
        private Duration hintQueueWait;
        private Duration hintHoldTime;
        private Duration leakThreshold;

        private Builder(DataSource source) {
            this.source = Preconditions.notNull(source, "source");
        }

        /** The barrier's name in messages and metrics; default {@code "db"}. */
        public Builder name(String name) {
            this.name = nameOf(name, null, "name");
            return this;
        }

        /**
         * Declares a workload with B = {@code concurrent} execution permits and Q = {@code extraSlots} extra
         * admission slots. The first workload declared is the default one.
         */
        public Builder workload(String name, int concurrent, int extraSlots) {
            var spec = new WorkloadSpec(name, concurrent, extraSlots);
            if (specs.putIfAbsent(spec.name(), spec) != null) {
                throw new InvalidSettingException(spec.name(), "workload name", spec.name(),
                        "workload '" + spec.name() + "' is declared twice", true);
            }
            return this;
        }

        /**
         * The size of the pool behind the data source, to check that the workloads' B add up to no more than
         * it. Not needed for a {@code HikariDataSource}, whose {@code maximumPoolSize} is read.
         */
        public Builder poolSize(int poolSize) {
            if (poolSize < 1) {
                throw new InvalidSettingException(null, "poolSize", poolSize, "must be >= 1");
            }
            this.poolSize = poolSize;
            return this;
        }

        /**
         * Predictive rejection for these workloads (declared before or after): a caller whose expected wait for an
         * execution permit (the callers queued ahead, B, and the workload's recent connection hold time) is longer than
         * it may wait (its queue wait, or what is left of its deadline) is refused at once with
         * {@link WouldTimeOutException}, instead of being admitted to wait and then time out. The estimate is
         * {@code (queued + 1) × hold / B}, the mean wait when B permits free up once per average hold; it needs the
         * clock read twice per operation. Off by default: the article's barrier decides
         * on counts only. When to use it: {@code docs/sizing.md}.
         */
        public Builder predictiveRejection(String... workloads) {
            for (String w : Preconditions.notNull(workloads, "workloads")) {
                predictive.add(nameOf(w, null, "predictiveRejection"));
            }
            return this;
        }

        /**
         * An adaptive limit for {@code workload} (declared before or after): the number of its operations holding an
         * execution permit, L, moves between {@code minLimit} and its B, to the lowest concurrency that still gives
         * the most throughput within a latency target. On a clock of its own, it alternates L between two levels
         * a fifth apart, one window of about five mean hold times each, and compares the throughput of the two: it
         * raises L while more concurrency still buys throughput, lowers it where it only buys latency, and cuts it
         * when the mean time from call to release passes the target (half of what the callers' deadlines allow, by
         * default) or when operations fail for saturation ({@link BulkheadListener#onOverloadSignal}; never the
         * application's own errors). It starts at B, only ever lowers the workload's budget (the workloads' B still
         * add up to no more than the pool), and leaves Q as it is. Off by default: the article's barrier has a fixed
         * B. The algorithm and when to use it: {@code docs/sizing.md}.
         *
         * @throws InvalidSettingException when {@code minLimit < 1} (and, at {@link #build()}, when it exceeds the
         *     workload's B)
         */
        public Builder adaptiveLimit(String workload, int minLimit) {
            String w = nameOf(workload, null, "adaptiveLimit");
            if (minLimit < 1) {
                throw new InvalidSettingException(w, "adaptiveLimit minLimit", minLimit, "must be >= 1");
            }
            adaptive.put(w, minLimit);
            return this;
        }

        /**
         * {@link #adaptiveLimit(String, int)} with an explicit latency target: the mean time from call to release
         * (permit wait + hold) above which L is cut, instead of half of what the callers' deadlines allow (callers
         * without a deadline set no target).
         *
         * @throws InvalidSettingException when {@code minLimit < 1} or {@code latencyTarget} is not positive
         */
        public Builder adaptiveLimit(String workload, int minLimit, Duration latencyTarget) {
            adaptiveLimit(workload, minLimit);
            String w = nameOf(workload, null, "adaptiveLimit");
            if (latencyTarget == null || latencyTarget.isNegative() || latencyTarget.isZero()) {
                throw new InvalidSettingException(w, "adaptiveLimit latencyTarget", latencyTarget, "must be > 0");
            }
            latencyTargets.put(w, latencyTarget);
            return this;
        }

        /**
         * Audits predictive rejection on {@code workload}: a random {@code fraction} (0 to 1; e.g. 0.02) of the
         * callers it would refuse are admitted anyway, and whether each got its permit within what it allowed is
         * reported ({@link BulkheadListener#onPredictionAudited}): the share of the audited that were served
         * estimates how many refusals were false. Needs {@link #predictiveRejection}. Off (0) by default.
         *
         * @throws InvalidSettingException when {@code fraction} is not between 0 and 1
         */
        public Builder predictionAudit(String workload, double fraction) {
            String w = nameOf(workload, null, "predictionAudit");
            if (!(fraction >= 0 && fraction <= 1)) {
                throw new InvalidSettingException(w, "predictionAudit", fraction, "must be between 0 and 1");
            }
            audits.put(w, fraction);
            return this;
        }

        /** Adds a listener; several are called in the order added. */
        public Builder listener(BulkheadListener listener) {
            listeners.add(Preconditions.notNull(listener, "listener"));
            return this;
        }

        /** The nano clock for deadlines and durations; default {@link System#nanoTime()}. For tests. */
        public Builder nanoClock(LongSupplier nanoClock) {
            this.nanoClock = Preconditions.notNull(nanoClock, "nanoClock");
            return this;
        }

        /**
         * On PostgreSQL, bound the statements of a transaction that has a {@link Deadline} with
         * {@code SET LOCAL statement_timeout} set to its remaining time (rounded up to whole milliseconds, at
         * least 1). Default on. Other databases: set {@code Statement.setQueryTimeout} yourself.
         */
        public Builder statementTimeoutFromDeadline(boolean enabled) {
            this.statementTimeouts = enabled;
            return this;
        }

        /**
         * Also set {@code SET LOCAL lock_timeout} from the deadline's remaining time, so that a lock wait fails
         * with SQLState 55P03 rather than 57014. Default off.
         */
        public Builder lockTimeoutFromDeadline(boolean enabled) {
            this.lockTimeouts = enabled;
            return this;
        }

        /**
         * Whether rejections ({@link BulkheadRejectedException}s) capture their stack trace. Default off: under
         * overload every excess caller is rejected, a stack trace makes each rejection about ten times dearer
         * (2.3 µs against 0.2 µs here, {@code docs/performance.md}), and the message already names the barrier,
         * the workload, B, Q and the wait. Turn it on to see where rejected calls come from while debugging.
         */
        public Builder rejectionStackTraces(boolean enabled) {
            this.rejectionStackTraces = enabled;
            return this;
        }

        /**
         * The queue wait and the typical connection hold time you expect: {@link #build()} then logs a warning
         * for each workload whose Q exceeds what B permits can serve within the wait, {@code B × queueWait /
         * holdTime}, since the excess only turns rejections into timeouts.
         */
        public Builder sizingHint(Duration queueWait, Duration holdTime) {
            Preconditions.notNull(queueWait, "sizingHint.queueWait");
            Preconditions.notNull(holdTime, "sizingHint.holdTime");
            if (queueWait.isNegative()) {
                throw new InvalidSettingException(null, "sizingHint.queueWait", queueWait, "must not be negative");
            }
            if (holdTime.isNegative() || holdTime.isZero()) {
                throw new InvalidSettingException(null, "sizingHint.holdTime", holdTime, "must be > 0");
            }
            this.hintQueueWait = queueWait;
            this.hintHoldTime = holdTime;
            return this;
        }

        /**
         * Leak detection, as HikariCP's {@code leakDetectionThreshold}: a {@link Lease} from {@code acquire()} still
         * open after {@code threshold} is logged once, as a warning naming the workload with the stack of the call
         * that acquired it (and {@link BulkheadListener#onLeakSuspected} is called); its hold is kept out of the
         * adaptive limit's measurements. {@link Duration#ZERO} (the default) turns it off: it costs a stack capture
         * and a scheduled task per lease. Independently of it, a lease whose thread terminates without closing it is
         * always reclaimed ({@link BulkheadListener#onLeaseReclaimed}).
         */
        public Builder leakDetectionThreshold(Duration threshold) {
            Preconditions.notNull(threshold, "leakDetectionThreshold");
            if (threshold.isNegative()) {
                throw new InvalidSettingException(null, "leakDetectionThreshold", threshold, "must not be negative");
            }
            this.leakThreshold = threshold;
            return this;
        }

        public DbBulkhead build() {
            return new DbBulkhead(validated(true));
        }

        private WorkloadSpec declared(String workload, String option) {
            WorkloadSpec spec = specs.get(workload);
            if (spec == null) {
                throw new InvalidSettingException(workload, option, workload, "db-bulkhead '" + name + "': " + option
                        + " names workload '" + workload + "', which is not declared; declared: " + specs.keySet(),
                        true);
            }
            return spec;
        }

        private Builder validated(boolean checkPoolSize) {
            if (specs.isEmpty()) {
                throw new IllegalStateException("db-bulkhead '" + name + "': declare at least one workload");
            }
            for (String w : predictive) {
                declared(w, "predictiveRejection");
            }
            for (String w : audits.keySet()) {
                declared(w, "predictionAudit");
                if (!predictive.contains(w)) {
                    throw new InvalidSettingException(w, "predictionAudit", audits.get(w), "db-bulkhead '" + name
                            + "', workload '" + w + "': predictionAudit needs predictiveRejection on the workload",
                            true);
                }
            }
            for (var a : adaptive.entrySet()) {
                int b = declared(a.getKey(), "adaptiveLimit").concurrent();
                if (a.getValue() > b) {
                    throw new InvalidSettingException(a.getKey(), "adaptiveLimit minLimit", a.getValue(),
                            "db-bulkhead '" + name + "', workload '" + a.getKey() + "': adaptiveLimit minLimit must be "
                                    + "<= its concurrent " + b + ", was " + a.getValue(), true);
                }
            }
            int pool = poolSize > 0 ? poolSize : PoolSizes.maximumPoolSize(source);
            if (checkPoolSize && pool <= 0) {
                LOG.log(Level.WARNING, "db-bulkhead ''{0}'': cannot tell the pool size of {1}, so the workloads'' "
                        + "concurrent {2} are not checked against it; give it with poolSize(...)", name,
                        source.getClass().getName(), describe());
            }
            long sum = specs.values().stream().mapToLong(WorkloadSpec::concurrent).sum();
            if (pool > 0 && sum > pool && !checkPoolSize) {
                LOG.log(Level.WARNING, "db-bulkhead ''{0}'': concurrent {1} is more than the pool size {2} of {3}: "
                        + "the {4} operations beyond the pool wait inside it, up to its connection timeout, instead of "
                        + "in the barrier; lower concurrent to at most {2}", name, sum, pool,
                        source.getClass().getName(), sum - pool);
            } else if (pool > 0) {
                if (sum > pool) {
                    throw new InvalidSettingException(null, "poolSize", pool, "db-bulkhead '" + name + "': the "
                            + "workloads' concurrent add up to " + sum + " " + describe() + ", more than the pool size "
                            + pool + "; lower them or use separate pools", true);
                }
            }
            if (hintQueueWait != null) {
                for (var spec : specs.values()) {
                    long useful = Sizing.usefulExtraSlots(spec.concurrent(), hintQueueWait, hintHoldTime);
                    if (spec.extraSlots() > useful) {
                        LOG.log(Level.WARNING, "db-bulkhead ''{0}'', workload ''{1}'': extraSlots={2} but only "
                                        + "about {3} queued callers can be served within {4} at {5} per operation "
                                        + "with concurrent={6}; the rest will time out instead of being rejected",
                                name, spec.name(), spec.extraSlots(), useful, hintQueueWait, hintHoldTime,
                                spec.concurrent());
                    }
                }
            }
            return this;
        }

        private String describe() {
            var parts = new ArrayList<String>();
            specs.values().forEach(s -> parts.add(s.name() + "=" + s.concurrent()));
            return parts.toString();
        }
    }

    /** One workload's validated budget. */
    record WorkloadSpec(String name, int concurrent, int extraSlots) {
        WorkloadSpec {
            nameOf(name, null, "workload name");
            if (concurrent < 1) {
                throw new InvalidSettingException(name, "concurrent", concurrent, "must be >= 1");
            }
            if (extraSlots < 0) {
                throw new InvalidSettingException(name, "extraSlots", extraSlots, "must be >= 0");
            }
            if ((long) concurrent + extraSlots > Integer.MAX_VALUE) {
                throw new InvalidSettingException(name, "extraSlots", extraSlots, "workload '" + name + "': "
                        + "concurrent + extraSlots must fit in an int, was " + concurrent + " + " + extraSlots + " = "
                        + ((long) concurrent + extraSlots), true);
            }
        }
    }

    /** A name that is neither null nor blank. */
    private static String nameOf(String value, String workload, String setting) {
        Preconditions.notNull(value, setting);
        if (value.isBlank()) {
            throw new InvalidSettingException(workload, setting, "'" + value + "'", "must not be blank");
        }
        return value;
    }
}
