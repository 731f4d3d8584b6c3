package dev.dbbulkhead.tools.overload;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import dev.dbbulkhead.tools.overload.CapacityGates.Config;
import dev.dbbulkhead.tools.overload.CapacityReport.Cell;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The capacity scenarios of {@code overload} (see {@link CapacityScenario}): each scenario at each load (a multiple
 * of its measured capacity), through each configuration of {@link CapacityGates}, with the static B swept; medians
 * over round-robin repetitions, a table, and with {@code --report} Markdown plus an SVG of the limits over time.
 */
final class CapacityBench {
    private final CapacitySettings settings;
    private final PrintWriter out;
    private final TestDatabase db;
    /** Every run, in the order of the first repetition. */
    private final Map<Cell, List<CapacityRun>> runs = new LinkedHashMap<>();
    /** Each scenario's operation alone, ms. */
    private final Map<CapacityScenario, Double> alone = new LinkedHashMap<>();
    /** s5-two-workloads' table, if it ran. */
    private List<String> twoWorkloads = List.of();
    /** s5's frontier chart, if it ran. */
    private String frontier = "";

    private String pinned = "not pinned";

    private final Progress progress;

    CapacityBench(CapacitySettings settings, PrintWriter out, TestDatabase db, Progress progress) {
        this.settings = settings;
        this.out = out;
        this.db = db;
        this.progress = progress;
    }

    void run() throws Exception {
        if (settings.pin()) {
            pinned = Pinning.pin(db, out);
        }
        for (String label : settings.scenarios()) {
            var scenario = CapacityScenario.byLabel(label);
            if (scenario == CapacityScenario.S5_TWO) {
                twoWorkloads();
            } else if (scenario == CapacityScenario.S6_BURST) {
                bursts(scenario);
            } else {
                loads(scenario);
            }
        }
        progress.done();
        var report = new CapacityReport(settings, runs);
        var table = new ArrayList<>(report.table());
        if (!twoWorkloads.isEmpty()) {
            table.add("");
            table.addAll(twoWorkloads);
        }
        table.forEach(out::println);
        report.targets().forEach(out::println);
        out.flush();
        Path dir = settings.report();
        if (dir != null) {
            report.write(dir, header(), table);
            if (!frontier.isEmpty()) {
                Files.writeString(dir.resolve("s5-frontier.svg"), frontier);
                Files.writeString(
                        dir.resolve("capacity.md"),
                        "\n![s5: batch against interactive p99, fixed caps and priorities](s5-frontier.svg)\n",
                        StandardOpenOption.APPEND);
            }
            out.println("report: " + dir.resolve("capacity.md"));
        }
    }

    /** One scenario at each load (a multiple of its measured capacity), through each configuration, round-robin. */
    private void loads(CapacityScenario scenario) throws Exception {
        CapacityScenario.Work work;
        double capacity;
        try (var ds = pool()) {
            work = scenario.prepare(ds, settings.locks(), settings.holdMillis(), settings.cpuMillis());
            alone.put(scenario, Barriers.medianNanos(ds, work.sql(0, 0.5), 15) / 1e6);
            capacity = Barriers.closedLoopRate(
                    ds,
                    work,
                    scenario == CapacityScenario.S1_CPU ? 4 : 2 * work.capacityAt(0),
                    Math.min(1.5, settings.seconds()));
        }
        out.printf(
                "%s: one operation alone %.1f ms; capacity ≈ %.0f ops/s (closed loop)%n",
                scenario.label, alone.get(scenario), capacity);
        out.flush();
        for (double load : settings.loads()) {
            for (int r = 0; r < settings.repetitions(); r++) {
                for (Config config : settings.configs(scenario)) {
                    runs.computeIfAbsent(new Cell(scenario, load, config), k -> new ArrayList<>())
                            .add(once(config, work, load * capacity, r));
                    progress.step(scenario.label + " " + load + "x " + config + ", repetition " + (r + 1));
                }
            }
        }
    }

    /** s6: bursts of {@code --burst-size} callers at once, through each configuration, round-robin. */
    private void bursts(CapacityScenario scenario) throws Exception {
        CapacityScenario.Work work;
        try (var ds = pool()) {
            work = scenario.prepare(ds, settings.locks(), settings.holdMillis(), 0);
            alone.put(scenario, Barriers.medianNanos(ds, work.sql(0, 0.5), 15) / 1e6);
        }
        out.printf(
                "%s: one operation alone %.1f ms; %d callers at once, every %d ms; B = %d%n",
                scenario.label,
                alone.get(scenario),
                settings.burst(),
                Math.max(100, 2 * settings.deadlineMs()),
                settings.maxConcurrent());
        out.flush();
        for (int r = 0; r < settings.repetitions(); r++) {
            for (Config config : settings.configs(scenario)) {
                System.gc();
                try (var ds = pool()) {
                    var gate = CapacityGates.of(config, ds, settings.maxConcurrent(), settings.deadlineMs(), work);
                    runs.computeIfAbsent(new Cell(scenario, settings.burst(), config), k -> new ArrayList<>())
                            .add(CapacityRun.bursts(
                                    gate,
                                    work,
                                    settings.burst(),
                                    settings.seconds(),
                                    settings.deadlineMs() * 1_000_000));
                }
                progress.step(scenario.label + " " + config + ", repetition " + (r + 1));
            }
        }
    }

    /** s5: capacities of each kind alone (closed loop), then the configurations round-robin. */
    private void twoWorkloads() throws Exception {
        double[] capacities;
        try (var ds = pool()) {
            capacities = TwoWorkloads.capacities(ds, settings.locks(), Math.min(1.5, settings.seconds()));
        }
        out.printf(
                "s5-two-workloads: capacity alone ≈ %.0f interactive or %.0f batch ops/s; interactive at %.0f/s "
                        + "(half), batch at %s × %.0f/s%n",
                capacities[0], capacities[1], capacities[0] / 2, settings.loads(), capacities[1]);
        out.flush();
        var bench = new TwoWorkloads(
                () -> {
                    try {
                        return pool();
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                },
                settings.maxConcurrent(),
                settings.locks(),
                settings.seconds());
        var table = new ArrayList<>(bench.table(capacities, settings.loads(), settings.repetitions(), progress));
        table.addAll(bench.recovery(capacities, settings.loads().getFirst(), settings.repetitions(), progress));
        twoWorkloads = table;
        frontier = TwoWorkloads.frontier(bench.byLoad);
    }

    private HikariDataSource pool() throws SQLException {
        return Barriers.warmPool(db, settings.maxConcurrent(), Duration.ofMillis(250));
    }

    private CapacityRun once(Config config, CapacityScenario.Work work, double rate, int repetition) throws Exception {
        System.gc();
        try (var ds = pool()) {
            var gate = CapacityGates.of(config, ds, settings.maxConcurrent(), settings.deadlineMs(), work);
            return CapacityRun.run(
                    gate,
                    work,
                    rate,
                    settings.seconds(),
                    settings.deadlineMs() * 1_000_000,
                    1000L * repetition + Math.round(rate));
        }
    }

    /** How the runs were made, for the report. */
    private String header() {
        var md = new StringBuilder(settings.describe(db.isEmbedded() ? "embedded PostgreSQL" : "DB_URL", pinned));
        alone.forEach(
                (s, ms) -> md.append(String.format(Locale.ROOT, "%n- %s: one operation alone %.1f ms", s.label, ms)));
        return md.toString();
    }
}
