package dev.dbbulkhead.tools.overload;

import com.netflix.concurrency.limits.Limit;
import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.QueuePolicy;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import dev.dbbulkhead.internal.PredictionAudit;
import dev.dbbulkhead.tools.support.Labels;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * The configurations compared in the capacity scenarios, each running one operation under its deadline: the
 * operation's transaction sets {@code statement_timeout} to what is left of the deadline in every configuration, so
 * that late work is cancelled in the database the same way for all.
 */
final class CapacityGates {
    private CapacityGates() {}

    /** One configuration over one pool. */
    interface Gate {
        /**
         * Runs {@code op}, of kind {@code kind} (0 the fastest, {@link CapacityScenario.Work#kind}), in a transaction
         * that must end by {@code deadline} (a {@link System#nanoTime()}).
         */
        void execute(long deadline, int kind, Barriers.Operation op) throws SQLException, InterruptedException;

        /** The limit in force now (the pool size or B for fixed ones). */
        int limit();

        /**
         * For a workload that learns kinds: each kind's cap, in the order of their mean holds (the limit for a kind
         * without one); empty otherwise.
         */
        default double[] caps() {
            return new double[0];
        }

        /** Predictive rejection's audit so far: {audited, served in time}; zeros without one. */
        default long[] audits() {
            return new long[2];
        }
    }

    /** A limiter of Netflix's refused the operation at once. */
    static final class LimiterRejected extends RejectedExecutionException {
        LimiterRejected() {
            super("concurrency limit reached", null);
        }
    }

    /** The deadline passed before the operation's transaction could start (pool-only, Netflix's limiters). */
    static final class DeadlineMissed extends SQLException {
        DeadlineMissed() {
            super("deadline passed before the transaction started", "57014");
        }
    }

    /** The kinds of configuration, by the label the command line and the reports use. */
    enum Kind {
        POOL_ONLY("pool-only"),
        /** db-bulkhead with B from the sweep. */
        STATIC("static"),
        FIXED("db-bulkhead"),
        ADAPTIVE("db-bulkhead-adaptive"),
        GRADIENT2("gradient2"),
        VEGAS("vegas"),
        AIMD("aimd"),
        /** FIFO with a deep queue (Q = 64 B): the count bound out of the way, nothing else changed. */
        FIFO_DEEP("fifo-deep"),
        /** {@link QueuePolicy#DEADLINE}, Q = 64 B. */
        DEADLINE("deadline"),
        /** The deadline queue with the adaptive limit behind it. */
        DEADLINE_ADAPTIVE("deadline-adaptive"),
        /** {@link WorkloadConfig#recommended} without kinds of operation: what the documentation recommended before. */
        RECOMMENDED("recommended"),
        /**
         * {@link WorkloadConfig#recommended} as it is now, with kinds of operation learned; here one call site per
         * kind.
         */
        RECOMMENDED_KINDS("recommended-kinds"),
        /**
         * The same, with one call site for every kind (one lambda, as a data-access helper): kinds come from the shape
         * of each operation's first statement.
         */
        RECOMMENDED_ONE_SITE("recommended-one-site"),
        /** A recommended workload per kind, B per kind from sizing.md's rule ({@link Splits#byRule}). */
        WORKLOAD_PER_KIND("workload-per-kind"),
        /** A recommended workload per kind, B in proportion to the kinds' arrivals ({@link Splits#byArrivals}). */
        SPLIT_BY_ARRIVALS("split-by-arrivals");

        final String label;

        Kind(String label) {
            this.label = label;
        }

        /** The kind labelled {@code label}, or an {@link IllegalArgumentException} listing the known ones. */
        static Kind byLabel(String label) {
            return Labels.of(values(), k -> k.label, label, "configuration");
        }

        static List<String> labels() {
            return Labels.all(values(), k -> k.label);
        }
    }

    /** One configuration of a run: its kind and B ({@code concurrent}, the sweep's value for {@link Kind#STATIC}). */
    record Config(Kind kind, int concurrent) {
        /** "static B=8" for the sweep, the kind's label otherwise. */
        String label() {
            return kind == Kind.STATIC ? kind.label + " B=" + concurrent : kind.label;
        }

        @Override
        public String toString() {
            return label();
        }
    }

    /** The share of predicted refusals that the adaptive configuration admits anyway, to count the false ones. */
    static final double AUDIT = 0.02;

    /**
     * The gate of {@code config} over {@code pool}: B = its {@code concurrent}, Q = B (B / 4 for the adaptive one);
     * {@code deadlineMs}: AIMD's latency timeout.
     */
    static Gate of(Config config, DataSource pool, int poolSize, long deadlineMs, CapacityScenario.Work work) {
        int concurrent = config.concurrent();
        String label = config.kind().label;
        return switch (config.kind()) {
            case POOL_ONLY ->
                new Gate() {
                    @Override
                    public void execute(long deadline, int kind, Barriers.Operation op) throws SQLException {
                        transaction(pool, deadline, op);
                    }

                    @Override
                    public int limit() {
                        return poolSize;
                    }
                };
            case STATIC, FIXED ->
                bulkhead(DbBulkhead.builder(pool)
                        .name(label)
                        .workload("w", concurrent, concurrent)
                        .build()
                        .workload("w"));
            // Q = B / 4: the queue in front of a limit near the database's capacity stays short.
            case ADAPTIVE ->
                audited(
                        pool,
                        label,
                        WorkloadConfig.builder("w")
                                .concurrent(concurrent)
                                .extraSlots(Math.max(1, concurrent / 4))
                                .adaptiveLimitMin(1)
                                .predictiveRejection(true)
                                .build());
            case FIFO_DEEP ->
                bulkhead(DbBulkhead.builder(pool)
                        .name(label)
                        .workload("w", concurrent, WorkloadConfig.RECOMMENDED_SLOTS_PER_PERMIT * concurrent)
                        .build()
                        .workload("w"));
            case DEADLINE ->
                audited(
                        pool,
                        label,
                        WorkloadConfig.recommended("w", concurrent).toBuilder()
                                .queue(QueuePolicy.DEADLINE)
                                .build());
            case DEADLINE_ADAPTIVE ->
                audited(
                        pool,
                        label,
                        WorkloadConfig.recommended("w", concurrent).toBuilder()
                                .adaptiveLimitMin(1)
                                .build());
            case RECOMMENDED, RECOMMENDED_KINDS, RECOMMENDED_ONE_SITE ->
                audited(
                        pool,
                        label,
                        WorkloadConfig.recommended("w", concurrent).toBuilder()
                                .kinds(config.kind() != Kind.RECOMMENDED)
                                .build(),
                        config.kind() == Kind.RECOMMENDED_ONE_SITE);
            case WORKLOAD_PER_KIND, SPLIT_BY_ARRIVALS ->
                perKind(
                        pool,
                        label,
                        config.kind() == Kind.WORKLOAD_PER_KIND
                                ? Splits.byRule(work.holds(), work.shares(0), concurrent)
                                : Splits.byArrivals(work.shares(0), concurrent));
            // Netflix's defaults (initial 20, Gradient2's min 20) exceed a database pool: min 1, max B, initial B/2.
            case GRADIENT2 ->
                netflix(
                        pool,
                        Gradient2Limit.newBuilder()
                                .minLimit(1)
                                .maxConcurrency(concurrent)
                                .initialLimit(Math.max(1, concurrent / 2))
                                .build());
            case VEGAS ->
                netflix(
                        pool,
                        VegasLimit.newBuilder()
                                .maxConcurrency(concurrent)
                                .initialLimit(Math.max(1, concurrent / 2))
                                .build());
            // AIMD backs off on a drop or on a latency above its timeout: the deadline.
            case AIMD ->
                netflix(
                        pool,
                        AIMDLimit.newBuilder()
                                .minLimit(1)
                                .maxLimit(concurrent)
                                .initialLimit(Math.max(1, concurrent / 2))
                                .timeout(deadlineMs, TimeUnit.MILLISECONDS)
                                .build());
        };
    }

    /** db-bulkhead with {@code config}, which predicts and audits a share of its predicted refusals. */
    private static Gate audited(DataSource pool, String label, WorkloadConfig config) {
        return audited(pool, label, config, false);
    }

    /** {@code oneSite}: every kind through one lambda, as one call site sends them. */
    private static Gate audited(DataSource pool, String label, WorkloadConfig config, boolean oneSite) {
        var audited = new LongAdder();
        var served = new LongAdder();
        var listener = new BulkheadListener() {
            @Override
            public void onPredictionAudited(Workload workload, boolean servedInTime, long waitedNanos) {
                audited.increment();
                if (servedInTime) {
                    served.increment();
                }
            }
        };
        // The audit is a measurement, not a setting: it admits AUDIT of the predicted refusals of a barrier built here.
        Workload w = PredictionAudit.auditing(
                        AUDIT,
                        () -> DbBulkhead.builder(pool)
                                .name(label)
                                .workload(config)
                                .listener(listener)
                                .build())
                .workload("w");
        Gate inner = oneSite ? oneCallSite(w) : bulkhead(w);
        return new Gate() {
            @Override
            public void execute(long deadline, int kind, Barriers.Operation op)
                    throws SQLException, InterruptedException {
                inner.execute(deadline, kind, op);
            }

            @Override
            public int limit() {
                return inner.limit();
            }

            @Override
            public double[] caps() {
                return inner.caps();
            }

            @Override
            public long[] audits() {
                return new long[] {audited.sum(), served.sum()};
            }
        };
    }

    /** A recommended workload per kind of operation, B = {@code split[kind]}, in one barrier. */
    private static Gate perKind(DataSource pool, String label, int[] split) {
        var builder = DbBulkhead.builder(pool).name(label);
        for (int k = 0; k < split.length; k++) {
            builder.workload(WorkloadConfig.recommended("kind-" + k, split[k]));
        }
        DbBulkhead barrier = builder.build();
        List<Gate> gates = new java.util.ArrayList<>();
        for (int k = 0; k < split.length; k++) {
            gates.add(bulkhead(barrier.workload("kind-" + k)));
        }
        return new Gate() {
            @Override
            public void execute(long deadline, int kind, Barriers.Operation op)
                    throws SQLException, InterruptedException {
                gates.get(Math.min(kind, gates.size() - 1)).execute(deadline, 0, op);
            }

            @Override
            public int limit() {
                return gates.stream().mapToInt(Gate::limit).sum();
            }
        };
    }

    /** Every kind's operations through one lambda: one call site, whatever it sends. */
    private static Gate oneCallSite(Workload w) {
        Gate byKind = bulkhead(w);
        return new Gate() {
            @Override
            public void execute(long deadline, int kind, Barriers.Operation op)
                    throws SQLException, InterruptedException {
                w.transaction(Deadline.atNanoTime(deadline), c -> {
                    op.run(c);
                    return null;
                });
            }

            @Override
            public int limit() {
                return w.limit();
            }

            @Override
            public double[] caps() {
                return byKind.caps();
            }
        };
    }

    /**
     * One workload; each kind of operation from a call site of its own (a lambda each), as an application's would be,
     * so that a workload that learns kinds tells them apart.
     */
    static Gate bulkhead(Workload w) {
        return new Gate() {
            @Override
            public void execute(long deadline, int kind, Barriers.Operation op)
                    throws SQLException, InterruptedException {
                Deadline d = Deadline.atNanoTime(deadline);
                switch (kind) {
                    case 0 ->
                        w.transaction(d, c -> {
                            op.run(c);
                            return null;
                        });
                    case 1 ->
                        w.transaction(d, c -> {
                            op.run(c);
                            return 1;
                        });
                    default ->
                        w.transaction(d, c -> {
                            op.run(c);
                            return 2;
                        });
                }
            }

            @Override
            public int limit() {
                return w.limit();
            }

            @Override
            public double[] caps() {
                return w.kinds().stream()
                        .sorted(java.util.Comparator.comparing(KindStats::meanHold))
                        .mapToDouble(k -> k.cap() > 0 ? k.cap() : w.limit())
                        .toArray();
            }
        };
    }

    private static Gate netflix(DataSource pool, Limit limit) {
        SimpleLimiter<Void> limiter = SimpleLimiter.newBuilder().limit(limit).build();
        return new Gate() {
            @Override
            public void execute(long deadline, int kind, Barriers.Operation op) throws SQLException {
                Optional<Limiter.Listener> admitted = limiter.acquire(null);
                if (admitted.isEmpty()) {
                    throw new LimiterRejected();
                }
                try {
                    transaction(pool, deadline, op);
                    admitted.get().onSuccess();
                } catch (SQLException | RuntimeException | Error e) {
                    // Netflix's contract: onDropped for a timeout or an overload, onIgnore for other failures.
                    if (e instanceof SQLTransientConnectionException
                            || (e instanceof SQLException s && "57014".equals(s.getSQLState()))) {
                        admitted.get().onDropped();
                    } else {
                        admitted.get().onIgnore();
                    }
                    throw e;
                }
            }

            @Override
            public int limit() {
                return limiter.getLimit();
            }
        };
    }

    /**
     * A plain transaction bounded by {@code deadline}: a connection from the pool (its own timeout), then
     * {@code SET LOCAL statement_timeout} to the time left, as db-bulkhead sets it from a {@link Deadline}.
     */
    static void transaction(DataSource pool, long deadline, Barriers.Operation op) throws SQLException {
        Barriers.plainTransaction(pool, c -> {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new DeadlineMissed();
            }
            statementTimeout(c, left);
            op.run(c);
        });
    }

    private static void statementTimeout(Connection c, long nanos) throws SQLException {
        try (var s = c.createStatement()) {
            s.execute("SET LOCAL statement_timeout = " + Math.max(1, (nanos + 999_999) / 1_000_000));
        }
    }
}
