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
import java.util.Map;
import java.util.Objects;
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

    /** The kinds of configuration, by the label the command line and the reports use; built by {@link #TABLE}. */
    enum Kind {
        POOL_ONLY("pool-only"),
        /** db-bulkhead with B from the sweep. */
        STATIC("static"),
        FIXED("db-bulkhead"),
        /** Q = B / 4: the queue in front of a limit near the database's capacity stays short. */
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

    /** How a kind of configuration is built: a lambda that captures nothing. */
    @FunctionalInterface
    private interface Maker {
        Gate make(Setup setup);
    }

    /** What every configuration is built from; {@code b}: B, the sweep's value for the static one. */
    private record Setup(Config config, DataSource pool, int poolSize, long deadlineMs, CapacityScenario.Work work) {
        int b() {
            return config.concurrent();
        }

        String label() {
            return config.kind().label;
        }

        WorkloadConfig.Builder recommended() {
            return WorkloadConfig.recommended("w", b()).toBuilder();
        }
    }

    /** How each kind of configuration is built: one row per {@link Kind}. */
    private static final Map<Kind, Maker> TABLE = Map.ofEntries(
            Map.entry(Kind.POOL_ONLY, s -> poolOnly(s.pool(), s.poolSize())),
            Map.entry(Kind.STATIC, s -> fifo(s, s.b())),
            Map.entry(Kind.FIXED, s -> fifo(s, s.b())),
            Map.entry(
                    Kind.ADAPTIVE,
                    s -> audited(
                            s,
                            WorkloadConfig.builder("w")
                                    .concurrent(s.b())
                                    .extraSlots(Math.max(1, s.b() / 4))
                                    .adaptiveLimitMin(1)
                                    .predictiveRejection(true))),
            Map.entry(Kind.GRADIENT2, s -> netflix(s.pool(), gradient2(s.b()))),
            Map.entry(Kind.VEGAS, s -> netflix(s.pool(), vegas(s.b()))),
            Map.entry(Kind.AIMD, s -> netflix(s.pool(), aimd(s.b(), s.deadlineMs()))),
            Map.entry(Kind.FIFO_DEEP, s -> fifo(s, WorkloadConfig.RECOMMENDED_SLOTS_PER_PERMIT * s.b())),
            Map.entry(Kind.DEADLINE, s -> audited(s, s.recommended().queue(QueuePolicy.DEADLINE))),
            Map.entry(Kind.DEADLINE_ADAPTIVE, s -> audited(s, s.recommended().adaptiveLimitMin(1))),
            Map.entry(Kind.RECOMMENDED, s -> audited(s, s.recommended().kinds(false))),
            Map.entry(Kind.RECOMMENDED_KINDS, s -> audited(s, s.recommended().kinds(true))),
            Map.entry(Kind.RECOMMENDED_ONE_SITE, s -> audited(s, s.recommended().kinds(true), true)),
            Map.entry(
                    Kind.WORKLOAD_PER_KIND,
                    s -> perKind(
                            s.pool(),
                            s.label(),
                            Splits.byRule(s.work().holds(), s.work().shares(0), s.b()))),
            Map.entry(
                    Kind.SPLIT_BY_ARRIVALS,
                    s -> perKind(s.pool(), s.label(), Splits.byArrivals(s.work().shares(0), s.b()))));

    static {
        if (TABLE.size() != Kind.values().length) {
            throw new AssertionError("a kind of configuration without its row in CapacityGates.TABLE");
        }
    }

    /**
     * The gate of {@code config} over {@code pool}: B = its {@code concurrent}, Q = B (B / 4 for the adaptive one);
     * {@code deadlineMs}: AIMD's latency timeout.
     */
    static Gate of(Config config, DataSource pool, int poolSize, long deadlineMs, CapacityScenario.Work work) {
        return Objects.requireNonNull(TABLE.get(config.kind()), "every kind has a row")
                .make(new Setup(config, pool, poolSize, deadlineMs, work));
    }

    private static Gate poolOnly(DataSource pool, int poolSize) {
        return new Gate() {
            @Override
            public void execute(long deadline, int kind, Barriers.Operation op) throws SQLException {
                transaction(pool, deadline, op);
            }

            @Override
            public int limit() {
                return poolSize;
            }
        };
    }

    /** The article's barrier: B permits, a FIFO queue of {@code extraSlots}. */
    private static Gate fifo(Setup s, int extraSlots) {
        return bulkhead(DbBulkhead.builder(s.pool())
                .name(s.label())
                .workload("w", s.b(), extraSlots)
                .build()
                .workload("w"));
    }

    // Netflix's defaults (initial 20, Gradient2's min 20) exceed a database pool: min 1, max B, initial B/2.
    private static Limit gradient2(int b) {
        return Gradient2Limit.newBuilder()
                .minLimit(1)
                .maxConcurrency(b)
                .initialLimit(Math.max(1, b / 2))
                .build();
    }

    private static Limit vegas(int b) {
        return VegasLimit.newBuilder()
                .maxConcurrency(b)
                .initialLimit(Math.max(1, b / 2))
                .build();
    }

    /** AIMD backs off on a drop or on a latency above its timeout: the deadline. */
    private static Limit aimd(int b, long deadlineMs) {
        return AIMDLimit.newBuilder()
                .minLimit(1)
                .maxLimit(b)
                .initialLimit(Math.max(1, b / 2))
                .timeout(deadlineMs, TimeUnit.MILLISECONDS)
                .build();
    }

    /** db-bulkhead with {@code config}, which predicts and audits a share of its predicted refusals. */
    private static Gate audited(Setup s, WorkloadConfig.Builder config) {
        return audited(s, config, false);
    }

    /** {@code oneSite}: every kind through one lambda, as one call site sends them. */
    private static Gate audited(Setup s, WorkloadConfig.Builder config, boolean oneSite) {
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
                        () -> DbBulkhead.builder(s.pool())
                                .name(s.label())
                                .workload(config.build())
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
