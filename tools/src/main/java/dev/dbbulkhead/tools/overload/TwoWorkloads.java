package dev.dbbulkhead.tools.overload;

import static dev.dbbulkhead.tools.support.Stats.median;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Priority;
import dev.dbbulkhead.WorkloadConfig;
import dev.dbbulkhead.tools.support.Stats;
import dev.dbbulkhead.tools.support.Svg;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

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

    /** How a configuration shares the pool. */
    enum Sharing {
        /** A fixed B per workload, FIFO queues of B / 4: the configurations of the first cut's table. */
        FIXED,
        /** Recommended workloads (deadline queues), batch a regular workload of a fixed B: the sweep of batch caps. */
        CAPPED,
        /** Recommended workloads, batch elastic beside interactive: its allowance follows the interactive objective. */
        PRIORITY
    }

    /** A configuration: B per workload and how they share. */
    record Config(String label, int interactive, int batch, Sharing sharing) {}

    /**
     * What the interactive workload needs, by Little's law: its arrivals over one hold, half again for bursts. A larger
     * B only lets its operations queue inside the database, where they wait behind batch operations.
     */
    static int interactiveNeed(double rate) {
        return Math.max(1, (int) Math.ceil(1.5 * rate * INTERACTIVE_MS / 1000.0));
    }

    /**
     * The sweep of fixed batch caps 1 to a quarter of the pool beside the interactive workload sized to its need
     * ({@link #interactiveNeed}), the same with batch elastic ({@link #ours}), and the first cut's two configurations
     * (interactive given the rest of the pool).
     */
    static List<Config> configs(int pool, int wanted) {
        int need = fit(pool, wanted);
        var configs = new ArrayList<Config>();
        for (int cap = 1; cap <= Math.max(1, pool / 4); cap++) {
            configs.add(new Config("fixed cap " + need + " / " + cap, need, cap, Sharing.CAPPED));
        }
        configs.add(ours(pool, need));
        int small = Math.max(1, pool / 4);
        configs.add(new Config("fixed " + (pool - small) + " / " + small, pool - small, small, Sharing.FIXED));
        configs.add(new Config("priorities " + (pool - 1) + " / elastic " + pool, pool - 1, pool, Sharing.PRIORITY));
        return configs;
    }

    /** The configuration the guide recommends: interactive sized to its need, batch elastic up to the pool. */
    static Config ours(int pool, int wanted) {
        int need = fit(pool, wanted);
        return new Config("priorities " + need + " / elastic " + pool, need, pool, Sharing.PRIORITY);
    }

    /** The interactive B, at most what leaves the largest batch cap of the sweep its room in the pool. */
    private static int fit(int pool, int need) {
        return Math.max(1, Math.min(need, pool - Math.max(1, pool / 4)));
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
        CapacityRun alone;
        try (var ds = pools.get()) {
            alone = interactive(gates(ds, config)[0], interactiveRate, seed, 0);
        }
        try (var ds = pools.get()) {
            var gates = gates(ds, config);
            var both = besideBatch(
                    gates[1], batchRate, seconds, seed + 1, () -> interactive(gates[0], interactiveRate, seed, 0));
            return new Run(alone, both.interactive(), both.batch());
        }
    }

    /** The interactive workload's operations through {@code gate} for one run's length; see {@link CapacityRun#run}. */
    private CapacityRun interactive(CapacityGates.Gate gate, double rate, long seed, double settleSeconds)
            throws InterruptedException {
        var work = new CapacityScenario.Work(CapacityScenario.S2_LOCKS, 0, locks, INTERACTIVE_MS);
        return CapacityRun.run(gate, work, rate, seconds, INTERACTIVE_DEADLINE_MS * 1_000_000, seed, settleSeconds);
    }

    /** What {@code interactive} returned, run on this thread, and the batch run beside it. */
    private record Beside<T>(T interactive, CapacityRun batch) {}

    /**
     * {@code interactive} on this thread while batch runs through {@code gate} at {@code rate} on a thread of its own.
     */
    private <T> Beside<T> besideBatch(
            CapacityGates.Gate gate, double rate, double batchSeconds, long seed, Callable<T> interactive)
            throws Exception {
        var work = new CapacityScenario.Work(CapacityScenario.S2_LOCKS, 0, locks, BATCH_MS);
        var batch = new AtomicReference<CapacityRun>();
        var failure = new AtomicReference<Exception>();
        Thread batchThread = Thread.ofPlatform().name("s5-batch").start(() -> {
            try {
                batch.set(CapacityRun.run(gate, work, rate, batchSeconds, BATCH_DEADLINE_MS * 1_000_000, seed));
            } catch (Exception e) {
                failure.set(e);
            }
        });
        T result = interactive.call();
        batchThread.join();
        if (failure.get() != null) {
            throw failure.get();
        }
        return new Beside<>(result, Objects.requireNonNull(batch.get(), "the batch run ended"));
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
     * Q = B / 4 in the first cut's fixed configurations; otherwise the recommended workload (a deadline queue), the
     * interactive latency objective learned.
     */
    private static WorkloadConfig workload(String name, int concurrent, Config c) {
        return switch (c.sharing()) {
            case FIXED ->
                WorkloadConfig.builder(name)
                        .concurrent(concurrent)
                        .extraSlots(Math.max(1, concurrent / 4))
                        .build();
            case CAPPED, PRIORITY -> WorkloadConfig.recommended(name, concurrent);
        };
    }

    /** Interactive goodput with batch at least this share of its goodput alone. */
    static final double GOODPUT_TARGET = 0.95;
    /** Interactive p99 with batch at most this many times the best interactive-alone p99 of the run. */
    static final double P99_TARGET = 1.5;
    /** Batch at least this share of the best fixed cap that meets both interactive targets. */
    static final double BATCH_TARGET = 0.9;

    /** The medians of one configuration at one load. */
    record Row(Config config, double alone, double together, double p99Alone, double p99, double batch) {
        static Row of(Config c, List<Run> list) {
            return new Row(
                    c,
                    median(list, r -> r.alone().goodputInSlo()),
                    median(list, r -> r.interactive().goodputInSlo()),
                    median(list, r -> Stats.ms(r.alone().succeeded, 99)),
                    median(list, r -> Stats.ms(r.interactive().succeeded, 99)),
                    median(list, r -> r.batch().goodputWithinRun()));
        }

        boolean goodputMet() {
            return together >= GOODPUT_TARGET * alone;
        }

        boolean p99Met(double bestAlone) {
            return p99 <= P99_TARGET * bestAlone;
        }
    }

    /** The best (lowest) interactive-alone p99 of any configuration of the run, in ms: the latency baseline. */
    static double bestAloneP99(List<Row> rows) {
        return rows.stream().mapToDouble(Row::p99Alone).min().orElse(Double.NaN);
    }

    /** The best batch rate of a fixed cap that meets both interactive targets; NaN when none does. */
    static double bestQualifyingBatch(List<Row> rows) {
        double best = bestAloneP99(rows);
        return rows.stream()
                .filter(r -> r.config().sharing() != Sharing.PRIORITY && r.goodputMet() && r.p99Met(best))
                .mapToDouble(Row::batch)
                .max()
                .orElse(Double.NaN);
    }

    /**
     * The rows of one batch load (a multiple of its capacity alone); with the header when {@code header}. Interactive
     * goodput is held to {@value #GOODPUT_TARGET} × alone, its p99 with batch to {@value #P99_TARGET} × the best
     * interactive-alone p99 of any configuration, batch to {@value #BATCH_TARGET} × the best fixed cap meeting both.
     */
    static List<String> table(Map<Config, List<Run>> runs, double load, boolean header) {
        var lines = new ArrayList<String>();
        if (header) {
            lines.add("| s5-two-workloads: configuration (B interactive / batch) | batch load | interactive goodput "
                    + "within SLO /s: alone, with batch (min–max) | with batch / alone | interactive p99 ms: alone, "
                    + "with batch (min–max) | batch goodput /s within the run (min–max) | batch / best qualifying "
                    + "fixed cap | mean limit interactive / batch |");
            lines.add("|---|---:|---:|---:|---:|---:|---:|---:|");
        }
        var entries = List.copyOf(runs.entrySet());
        var rows = entries.stream().map(e -> Row.of(e.getKey(), e.getValue())).toList();
        double best = bestAloneP99(rows);
        double qualifying = bestQualifyingBatch(rows);
        for (int i = 0; i < rows.size(); i++) {
            Row row = rows.get(i);
            var list = entries.get(i).getValue();
            lines.add(String.format(
                    Locale.ROOT,
                    "| %s | %.0f× | %.0f, %s | %.2f (≥ %.2f: %s) | %.1f, %s (≤ %.1f: %s) | %s | %s | %.1f / %.1f |",
                    row.config().label(),
                    load,
                    row.alone(),
                    Stats.spread(list, r -> r.interactive().goodputInSlo()),
                    row.together() / row.alone(),
                    GOODPUT_TARGET,
                    row.goodputMet() ? "met" : "missed",
                    row.p99Alone(),
                    Stats.spread(list, r -> Stats.ms(r.interactive().succeeded, 99)),
                    P99_TARGET * best,
                    row.p99Met(best) ? "met" : "missed",
                    Stats.spread(list, r -> r.batch().goodputWithinRun()),
                    Double.isNaN(qualifying)
                            ? "no fixed cap qualifies"
                            : String.format(
                                    Locale.ROOT,
                                    "%.2f (≥ %.1f: %s)",
                                    row.batch() / qualifying,
                                    BATCH_TARGET,
                                    row.batch() >= BATCH_TARGET * qualifying ? "met" : "missed"),
                    median(list, r -> r.interactive().meanLimit(0, 1)),
                    median(list, r -> r.batch().meanLimit(0, 1))));
        }
        String failed = failures(runs.values());
        if (!failed.isEmpty()) {
            lines.add("");
            lines.add(String.format(Locale.ROOT, "(load %.0f×: %s)", load, failed));
        }
        lines.add(String.format(
                Locale.ROOT,
                "%n(load %.0f×: best interactive-alone p99 of the run %.1f ms, the p99 target %.1f ms; best batch of a "
                        + "fixed cap meeting both interactive targets: %s)%n",
                load,
                best,
                P99_TARGET * best,
                Double.isNaN(qualifying) ? "none" : String.format(Locale.ROOT, "%.1f/s", qualifying)));
        return lines;
    }

    /**
     * The operations of {@code runs} that failed otherwise than by refusal or timeout (a server error, a broken
     * connection: counted, never the end of a run), by workload, with the first one's message; empty when none did.
     */
    static String failures(Collection<List<Run>> runs) {
        long interactive = 0;
        long batch = 0;
        @Nullable String first = null;
        for (List<Run> list : runs) {
            for (Run r : list) {
                interactive += r.alone().count(CapacityRun.Result.OTHER)
                        + r.interactive().count(CapacityRun.Result.OTHER);
                batch += r.batch().count(CapacityRun.Result.OTHER);
                for (CapacityRun c : List.of(r.alone(), r.interactive(), r.batch())) {
                    first = first != null ? first : c.firstFailure();
                }
            }
        }
        if (interactive + batch == 0) {
            return "";
        }
        return String.format(
                Locale.ROOT,
                "operations failed otherwise, counted as not served: interactive %d, batch %d; the first: %s",
                interactive,
                batch,
                first);
    }

    /**
     * The frontier "batch /s against interactive p99", one panel per load: the sweep of fixed caps as a line (cap 1 at
     * the left), each configuration as a point, and the p99 target as a vertical level.
     */
    static String frontier(Map<Double, Map<Config, List<Run>>> byLoad) {
        var svg = new Svg(900, byLoad.size() * 330 + 20);
        int y = 10;
        for (var load : byLoad.entrySet()) {
            var rows = load.getValue().entrySet().stream()
                    .map(e -> Row.of(e.getKey(), e.getValue()))
                    .toList();
            double best = bestAloneP99(rows);
            double xMax = Math.ceil(rows.stream().mapToDouble(Row::p99).max().orElse(100) / 10) * 10 + 10;
            double yMax = Math.ceil(rows.stream().mapToDouble(Row::batch).max().orElse(10) / 10) * 10 + 10;
            svg.title(
                    20,
                    y + 12,
                    String.format(
                            Locale.ROOT,
                            "s5 at %.0f×: batch goodput /s against interactive p99 ms with batch (dashed: %.1f × the "
                                    + "best alone p99)",
                            load.getKey(),
                            P99_TARGET));
            var panel = svg.lines(60, y + 24, 620, 270, xMax, yMax, "ms");
            var fixed = rows.stream()
                    .filter(r -> r.config().sharing() == Sharing.CAPPED)
                    .map(r -> new double[] {r.p99(), r.batch()})
                    .toList();
            panel.line(fixed, Svg.COLOURS.get(0), 1.5, "fixed batch caps");
            int colour = 0;
            for (Row r : rows) {
                String c = r.config().sharing() == Sharing.CAPPED
                        ? Svg.COLOURS.get(0)
                        : Svg.COLOURS.get(1 + colour++ % (Svg.COLOURS.size() - 1));
                panel.point(r.p99(), r.batch(), r.config().label(), c);
            }
            panel.vertical(P99_TARGET * best, "p99 target");
            y += 330;
        }
        return svg.end();
    }

    static Map<Config, List<Run>> newRuns(int pool, int need) {
        var runs = new LinkedHashMap<Config, List<Run>>();
        configs(pool, need).forEach(c -> runs.put(c, new ArrayList<>()));
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

    /** The runs of each load, kept for the frontier chart. */
    final Map<Double, Map<Config, List<Run>>> byLoad = new LinkedHashMap<>();

    /** Interactive work at half its capacity beside batch work at each of {@code loads} × its own, round-robin. */
    List<String> table(double[] capacities, List<Double> loads, int repetitions, Progress progress) throws Exception {
        var table = new ArrayList<String>();
        for (double load : loads) {
            var runs = newRuns(pool, interactiveNeed(capacities[0] / 2));
            for (int r = 0; r < repetitions; r++) {
                for (var e : runs.entrySet()) {
                    System.gc();
                    e.getValue().add(once(e.getKey(), capacities[0] / 2, load * capacities[1], 1000L * r + 7));
                    progress.step("s5 " + load + "x " + e.getKey().label() + ", repetition " + (r + 1));
                }
            }
            byLoad.put(load, runs);
            table.addAll(table(runs, load, table.isEmpty()));
        }
        return table;
    }

    /** How long after the interactive load stops batch reaches this share of its capacity alone. */
    static final double RECOVERY_TARGET = 0.9;
    /** The most either recovery may take, in seconds. */
    static final double RECOVERY_SECONDS = 2;

    /**
     * Recovery, with priorities: batch at {@code load} × its capacity throughout three periods of the run's length;
     * interactive at half its capacity in the first and the third. How long after the interactive load stops batch
     * gets {@value #RECOVERY_TARGET} × its capacity alone (over 500 ms), and the interactive p99 from
     * {@value #RECOVERY_SECONDS} s after it comes back, against {@value #P99_TARGET} × the best alone p99 of the load's
     * table.
     */
    List<String> recovery(double[] capacities, double load, int repetitions, Progress progress) throws Exception {
        var config = ours(pool, interactiveNeed(capacities[0] / 2));
        double best = bestAloneP99(byLoad.getOrDefault(load, Map.of()).entrySet().stream()
                .map(e -> Row.of(e.getKey(), e.getValue()))
                .toList());
        var lines = new ArrayList<String>();
        lines.add("| s5 recovery (" + config.label() + ", batch at " + Stats.f(load) + "×) | repetition | batch ≥ "
                + RECOVERY_TARGET + " × capacity alone (" + Stats.f(capacities[1]) + "/s) after the interactive load "
                + "stops, s | interactive p99 ms from " + RECOVERY_SECONDS + " s after it returns | batch /s while "
                + "interactive runs, alone |");
        lines.add("|---|---:|---:|---:|---:|");
        for (int r = 0; r < repetitions; r++) {
            System.gc();
            try (var ds = pools.get()) {
                var gates = gates(ds, config);
                long seed = 1000L * r + 11;
                long begin = System.nanoTime();
                var stopped = new double[1];
                var both = besideBatch(gates[1], load * capacities[1], 3 * seconds, seed, () -> {
                    interactive(gates[0], capacities[0] / 2, seed + 1, 0);
                    stopped[0] = (System.nanoTime() - begin) / 1e9;
                    Thread.sleep((long) (1000 * seconds));
                    return interactive(gates[0], capacities[0] / 2, seed + 2, RECOVERY_SECONDS);
                });
                CapacityRun back = both.interactive();
                CapacityRun batch = both.batch();
                double after = recoveredAfter(batch, stopped[0], RECOVERY_TARGET * capacities[1]);
                double p99 = Stats.ms(back.settled, 99);
                lines.add(String.format(
                        Locale.ROOT,
                        "| | %d | %s (≤ %.0f: %s) | %.1f (≤ %.1f: %s) | %.1f, %.1f |",
                        r + 1,
                        Double.isNaN(after) ? "never" : String.format(Locale.ROOT, "%.1f", after),
                        RECOVERY_SECONDS,
                        after <= RECOVERY_SECONDS ? "met" : "missed",
                        p99,
                        P99_TARGET * best,
                        p99 <= P99_TARGET * best ? "met" : "missed",
                        batch.phaseGoodput(0),
                        batch.phaseGoodput(1)));
            }
            progress.step("s5 recovery, repetition " + (r + 1));
        }
        return lines;
    }

    /** Seconds after {@code stopped} until batch completed at {@code rate} or more over 500 ms; NaN if it never did. */
    static double recoveredAfter(CapacityRun batch, double stopped, double rate) {
        int span = (int) (500 / CapacityRun.BIN_MILLIS);
        int first = (int) Math.floor(stopped * 1000 / CapacityRun.BIN_MILLIS);
        int last = (int) (batch.seconds * 1000 / CapacityRun.BIN_MILLIS) - span;
        for (int b = first; b <= last; b++) {
            long n = 0;
            for (int i = b; i < b + span; i++) {
                n += batch.bins.get(i);
            }
            if (n / (span * CapacityRun.BIN_MILLIS / 1000.0) >= rate) {
                return (b + span) * CapacityRun.BIN_MILLIS / 1000.0 - stopped;
            }
        }
        return Double.NaN;
    }
}
