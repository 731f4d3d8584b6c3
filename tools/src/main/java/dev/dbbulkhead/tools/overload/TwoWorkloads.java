package dev.dbbulkhead.tools.overload;

import static dev.dbbulkhead.tools.support.Stats.median;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Priority;
import dev.dbbulkhead.WorkloadConfig;
import dev.dbbulkhead.tools.support.Stats;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

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

    /** How a configuration shares the pool: fixed B per workload, both adaptive, or batch elastic beside interactive. */
    enum Sharing {
        FIXED,
        ADAPTIVE,
        PRIORITY
    }

    /** A configuration: B per workload (Q = B / 4, or the recommended cap for priorities) and how they share. */
    record Config(String label, int interactive, int batch, Sharing sharing) {}

    static List<Config> configs(int pool) {
        int small = Math.max(1, pool / 4);
        return List.of(
                new Config("db-bulkhead " + pool / 2 + " / " + pool / 2, pool / 2, pool / 2, Sharing.FIXED),
                new Config("db-bulkhead " + (pool - small) + " / " + small, pool - small, small, Sharing.FIXED),
                new Config("adaptive " + pool / 2 + " / " + pool / 2, pool / 2, pool / 2, Sharing.ADAPTIVE),
                new Config("adaptive " + (pool - small) + " / " + small, pool - small, small, Sharing.ADAPTIVE),
                new Config("priorities " + (pool - 1) + " / elastic " + pool, pool - 1, pool, Sharing.PRIORITY));
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
            alone = CapacityRun.run(
                    gates[0], interactiveWork, interactiveRate, seconds, INTERACTIVE_DEADLINE_MS * 1_000_000, seed);
        }
        try (var ds = pools.get()) {
            var gates = gates(ds, config);
            var batch = new CapacityRun[1];
            var failure = new Exception[1];
            Thread batchThread = Thread.ofPlatform().name("s5-batch").start(() -> {
                try {
                    batch[0] = CapacityRun.run(
                            gates[1], batchWork, batchRate, seconds, BATCH_DEADLINE_MS * 1_000_000, seed + 1);
                } catch (Exception e) {
                    failure[0] = e;
                }
            });
            var interactive = CapacityRun.run(
                    gates[0], interactiveWork, interactiveRate, seconds, INTERACTIVE_DEADLINE_MS * 1_000_000, seed);
            batchThread.join();
            if (failure[0] != null) {
                throw failure[0];
            }
            return new Run(alone, interactive, batch[0]);
        }
    }

    private CapacityGates.Gate[] gates(HikariDataSource ds, Config c) {
        var db = DbBulkhead.builder(ds)
                .name("s5")
                .poolSize(pool)
                .workload(workload("interactive", c.interactive(), c))
                .workload(workload("batch", c.batch(), c).toBuilder()
                        .priority(c.sharing() == Sharing.PRIORITY ? Priority.ELASTIC : Priority.REGULAR)
                        .build())
                .build();
        return new CapacityGates.Gate[] {
            CapacityGates.bulkhead(db.workload("interactive")), CapacityGates.bulkhead(db.workload("batch"))
        };
    }

    /**
     * Q = B / 4, adaptive and predictive in the adaptive configurations; with priorities, the recommended workload (a
     * deadline queue).
     */
    private static WorkloadConfig workload(String name, int concurrent, Config c) {
        return switch (c.sharing()) {
            case FIXED ->
                WorkloadConfig.builder(name)
                        .concurrent(concurrent)
                        .extraSlots(Math.max(1, concurrent / 4))
                        .build();
            case ADAPTIVE ->
                WorkloadConfig.builder(name)
                        .concurrent(concurrent)
                        .extraSlots(Math.max(1, concurrent / 4))
                        .adaptiveLimitMin(1)
                        .predictiveRejection(true)
                        .build();
            case PRIORITY -> WorkloadConfig.recommended(name, concurrent);
        };
    }

    /**
     * The rows of one batch load (a multiple of its capacity alone); with the header when {@code header}. The ratio is
     * held to 0.95 at 5× and 0.9 beyond (issue targets); the p99 with batch to 1.2 × alone.
     */
    static List<String> table(Map<Config, List<Run>> runs, double load, boolean header) {
        var lines = new ArrayList<String>();
        if (header) {
            lines.add("| s5-two-workloads: configuration (B interactive / batch) | batch load | interactive goodput "
                    + "within SLO /s: alone, with batch (min–max) | with batch / alone | interactive p99 ms: alone, with "
                    + "batch | batch goodput /s (min–max) | mean limit interactive / batch |");
            lines.add("|---|---:|---:|---:|---:|---:|---:|");
        }
        double target = load <= 5 ? 0.95 : 0.9;
        runs.forEach((c, list) -> {
            double alone = median(list, r -> r.alone().goodputInSlo());
            double together = median(list, r -> r.interactive().goodputInSlo());
            double lo = list.stream()
                    .mapToDouble(r -> r.interactive().goodputInSlo())
                    .min()
                    .orElse(0);
            double hi = list.stream()
                    .mapToDouble(r -> r.interactive().goodputInSlo())
                    .max()
                    .orElse(0);
            double p99Alone = median(list, r -> Stats.ms(r.alone().succeeded, 99));
            double p99 = median(list, r -> Stats.ms(r.interactive().succeeded, 99));
            double batchLo = list.stream()
                    .mapToDouble(r -> r.batch().goodputInSlo())
                    .min()
                    .orElse(0);
            double batchHi = list.stream()
                    .mapToDouble(r -> r.batch().goodputInSlo())
                    .max()
                    .orElse(0);
            lines.add(String.format(
                    Locale.ROOT,
                    "| %s | %.0f× | %.0f, %.0f (%.0f–%.0f) | %.2f (≥ %.2f: %s) "
                            + "| %.1f, %.1f (≤ 1.2×: %s) | %.1f (%.1f–%.1f) | %.1f / %.1f |",
                    c.label(),
                    load,
                    alone,
                    together,
                    lo,
                    hi,
                    together / alone,
                    target,
                    together >= target * alone ? "met" : "missed",
                    p99Alone,
                    p99,
                    p99 <= 1.2 * p99Alone ? "met" : "missed",
                    median(list, r -> r.batch().goodputInSlo()),
                    batchLo,
                    batchHi,
                    median(list, r -> r.interactive().meanLimit(0, 1)),
                    median(list, r -> r.batch().meanLimit(0, 1))));
        });
        return lines;
    }

    static Map<Config, List<Run>> newRuns(int pool) {
        var runs = new LinkedHashMap<Config, List<Run>>();
        configs(pool).forEach(c -> runs.put(c, new ArrayList<>()));
        return runs;
    }

    /** What interactive and batch operations each get alone, in a closed loop: {interactive, batch} per second. */
    static double[] capacities(HikariDataSource ds, int locks, double seconds) throws Exception {
        var work = CapacityScenario.S2_LOCKS.prepare(ds, locks, INTERACTIVE_MS, 0);
        double interactive = Barriers.closedLoopRate(ds, work, 2 * locks, seconds);
        double batch = Barriers.closedLoopRate(
                ds, new CapacityScenario.Work(CapacityScenario.S2_LOCKS, 0, locks, BATCH_MS), 2 * locks, seconds);
        return new double[] {interactive, batch};
    }

    /** Interactive work at half its capacity beside batch work at each of {@code loads} × its own, round-robin. */
    List<String> table(double[] capacities, List<Double> loads, int repetitions, Progress progress) throws Exception {
        var table = new ArrayList<String>();
        for (double load : loads) {
            var runs = newRuns(pool);
            for (int r = 0; r < repetitions; r++) {
                for (var e : runs.entrySet()) {
                    System.gc();
                    e.getValue().add(once(e.getKey(), capacities[0] / 2, load * capacities[1], 1000L * r + 7));
                    progress.step("s5 " + load + "x " + e.getKey().label() + ", repetition " + (r + 1));
                }
            }
            table.addAll(table(runs, load, table.isEmpty()));
        }
        return table;
    }
}
