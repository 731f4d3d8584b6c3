package dev.dbbulkhead.tools.overload;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import dev.dbbulkhead.tools.overload.CapacityRun.Result;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToDoubleFunction;

/**
 * The capacity scenarios of {@code overload} (see {@link CapacityScenario}): each scenario at each load (a multiple
 * of its measured capacity), through each configuration of {@link CapacityGates}, with the static B swept; medians
 * over round-robin repetitions, a table, and with {@code --report} Markdown plus an SVG of the limits over time.
 */
final class CapacityBench {
    /** What the command line asked for. */
    record Settings(List<String> scenarios, List<String> configs, List<Double> loads, List<Integer> sweep,
            int maxConcurrent, long deadlineMs, double seconds, int repetitions, int locks, int holdMillis,
            double cpuMillis, int burst, Path report, boolean pin) {}

    private final Settings settings;
    private final PrintWriter out;
    private final TestDatabase db;
    /** scenario → load → configuration → runs. */
    private final Map<String, Map<Double, Map<String, List<CapacityRun>>>> runs = new LinkedHashMap<>();
    /** scenario → one operation alone, ms. */
    private final Map<String, Double> alone = new LinkedHashMap<>();
    /** s5-two-workloads' table, if it ran. */
    private List<String> twoWorkloads = List.of();
    private String pinned = "not pinned";

    private final Progress progress;

    CapacityBench(Settings settings, PrintWriter out, TestDatabase db, Progress progress) {
        this.settings = settings;
        this.out = out;
        this.db = db;
        this.progress = progress;
    }

    /** The configurations of one scenario: the static one expanded to the sweep (not for the step, B has no best). */
    private List<String> configs(CapacityScenario scenario) {
        var list = new ArrayList<String>();
        for (String c : settings.configs()) {
            if (!c.equals(CapacityGates.STATIC)) {
                list.add(c);
            } else if (scenario != CapacityScenario.S3_STEP && scenario != CapacityScenario.S5_TWO) {
                settings.sweep().forEach(b -> list.add(CapacityGates.STATIC + " B=" + b));
            }
        }
        return list;
    }

    void run() throws Exception {
        if (settings.pin()) {
            pinned = Pinning.pin(db, out);
        }
        for (String label : settings.scenarios()) {
            var scenario = CapacityScenario.byLabel(label);
            if (scenario == CapacityScenario.S5_TWO) {
                twoWorkloads();
                continue;
            }
            if (scenario == CapacityScenario.S6_BURST) {
                bursts(scenario);
                continue;
            }
            CapacityScenario.Work work;
            double capacity;
            try (var ds = pool()) {
                work = scenario.prepare(ds, settings.locks(), settings.holdMillis(), settings.cpuMillis());
                alone.put(label, aloneMillis(ds, work));
                capacity = capacity(ds, work, scenario == CapacityScenario.S1_CPU ? 4 : 2 * work.capacityAt(0),
                        Math.min(1.5, settings.seconds()));
            }
            out.printf("%s: one operation alone %.1f ms; capacity ≈ %.0f ops/s (closed loop)%n", label,
                    alone.get(label), capacity);
            out.flush();
            var byLoad = runs.computeIfAbsent(label, k -> new LinkedHashMap<>());
            for (double load : settings.loads()) {
                var byConfig = byLoad.computeIfAbsent(load, k -> new LinkedHashMap<>());
                for (int r = 0; r < settings.repetitions(); r++) {
                    for (String config : configs(scenario)) {
                        byConfig.computeIfAbsent(config, k -> new ArrayList<>())
                                .add(once(config, work, load * capacity, r));
                        progress.step(label + " " + load + "x " + config + ", repetition " + (r + 1));
                    }
                }
            }
        }
        progress.done();
        var table = new ArrayList<>(table());
        if (!twoWorkloads.isEmpty()) {
            table.add("");
            table.addAll(twoWorkloads);
        }
        table.forEach(out::println);
        targets().forEach(out::println);
        out.flush();
        if (settings.report() != null) {
            write(table);
        }
    }

    /** s6: bursts of {@code --burst-size} callers at once, through each configuration, round-robin. */
    private void bursts(CapacityScenario scenario) throws Exception {
        CapacityScenario.Work work;
        try (var ds = pool()) {
            work = scenario.prepare(ds, settings.locks(), settings.holdMillis(), 0);
            alone.put(scenario.label, aloneMillis(ds, work));
        }
        out.printf("%s: one operation alone %.1f ms; %d callers at once, every %d ms; B = %d%n", scenario.label,
                alone.get(scenario.label), settings.burst(), Math.max(100, 2 * settings.deadlineMs()),
                settings.maxConcurrent());
        out.flush();
        var byConfig = runs.computeIfAbsent(scenario.label, k -> new LinkedHashMap<>())
                .computeIfAbsent((double) settings.burst(), k -> new LinkedHashMap<>());
        for (int r = 0; r < settings.repetitions(); r++) {
            for (String config : configs(scenario)) {
                System.gc();
                try (var ds = pool()) {
                    var gate = gate(config, ds);
                    byConfig.computeIfAbsent(config, k -> new ArrayList<>()).add(CapacityRun.bursts(gate, work,
                            settings.burst(), settings.seconds(), settings.deadlineMs() * 1_000_000));
                }
                progress.step(scenario.label + " " + config + ", repetition " + (r + 1));
            }
        }
    }

    /** s5: capacities of each kind alone (closed loop), then the configurations round-robin. */
    private void twoWorkloads() throws Exception {
        double interactive;
        double batch;
        try (var ds = pool()) {
            var work = CapacityScenario.S2_LOCKS.prepare(ds, settings.locks(), TwoWorkloads.INTERACTIVE_MS, 0);
            interactive = capacity(ds, work, 2 * settings.locks(), 1.5);
            batch = capacity(ds, new CapacityScenario.Work(CapacityScenario.S2_LOCKS, 0, settings.locks(),
                    TwoWorkloads.BATCH_MS), 2 * settings.locks(), 1.5);
        }
        out.printf("s5-two-workloads: capacity alone ≈ %.0f interactive or %.0f batch ops/s; interactive at %.0f/s "
                + "(half), batch at %s × %.0f/s%n", interactive, batch, interactive / 2, settings.loads(), batch);
        out.flush();
        var bench = new TwoWorkloads(() -> {
            try {
                return pool();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }, settings.maxConcurrent(), settings.locks(), settings.seconds());
        var table = new ArrayList<String>();
        for (double load : settings.loads()) {
            var runs = TwoWorkloads.newRuns(settings.maxConcurrent());
            for (int r = 0; r < settings.repetitions(); r++) {
                for (var e : runs.entrySet()) {
                    System.gc();
                    e.getValue().add(bench.once(e.getKey(), interactive / 2, load * batch, 1000L * r + 7));
                    progress.step("s5 " + load + "x " + e.getKey().label() + ", repetition " + (r + 1));
                }
            }
            table.addAll(TwoWorkloads.table(runs, load, table.isEmpty()));
        }
        twoWorkloads = table;
    }

    private HikariDataSource pool() throws SQLException {
        return Barriers.warmPool(db, settings.maxConcurrent(), Duration.ofMillis(250));
    }

    private static double aloneMillis(HikariDataSource ds, CapacityScenario.Work work) throws SQLException {
        return Barriers.medianNanos(ds, work.sql(0, 0.5), 15) / 1e6;
    }

    /** Operations per second that {@code callers} in a closed loop get for {@code seconds}, straight on the pool. */
    private static double capacity(HikariDataSource ds, CapacityScenario.Work work, int callers, double seconds)
            throws Exception {
        var done = new LongAdder();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        try (var tasks = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < callers; i++) {
                tasks.submit(() -> {
                    var random = new Random(callers);
                    while (System.nanoTime() < end) {
                        Barriers.plainStatement(ds, work.sql(0, random.nextDouble()));
                        done.increment();
                    }
                    return null;
                });
            }
        }
        return done.sum() / seconds;
    }

    private CapacityRun once(String config, CapacityScenario.Work work, double rate, int repetition)
            throws Exception {
        System.gc();
        try (var ds = pool()) {
            return CapacityRun.run(gate(config, ds), work, rate, settings.seconds(), settings.deadlineMs() * 1_000_000,
                    1000L * repetition + Math.round(rate));
        }
    }

    /** The configuration {@code config} ("static B=8" from the sweep, or a label of {@link CapacityGates}). */
    private CapacityGates.Gate gate(String config, HikariDataSource ds) {
        int b = config.startsWith(CapacityGates.STATIC) ? Integer.parseInt(config.substring(config.indexOf('=') + 1))
                : settings.maxConcurrent();
        String label = config.startsWith(CapacityGates.STATIC) ? CapacityGates.STATIC : config;
        return CapacityGates.of(label, ds, settings.maxConcurrent(), b, settings.deadlineMs());
    }

    private static double median(List<CapacityRun> list, ToDoubleFunction<CapacityRun> metric) {
        return OverloadReport.median(list, metric);
    }

    private static double ms(org.HdrHistogram.Histogram h, double percentile) {
        return OverloadReport.ms(h, percentile);
    }

    private static String f(double v) {
        return OverloadReport.f(v);
    }

    /** The median of {@code metric} over {@code list}, and its spread: "m (min–max)". */
    private static String spread(List<CapacityRun> list, ToDoubleFunction<CapacityRun> metric) {
        double lo = list.stream().mapToDouble(metric).min().orElse(Double.NaN);
        double hi = list.stream().mapToDouble(metric).max().orElse(Double.NaN);
        return f(median(list, metric)) + (list.size() > 1 ? " (" + f(lo) + "–" + f(hi) + ")" : "");
    }

    List<String> table() {
        var lines = new ArrayList<String>();
        lines.add("| scenario | load | configuration | goodput within SLO /s (min–max) | committed late | refused at once "
                + "| admitted, then timed out | false refusals (audited) | succeeded p50 / p99 ms (p99 min–max) "
                + "| failures p99 ms | told past its wait p99 ms | mean limit | step: settled down / up s "
                + "| s4: 2 ms / 100 ms within SLO /s (100 ms: share of goodput / of arrivals) |");
        lines.add("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        runs.forEach((scenario, byLoad) -> byLoad.forEach((load, byConfig) -> byConfig.forEach((config, list) ->
                lines.add("| " + scenario + " | " + f(load) + (scenario.equals(CapacityScenario.S6_BURST.label)
                        ? " at once" : "×") + " | " + config
                        + " | " + spread(list, CapacityRun::goodputInSlo)
                        + " | " + f(median(list, r -> r.count(Result.LATE)))
                        + " | " + f(median(list, r -> r.count(Result.REFUSED)))
                        + " | " + f(median(list, r -> r.count(Result.WASTED))) + " ("
                        + String.format(Locale.ROOT, "%.1f %%", 100 * median(list, CapacityRun::wastedShare)) + ")"
                        + " | " + falseRefusals(list)
                        + " | " + f(median(list, r -> ms(r.succeeded, 50))) + " / "
                        + spread(list, r -> ms(r.succeeded, 99))
                        + " | " + f(median(list, r -> ms(r.failed, 99)))
                        + " | " + f(median(list, r -> ms(r.overshoot, 99)))
                        + " | " + f(median(list, r -> r.meanLimit(0, 1)))
                        + " | " + (scenario.equals(CapacityScenario.S3_STEP.label)
                                ? f(median(list, r -> settle(r, 1 / 3.0))) + " / "
                                        + f(median(list, r -> settle(r, 2 / 3.0)))
                                : "") + " | " + (scenario.equals(CapacityScenario.S4_MIXED.label) ? byKind(list) : "")
                        + " |"))));
        return lines;
    }

    /** s4's goodput by kind: "512 / 20.0 (3.8 % / 10.0 %)", the long operations' share of goodput and of arrivals. */
    static String byKind(List<CapacityRun> list) {
        double shortOnes = median(list, r -> r.goodputInSlo(0));
        double longOnes = median(list, r -> r.goodputInSlo(1));
        double share = shortOnes + longOnes == 0 ? 0 : longOnes / (shortOnes + longOnes);
        return String.format(Locale.ROOT, "%s / %s (%.1f %% / %.1f %%)", f(shortOnes), f(longOnes), 100 * share,
                100 * median(list, r -> r.offeredShare(1)));
    }

    /**
     * The audited share of predicted refusals that would have been served in time, over all runs, with its 95 %
     * Wilson interval: "4.2 % [2.1–8.0] of 240".
     */
    static String falseRefusals(List<CapacityRun> list) {
        long audited = list.stream().mapToLong(r -> r.audits[0]).sum();
        long served = list.stream().mapToLong(r -> r.audits[1]).sum();
        if (audited == 0) {
            return "–";
        }
        double[] ci = wilson(served, audited);
        return String.format(Locale.ROOT, "%.1f %% [%.1f–%.1f] of %d", 100.0 * served / audited, 100 * ci[0],
                100 * ci[1], audited);
    }

    /** The 95 % Wilson score interval of {@code k} successes in {@code n}. */
    static double[] wilson(long k, long n) {
        double z = 1.96;
        double p = (double) k / n;
        double denominator = 1 + z * z / n;
        double centre = (p + z * z / (2 * n)) / denominator;
        double half = z * Math.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / denominator;
        return new double[] {Math.max(0, centre - half), Math.min(1, centre + half)};
    }

    /**
     * Seconds from the step at {@code fraction} until the limit is first within 20 % of where it settles: its mean
     * over the last third of that phase (the capacity step changes the phase every third of the run).
     */
    static double settle(CapacityRun run, double fraction) {
        double step = fraction * run.seconds;
        double phaseEnd = step + run.seconds / 3;
        double settled = run.limits.stream().filter(s -> s[0] >= phaseEnd - run.seconds / 9 && s[0] < phaseEnd)
                .mapToDouble(s -> s[1]).average().orElse(Double.NaN);
        for (double[] s : run.limits) {
            if (s[0] >= step && Math.abs(s[1] - settled) <= 0.2 * settled) {
                return s[0] - step;
            }
        }
        return Double.NaN;
    }

    /**
     * The targets, per scenario and load: adaptive goodput within SLO ≥ 0.97 × the best static B and ≥ the better of
     * Gradient2 and Vegas, with successes p99 ≤ the lower of theirs; met or missed, with the numbers.
     */
    List<String> targets() {
        var lines = new ArrayList<String>();
        runs.forEach((scenario, byLoad) -> byLoad.forEach((load, byConfig) -> {
            var adaptive = byConfig.get(CapacityGates.ADAPTIVE);
            if (adaptive == null) {
                return;
            }
            double ours = median(adaptive, CapacityRun::goodputInSlo);
            double oursP99 = median(adaptive, r -> ms(r.succeeded, 99));
            var line = new StringBuilder(String.format(Locale.ROOT, "%s at %s×: adaptive %.0f/s within SLO, p99 %.1f ms",
                    scenario, f(load), ours, oursP99));
            String best = null;
            double bestGoodput = -1;
            for (var e : byConfig.entrySet()) {
                double g = median(e.getValue(), CapacityRun::goodputInSlo);
                if (e.getKey().startsWith(CapacityGates.STATIC) && g > bestGoodput) {
                    best = e.getKey();
                    bestGoodput = g;
                }
            }
            if (best != null) {
                line.append(String.format(Locale.ROOT, "; best static (%s) %.0f/s: %.2f× (≥ 0.97: %s)", best,
                        bestGoodput, ours / bestGoodput, ours >= 0.97 * bestGoodput ? "met" : "missed"));
            }
            double peerGoodput = -1;
            double peerP99 = Double.MAX_VALUE;
            for (String peer : List.of(CapacityGates.GRADIENT2, CapacityGates.VEGAS)) {
                if (byConfig.containsKey(peer)) {
                    double g = median(byConfig.get(peer), CapacityRun::goodputInSlo);
                    double p = median(byConfig.get(peer), r -> ms(r.succeeded, 99));
                    peerGoodput = Math.max(peerGoodput, g);
                    peerP99 = Math.min(peerP99, p);
                    line.append(String.format(Locale.ROOT, "; %s %.0f/s p99 %.1f ms", peer, g, p));
                }
            }
            if (peerGoodput >= 0) {
                line.append(String.format(Locale.ROOT, "; goodput ≥ the better of them: %s (%.2f×), p99 ≤ the lower: "
                        + "%s", ours >= peerGoodput ? "met" : "missed", ours / peerGoodput, oursP99 <= peerP99 ? "met"
                        : "missed"));
            }
            line.append(String.format(Locale.ROOT, "; admitted then timed out %.1f %% (≤ 1 %%), false refusals %s",
                    100 * median(adaptive, CapacityRun::wastedShare), falseRefusals(adaptive)));
            if (settings.seconds() >= 60) {
                line.append(String.format(Locale.ROOT, "; limit drift %+.0f %% (mean %.1f then %.1f)",
                        100 * (median(adaptive, r -> r.meanLimit(0.8, 1) / r.meanLimit(0.1, 0.3)) - 1),
                        median(adaptive, r -> r.meanLimit(0.1, 0.3)), median(adaptive, r -> r.meanLimit(0.8, 1))));
            }
            lines.add(line.toString());
        }));
        return lines;
    }

    private void write(List<String> table) throws IOException {
        var md = new StringBuilder("# Capacity scenarios\n\n");
        md.append(String.format(Locale.ROOT, "B max = pool = %d, deadline %d ms from each arrival's intended start, "
                + "Poisson arrivals at the loads × the measured capacity for %.0f s, %d repetition(s) round-robin "
                + "(medians, spread min–max), K = %d locks held %d ms (s2), CPU %.1f ms (s1), database: %s, JDK %s, "
                + "%s.%n%n", settings.maxConcurrent(), settings.deadlineMs(), settings.seconds(),
                settings.repetitions(), settings.locks(), settings.holdMillis(), settings.cpuMillis(),
                db.isEmbedded() ? "embedded PostgreSQL" : "DB_URL", Runtime.version(), pinned));
        alone.forEach((s, ms) -> md.append(String.format(Locale.ROOT, "- %s: one operation alone %.1f ms%n", s, ms)));
        md.append('\n');
        table.forEach(l -> md.append(l).append('\n'));
        md.append('\n');
        targets().forEach(l -> md.append("- ").append(l).append('\n'));
        md.append("\n![limit over time](capacity.svg)\n");
        Files.createDirectories(settings.report());
        Files.writeString(settings.report().resolve("capacity.md"), md.toString());
        Files.writeString(settings.report().resolve("capacity.svg"), svg());
        out.println("report: " + settings.report().resolve("capacity.md"));
    }

    /** Per scenario, at its highest load: the limit over time of the first run of each adaptive configuration. */
    private String svg() {
        int w = 900;
        int panel = 220;
        var s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" "
                + "fill=\"white\"/>%n", w, runs.size() * (panel + 50) + 20));
        String[] colours = {"#2b7bd9", "#d9822b", "#5aa02c", "#a02c8f", "#888800"};
        int y = 20;
        for (var scenario : runs.entrySet()) {
            double load = scenario.getValue().keySet().stream().mapToDouble(Double::doubleValue).max().orElse(0);
            var byConfig = scenario.getValue().get(load);
            s.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"%d\" font-weight=\"bold\">%s at %s×: limit over "
                    + "time (grey: K)</text>%n", y + 12, scenario.getKey(), f(load)));
            int top = y + 24;
            int h = panel - 40;
            double max = settings.maxConcurrent();
            double seconds = settings.seconds();
            s.append(String.format(Locale.ROOT, "<rect x=\"60\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                    + "stroke=\"#ccc\"/>%n", top, w - 80, h));
            s.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"%d\">%.0f</text><text x=\"20\" y=\"%d\">0</text>"
                    + "<text x=\"%d\" y=\"%d\">%.0f s</text>%n", top + 10, max, top + h, w - 60, top + h + 14, seconds));
            int k = 0;
            for (String config : List.of(CapacityGates.ADAPTIVE, CapacityGates.GRADIENT2, CapacityGates.VEGAS,
                    CapacityGates.AIMD)) {
                var list = byConfig.get(config);
                if (list == null) {
                    continue;
                }
                CapacityRun run = list.getFirst();
                if (k == 0) {
                    s.append(polyline(run, 2, max, seconds, top, h, w, "#aaaaaa"));
                }
                s.append(polyline(run, 1, max, seconds, top, h, w, colours[k]));
                s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>%n", 70 + k * 200,
                        top + h + 28, colours[k], config));
                k++;
            }
            y += panel + 50;
        }
        return s.append("</svg>\n").toString();
    }

    private static String polyline(CapacityRun run, int column, double max, double seconds, int top, int h, int w,
            String colour) {
        var points = new StringBuilder();
        for (double[] sample : run.limits) {
            double x = 60 + (w - 80) * Math.min(1, sample[0] / seconds);
            double yy = top + h - h * Math.min(1, sample[column] / max);
            points.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, yy));
        }
        return String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>%n",
                colour, points.toString().trim());
    }
}
