package dev.dbbulkhead.tools.overload;

import static dev.dbbulkhead.tools.support.Stats.f;
import static dev.dbbulkhead.tools.support.Stats.median;
import static dev.dbbulkhead.tools.support.Stats.ms;
import static dev.dbbulkhead.tools.support.Stats.spread;

import dev.dbbulkhead.tools.overload.CapacityGates.Config;
import dev.dbbulkhead.tools.overload.CapacityGates.Kind;
import dev.dbbulkhead.tools.overload.CapacityRun.Result;
import dev.dbbulkhead.tools.support.Svg;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The capacity scenarios' results: the table, the targets met or missed, and the report (Markdown and a chart). */
final class CapacityReport {
    /** One scenario at one load (or burst size) through one configuration: what each repetition is filed under. */
    record Cell(CapacityScenario scenario, double load, Config config) {}

    /** One scenario at one load. */
    private record Point(CapacityScenario scenario, double load) {}

    private final CapacitySettings settings;
    private final Map<Cell, List<CapacityRun>> runs;

    CapacityReport(CapacitySettings settings, Map<Cell, List<CapacityRun>> runs) {
        this.settings = settings;
        this.runs = runs;
    }

    /** Each scenario at each load, with its configurations' runs, in the order they ran. */
    private Map<Point, Map<Config, List<CapacityRun>>> byPoint() {
        var points = new LinkedHashMap<Point, Map<Config, List<CapacityRun>>>();
        runs.forEach((cell, list) -> points.computeIfAbsent(
                        new Point(cell.scenario(), cell.load()), p -> new LinkedHashMap<>())
                .put(cell.config(), list));
        return points;
    }

    List<String> table() {
        var lines = new ArrayList<String>();
        lines.add("| scenario | load | configuration | goodput within SLO /s (min–max) | committed late | refused at "
                + "once | admitted, then timed out | failed otherwise | false refusals (audited) | succeeded "
                + "p50 / p99 ms (p99 min–max) | failures p99 ms | told past its wait p99 ms | mean limit | "
                + "step: settled down / up s | per kind, fastest first, within SLO /s (the slowest: share of "
                + "goodput / of arrivals) |");
        lines.add("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        runs.forEach((cell, list) -> lines.add(row(cell, list)));
        return lines;
    }

    private static String row(Cell cell, List<CapacityRun> list) {
        CapacityScenario scenario = cell.scenario();
        return "| " + scenario.label + " | " + f(cell.load())
                + (scenario == CapacityScenario.S6_BURST ? " at once" : "×")
                + " | " + cell.config().label()
                + " | " + spread(list, CapacityRun::goodputInSlo)
                + " | " + f(median(list, r -> r.count(Result.LATE)))
                + " | " + f(median(list, r -> r.count(Result.REFUSED)))
                + " | " + f(median(list, r -> r.count(Result.WASTED))) + " ("
                + String.format(Locale.ROOT, "%.1f %%", 100 * median(list, CapacityRun::wastedShare)) + ")"
                + " | " + CapacityStats.failures(list)
                + " | " + CapacityStats.falseRefusals(list)
                + " | " + f(median(list, r -> ms(r.succeeded, 50))) + " / " + spread(list, r -> ms(r.succeeded, 99))
                + " | " + f(median(list, r -> ms(r.failed, 99)))
                + " | " + f(median(list, r -> ms(r.overshoot, 99)))
                + " | " + f(median(list, r -> r.meanLimit(0, 1)))
                + " | "
                + (scenario == CapacityScenario.S3_STEP
                        ? f(median(list, r -> CapacityStats.settle(r, 1 / 3.0))) + " / "
                                + f(median(list, r -> CapacityStats.settle(r, 2 / 3.0)))
                        : "")
                + " | " + CapacityStats.byKind(list) + " |";
    }

    /**
     * The targets, per scenario and load: adaptive goodput within SLO ≥ 0.97 × the best static B and ≥ the better of
     * Gradient2 and Vegas, with successes p99 ≤ the lower of theirs; met or missed, with the numbers.
     */
    List<String> targets() {
        var lines = new ArrayList<String>();
        byPoint().forEach((point, byConfig) -> {
            var adaptive = byConfig.get(new Config(Kind.ADAPTIVE, settings.maxConcurrent()));
            if (adaptive != null) {
                lines.add(target(point, byConfig, adaptive));
            }
            lines.addAll(KindTargets.of(point.scenario(), point.load(), byConfig, settings.maxConcurrent()));
        });
        return lines;
    }

    private String target(Point point, Map<Config, List<CapacityRun>> byConfig, List<CapacityRun> adaptive) {
        double ours = median(adaptive, CapacityRun::goodputInSlo);
        double oursP99 = median(adaptive, r -> ms(r.succeeded, 99));
        var line = new StringBuilder(String.format(
                Locale.ROOT,
                "%s at %s×: adaptive %.0f/s within SLO, p99 %.1f ms",
                point.scenario().label,
                f(point.load()),
                ours,
                oursP99));
        byConfig.entrySet().stream()
                .filter(e -> e.getKey().kind() == Kind.STATIC)
                .max((a, b) -> Double.compare(
                        median(a.getValue(), CapacityRun::goodputInSlo),
                        median(b.getValue(), CapacityRun::goodputInSlo)))
                .ifPresent(best -> {
                    double g = median(best.getValue(), CapacityRun::goodputInSlo);
                    line.append(String.format(
                            Locale.ROOT,
                            "; best static (%s) %.0f/s: %.2f× (≥ 0.97: %s)",
                            best.getKey().label(),
                            g,
                            ours / g,
                            ours >= 0.97 * g ? "met" : "missed"));
                });
        double peerGoodput = -1;
        double peerP99 = Double.MAX_VALUE;
        for (Kind peer : List.of(Kind.GRADIENT2, Kind.VEGAS)) {
            var list = byConfig.get(new Config(peer, settings.maxConcurrent()));
            if (list != null) {
                double g = median(list, CapacityRun::goodputInSlo);
                double p = median(list, r -> ms(r.succeeded, 99));
                peerGoodput = Math.max(peerGoodput, g);
                peerP99 = Math.min(peerP99, p);
                line.append(String.format(Locale.ROOT, "; %s %.0f/s p99 %.1f ms", peer.label, g, p));
            }
        }
        if (peerGoodput >= 0) {
            line.append(String.format(
                    Locale.ROOT,
                    "; goodput ≥ the better of them: %s (%.2f×), p99 ≤ the lower: %s",
                    ours >= peerGoodput ? "met" : "missed",
                    ours / peerGoodput,
                    oursP99 <= peerP99 ? "met" : "missed"));
        }
        line.append(String.format(
                Locale.ROOT,
                "; admitted then timed out %.1f %% (≤ 1 %%), false refusals %s",
                100 * median(adaptive, CapacityRun::wastedShare),
                CapacityStats.falseRefusals(adaptive)));
        if (settings.seconds() >= 60) {
            line.append(String.format(
                    Locale.ROOT,
                    "; limit drift %+.0f %% (mean %.1f then %.1f)",
                    100 * (median(adaptive, r -> r.meanLimit(0.8, 1) / r.meanLimit(0.1, 0.3)) - 1),
                    median(adaptive, r -> r.meanLimit(0.1, 0.3)),
                    median(adaptive, r -> r.meanLimit(0.8, 1))));
        }
        return line.toString();
    }

    /** capacity.md and capacity.svg in {@code dir}; {@code header}: how the runs were made. */
    void write(Path dir, String header, List<String> table) throws IOException {
        var md = new StringBuilder("# Capacity scenarios\n\n").append(header).append("\n\n");
        table.forEach(l -> md.append(l).append('\n'));
        md.append('\n');
        targets().forEach(l -> md.append("- ").append(l).append('\n'));
        md.append("\n![limit over time](capacity.svg)\n");
        Files.createDirectories(dir);
        String kinds = KindTargets.chart(byPoint().entrySet().stream()
                .map(e -> Map.entry(
                        e.getKey().scenario().label + " " + f(e.getKey().load()) + "×", e.getValue()))
                .toList());
        if (!kinds.isEmpty()) {
            md.append("\n![goodput per kind by configuration](capacity-kinds.svg)\n");
            Files.writeString(dir.resolve("capacity-kinds.svg"), kinds);
        }
        Files.writeString(dir.resolve("capacity.md"), md.toString());
        Files.writeString(dir.resolve("capacity.svg"), svg());
    }

    /** Per scenario, at its highest load: the limit over time of the first run of each adaptive configuration. */
    private String svg() {
        Map<CapacityScenario, Point> highest = new LinkedHashMap<>();
        var points = byPoint();
        points.keySet().forEach(p -> highest.merge(p.scenario(), p, (a, b) -> a.load() >= b.load() ? a : b));
        int panel = 220;
        var svg = new Svg(900, highest.size() * (panel + 50) + 20);
        int y = 20;
        for (Point point : highest.values()) {
            svg.title(20, y + 12, point.scenario().label + " at " + f(point.load()) + "×: limit over time (grey: K)");
            var lines = svg.lines(60, y + 24, 700, panel - 40, settings.seconds(), settings.maxConcurrent(), "s");
            var byConfig = points.getOrDefault(point, Map.of());
            int k = 0;
            for (Kind kind : List.of(Kind.ADAPTIVE, Kind.GRADIENT2, Kind.VEGAS, Kind.AIMD)) {
                var list = byConfig.get(new Config(kind, settings.maxConcurrent()));
                if (list != null) {
                    CapacityRun run = list.getFirst();
                    if (k == 0) {
                        lines.line(column(run, 2), "#aaaaaa", 1.5, null);
                    }
                    lines.line(column(run, 1), Svg.COLOURS.get(k++), 1.5, kind.label);
                }
            }
            y += panel + 50;
        }
        return svg.end();
    }

    /** {seconds, the sample's {@code column}} for each limit sample of {@code run}. */
    private static List<double[]> column(CapacityRun run, int column) {
        return run.limits.stream().map(s -> new double[] {s[0], s[column]}).toList();
    }
}
