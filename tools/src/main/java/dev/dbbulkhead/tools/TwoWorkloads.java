package dev.dbbulkhead.tools;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.WorkloadConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * {@code s5-two-workloads}: one database (K advisory locks) shared by an interactive workload (5 ms operations,
 * 100 ms deadline, at half of what it could do alone) and a batch one (50 ms operations, 5 s deadline, at 5× what it
 * could do alone), through one barrier over one pool. Each configuration runs the interactive workload alone, then
 * both at once; the question is whether interactive goodput within SLO stays ≥ 0.9 × its value alone while batch
 * saturates, and whether batch still progresses.
 */
final class TwoWorkloads {
    static final int INTERACTIVE_MS = 5;
    static final int BATCH_MS = 50;
    static final long INTERACTIVE_DEADLINE_MS = 100;
    static final long BATCH_DEADLINE_MS = 5_000;

    /** A configuration: B (and Q) per workload, and whether both are adaptive (and predictive). */
    record Config(String label, int interactive, int batch, boolean adaptive) {}

    static List<Config> configs(int pool) {
        int small = Math.max(1, pool / 4);
        return List.of(new Config("db-bulkhead " + pool / 2 + " / " + pool / 2, pool / 2, pool / 2, false),
                new Config("db-bulkhead " + (pool - small) + " / " + small, pool - small, small, false),
                new Config("adaptive " + pool / 2 + " / " + pool / 2, pool / 2, pool / 2, true),
                new Config("adaptive " + (pool - small) + " / " + small, pool - small, small, true));
    }

    /** One run: interactive alone, then with batch. */
    record Run(CapacityRun alone, CapacityRun interactive, CapacityRun batch) {}

    private final Supplier<HikariDataSource> pools;
    private final int pool;
    private final int locks;
    private final double seconds;

    TwoWorkloads(Supplier<HikariDataSource> pools, int pool, int locks, double seconds) {
        this.pools = pools;
        this.pool = pool;
        this.locks = locks;
        this.seconds = seconds;
    }

    Run once(Config config, double interactiveRate, double batchRate, long seed) throws Exception {
        var interactiveWork = new CapacityScenario.Work(CapacityScenario.S2_LOCKS, 0, locks, INTERACTIVE_MS);
        var batchWork = new CapacityScenario.Work(CapacityScenario.S2_LOCKS, 0, locks, BATCH_MS);
        CapacityRun alone;
        try (var ds = pools.get()) {
            var gates = gates(ds, config);
            alone = CapacityRun.run(gates[0], interactiveWork, interactiveRate, seconds,
                    INTERACTIVE_DEADLINE_MS * 1_000_000, seed);
        }
        try (var ds = pools.get()) {
            var gates = gates(ds, config);
            var batch = new CapacityRun[1];
            var failure = new Exception[1];
            Thread batchThread = Thread.ofPlatform().name("s5-batch").start(() -> {
                try {
                    batch[0] = CapacityRun.run(gates[1], batchWork, batchRate, seconds, BATCH_DEADLINE_MS * 1_000_000,
                            seed + 1);
                } catch (Exception e) {
                    failure[0] = e;
                }
            });
            var interactive = CapacityRun.run(gates[0], interactiveWork, interactiveRate, seconds,
                    INTERACTIVE_DEADLINE_MS * 1_000_000, seed);
            batchThread.join();
            if (failure[0] != null) {
                throw failure[0];
            }
            return new Run(alone, interactive, batch[0]);
        }
    }

    private CapacityGates.Gate[] gates(HikariDataSource ds, Config c) {
        var db = DbBulkhead.builder(ds).name("s5").poolSize(pool).workload(workload("interactive", c.interactive(), c))
                .workload(workload("batch", c.batch(), c)).build();
        return new CapacityGates.Gate[] {CapacityGates.bulkhead(db.workload("interactive")),
            CapacityGates.bulkhead(db.workload("batch"))};
    }

    /** Q = B / 4; adaptive and predictive in the adaptive configurations. */
    private static WorkloadConfig workload(String name, int concurrent, Config c) {
        var config = WorkloadConfig.builder(name).concurrent(concurrent).extraSlots(Math.max(1, concurrent / 4));
        if (c.adaptive()) {
            config.adaptiveLimitMin(1).predictiveRejection(true);
        }
        return config.build();
    }

    static List<String> table(Map<Config, List<Run>> runs) {
        var lines = new ArrayList<String>();
        lines.add("| s5-two-workloads: configuration (B interactive / batch) | interactive goodput within SLO /s: "
                + "alone, with batch (min–max) | with batch / alone (≥ 0.9) | interactive p99 ms with batch "
                + "| batch goodput /s | mean limit interactive / batch |");
        lines.add("|---|---:|---:|---:|---:|---:|");
        runs.forEach((c, list) -> {
            double alone = median(list, r -> r.alone().goodputInSlo());
            double together = median(list, r -> r.interactive().goodputInSlo());
            double lo = list.stream().mapToDouble(r -> r.interactive().goodputInSlo()).min().orElse(0);
            double hi = list.stream().mapToDouble(r -> r.interactive().goodputInSlo()).max().orElse(0);
            lines.add(String.format(Locale.ROOT, "| %s | %.0f, %.0f (%.0f–%.0f) | %.2f (%s) | %.1f | %.1f | %.1f / %.1f |",
                    c.label(), alone, together, lo, hi, together / alone, together >= 0.9 * alone ? "met" : "missed",
                    median(list, r -> OverloadReport.ms(r.interactive().succeeded, 99)),
                    median(list, r -> r.batch().goodputInSlo()), median(list, r -> r.interactive().meanLimit(0, 1)),
                    median(list, r -> r.batch().meanLimit(0, 1))));
        });
        return lines;
    }

    private static double median(List<Run> list, ToDoubleFunction<Run> metric) {
        double[] v = list.stream().mapToDouble(metric).sorted().toArray();
        return v.length == 0 ? Double.NaN : v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    static Map<Config, List<Run>> newRuns(int pool) {
        var runs = new LinkedHashMap<Config, List<Run>>();
        configs(pool).forEach(c -> runs.put(c, new ArrayList<>()));
        return runs;
    }
}
