package dev.dbbulkhead;

import dev.dbbulkhead.internal.Barrier;
import dev.dbbulkhead.internal.PoolShares;
import dev.dbbulkhead.internal.PoolSizes;
import dev.dbbulkhead.internal.Preconditions;
import java.lang.System.Logger.Level;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

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
        var options = new Barrier.Options(
                b.name,
                b.source,
                List.copyOf(b.listeners),
                b.nanoClock,
                b.statementTimeouts,
                b.lockTimeouts,
                b.leakThreshold,
                new RejectionFactory(b.rejectionStackTraces),
                b.arbitrated);
        var map = new LinkedHashMap<String, Workload>();
        for (Workload w : Barrier.workloads(options, List.copyOf(b.workloads.values()), LOG)) {
            map.put(w.name(), w);
        }
        this.workloads = Collections.unmodifiableMap(map);
        this.defaultWorkload = map.values().iterator().next();
        String shared = PoolShares.claim(source, this, name, b.admitsAtOnce(), b.knownPoolSize);
        if (shared != null) {
            LOG.log(Level.WARNING, "db-bulkhead ''{0}'': {1}", name, shared);
        }
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
    public <T extends @Nullable Object> T transaction(Duration queueWait, SqlWork<T> work)
            throws SQLException, InterruptedException {
        return defaultWorkload.transaction(queueWait, work);
    }

    /** Runs {@code work} in the default workload, bounded end to end by {@code deadline}. */
    public <T extends @Nullable Object> T transaction(Deadline deadline, SqlWork<T> work)
            throws SQLException, InterruptedException {
        return defaultWorkload.transaction(deadline, work);
    }

    /** Runs {@code work} in the default workload with {@code options}. */
    public <T extends @Nullable Object> T transaction(TransactionOptions options, SqlWork<T> work)
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

    /**
     * The workload called {@code name}.
     *
     * @throws IllegalArgumentException naming the barrier and the workloads it knows, when there is none
     */
    public Workload workload(String name) {
        Workload w = workloads.get(Preconditions.notNull(name, "workload name"));
        if (w == null) {
            throw new IllegalArgumentException(
                    "unknown workload '" + name + "' in db-bulkhead '" + this.name + "'; known: " + workloads.keySet());
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

    /**
     * What this barrier cannot keep on its database (on MySQL and MariaDB, or a database whose rules it does not know:
     * the guarantees its transactions lack there), logged once as a warning, or empty on PostgreSQL. Read from one
     * connection, unless a transaction already did; meant for start-up, where callers that run their own transactions
     * under {@link Workload#acquire} (the Spring starter's {@code @DbWorkload}) would otherwise never see it.
     *
     * @throws SQLException when no connection can be had to read it
     */
    public Optional<String> databaseLimits() throws SQLException {
        return Barrier.unkept(defaultWorkload);
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
     * Builds a {@link DbBulkhead}: its workloads ({@link WorkloadConfig}s, each checked when it was built) and the
     * settings of the whole barrier. Each setter checks its own argument; {@link #build()} checks the whole: at
     * least one workload, and the workloads' B adding up to no more than the pool size when the pool size is known
     * (given with {@link #poolSize} or read from a HikariCP {@code HikariDataSource}).
     *
     * <p>Not thread-safe; build once, share the barrier.
     */
    public static final class Builder {
        private final DataSource source;
        private final Map<String, WorkloadConfig> workloads = new LinkedHashMap<>();
        private final List<BulkheadListener> listeners = new ArrayList<>();
        private String name = "db";
        private int poolSize = -1;
        private int sharedLimit = -1;
        /** The shared limit the workloads are arbitrated under, once checked; 0: none (no elastic or borrowing one). */
        private int arbitrated;
        /** The pool's size as given or read, once checked; -1: unknown. */
        private int knownPoolSize = -1;

        private LongSupplier nanoClock = System::nanoTime;
        private boolean statementTimeouts = true;
        private boolean lockTimeouts;
        private boolean rejectionStackTraces;
        private @Nullable Duration hintQueueWait;
        private @Nullable Duration hintHoldTime;
        private Duration leakThreshold = Duration.ZERO;

        private Builder(DataSource source) {
            this.source = Preconditions.notNull(source, "source");
        }

        /** The barrier's name in messages and metrics; default {@code "db"}. */
        public Builder name(String name) {
            check(
                    name != null && !name.isBlank(),
                    Setting.NAME,
                    name == null ? null : "'" + name + "'",
                    "must not be blank");
            this.name = name;
            return this;
        }

        /**
         * Declares a workload; the first declared is the default one.
         *
         * @throws InvalidSettingException when a workload of that name is declared already
         */
        public Builder workload(WorkloadConfig config) {
            Preconditions.notNull(config, "config");
            if (workloads.putIfAbsent(config.name(), config) != null) {
                throw new InvalidSettingException(
                        config.name(),
                        Setting.WORKLOAD_NAME,
                        "'" + config.name() + "'",
                        "must be unique in db-bulkhead '" + name + "': it is declared twice");
            }
            return this;
        }

        /**
         * Declares a workload with B = {@code concurrent} execution permits and Q = {@code extraSlots} extra admission
         * slots, and nothing else: {@code workload(WorkloadConfig.of(name, concurrent, extraSlots))}.
         */
        public Builder workload(String name, int concurrent, int extraSlots) {
            return workload(WorkloadConfig.of(name, concurrent, extraSlots));
        }

        /**
         * The size of the pool behind the data source, to check that the workloads' B add up to no more than
         * it. Not needed for a {@code HikariDataSource}, whose {@code maximumPoolSize} is read.
         */
        public Builder poolSize(int poolSize) {
            this.poolSize = check(poolSize >= 1, Setting.POOL_SIZE, poolSize, "must be >= 1");
            return this;
        }

        /**
         * The most operations of all the workloads in flight at once, which an {@link Priority#ELASTIC} workload shares
         * with the regular ones; default the pool size. At most the pool size, and at least the regular workloads' B
         * added up plus one for each elastic workload (its floor).
         */
        public Builder sharedLimit(int sharedLimit) {
            this.sharedLimit = check(sharedLimit >= 1, Setting.SHARED_LIMIT, sharedLimit, "must be >= 1");
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
            check(
                    queueWait != null && !queueWait.isNegative(),
                    Setting.SIZING_HINT_QUEUE_WAIT,
                    queueWait,
                    "must not be negative");
            check(
                    holdTime != null && !holdTime.isNegative() && !holdTime.isZero(),
                    Setting.SIZING_HINT_HOLD_TIME,
                    holdTime,
                    "must be > 0");
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
            this.leakThreshold = check(
                    threshold != null && !threshold.isNegative(),
                    Setting.LEAK_DETECTION_THRESHOLD,
                    threshold,
                    "must not be negative");
            return this;
        }

        public DbBulkhead build() {
            return new DbBulkhead(validated(true));
        }

        private static <V extends @Nullable Object> V check(boolean holds, Setting setting, V value, String rule) {
            if (!holds) {
                throw new InvalidSettingException(null, setting, value, rule);
            }
            return value;
        }

        /** The checks of the whole barrier; {@code strict}: the workloads' B exceeding the pool is refused. */
        private Builder validated(boolean strict) {
            if (workloads.isEmpty()) {
                throw new IllegalStateException("db-bulkhead '" + name + "': declare at least one workload");
            }
            checkPoolSize(strict);
            if (hintQueueWait != null && hintHoldTime != null) {
                warnUselessExtraSlots(hintQueueWait, hintHoldTime);
            }
            return this;
        }

        /** The most operations the barrier admits at once: the shared limit, or what the workloads' B add up to. */
        private int admitsAtOnce() {
            return arbitrated > 0
                    ? arbitrated
                    : (int) Math.min(
                            Integer.MAX_VALUE,
                            workloads.values().stream()
                                    .mapToLong(WorkloadConfig::concurrent)
                                    .sum());
        }

        private void checkPoolSize(boolean strict) {
            int pool = poolSize > 0 ? poolSize : PoolSizes.maximumPoolSize(source);
            knownPoolSize = pool;
            if (workloads.values().stream().anyMatch(w -> w.priority() == Priority.ELASTIC)) {
                arbitrated = checkSharedLimit(pool);
                return;
            }
            if (sharedLimit > 0 && pool > 0 && sharedLimit > pool) {
                throw new InvalidSettingException(
                        null, Setting.SHARED_LIMIT, sharedLimit, "must be <= the pool size " + pool);
            }
            // What bounds the workloads: the shared limit where the caller gave one, else the pool.
            Setting bound = sharedLimit > 0 ? Setting.SHARED_LIMIT : Setting.POOL_SIZE;
            pool = sharedLimit > 0 ? sharedLimit : pool;
            long sum = workloads.values().stream()
                    .mapToLong(WorkloadConfig::concurrent)
                    .sum();
            if (pool <= 0) {
                if (strict) {
                    LOG.log(
                            Level.WARNING,
                            "db-bulkhead ''{0}'': cannot tell the pool size of {1}, so the workloads'' "
                                    + "concurrent {2} are not checked against it; give it with poolSize(...)",
                            name,
                            source.getClass().getName(),
                            describe());
                }
            } else if (sum > pool && strict) {
                throw new InvalidSettingException(
                        null,
                        bound,
                        pool,
                        "of db-bulkhead '" + name
                                + "' must be at least what the workloads' concurrent add up to, " + sum + " "
                                + describe()
                                + " (lower them or use separate pools)");
            } else if (sum > pool) {
                LOG.log(
                        Level.WARNING,
                        "db-bulkhead ''{0}'': concurrent {1} is more than the pool size {2} of {3}: "
                                + "the {4} operations beyond the pool wait inside it, up to its connection timeout, "
                                + "instead of in the barrier; lower concurrent to at most {2}",
                        name,
                        sum,
                        pool,
                        source.getClass().getName(),
                        sum - pool);
            }
            if (workloads.size() > 1
                    && workloads.values().stream().anyMatch(w -> w.borrowing() && w.priority() == Priority.REGULAR)) {
                arbitrated = (int) Math.min(Integer.MAX_VALUE, Math.max(sharedLimit, sum)); // what borrowers share
            }
        }

        /**
         * With an elastic workload: the shared limit (given, or the pool size) must be known and fit in the pool, and
         * leave room for the regular workloads' B and one permit per elastic workload.
         */
        private int checkSharedLimit(int pool) {
            int limit = sharedLimit > 0 ? sharedLimit : pool;
            check(
                    limit > 0,
                    Setting.SHARED_LIMIT,
                    "unknown",
                    "must be given (sharedLimit or poolSize) when a workload "
                            + "is elastic: it is what the elastic workloads share with the regular ones");
            check(pool <= 0 || limit <= pool, Setting.SHARED_LIMIT, limit, "must be <= the pool size " + pool);
            long regular = 0;
            int elastic = 0;
            for (var w : workloads.values()) {
                if (w.priority() == Priority.ELASTIC) {
                    elastic++;
                    if (w.concurrent() > limit) {
                        throw new InvalidSettingException(
                                w.name(),
                                Setting.CONCURRENT,
                                w.concurrent(),
                                "must be <= the shared limit " + limit + " of db-bulkhead '" + name + "'");
                    }
                } else {
                    regular += w.concurrent();
                }
            }
            check(
                    regular + elastic <= limit,
                    Setting.SHARED_LIMIT,
                    limit,
                    "of db-bulkhead '" + name + "' must be at "
                            + "least the regular workloads' concurrent added up and one for each elastic workload, "
                            + regular
                            + " + " + elastic + " " + describe()
                            + " (lower them, or raise the shared limit and the pool)");
            return limit;
        }

        private void warnUselessExtraSlots(Duration queueWait, Duration holdTime) {
            for (var w : workloads.values()) {
                long useful = Sizing.usefulExtraSlots(w.concurrent(), queueWait, holdTime);
                if (w.extraSlots() > useful) {
                    LOG.log(
                            Level.WARNING,
                            "db-bulkhead ''{0}'', workload ''{1}'': extraSlots={2} but only about {3} "
                                    + "queued callers can be served within {4} at {5} per operation with "
                                    + "concurrent={6}; the rest will time out instead of being rejected",
                            name,
                            w.name(),
                            w.extraSlots(),
                            useful,
                            hintQueueWait,
                            hintHoldTime,
                            w.concurrent());
                }
            }
        }

        private String describe() {
            var parts = new ArrayList<String>();
            workloads.values().forEach(w -> parts.add(w.name() + "=" + w.concurrent()));
            return parts.toString();
        }
    }
}
