package dev.dbbulkhead.tools.overload;

import static dev.dbbulkhead.tools.support.Stats.f;
import static dev.dbbulkhead.tools.support.Stats.median;
import static dev.dbbulkhead.tools.support.Stats.ms;

import dev.dbbulkhead.tools.overload.CapacityGates.Config;
import dev.dbbulkhead.tools.overload.CapacityGates.Kind;
import dev.dbbulkhead.tools.support.Svg;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * The targets of kinds of operation, met or missed with their numbers, and the chart of goodput per kind by
 * configuration: a budget per kind by hand against the bare pool, learned kinds against the best hand split, and
 * learned kinds against the recommended workload without them where there is nothing to cap.
 */
final class KindTargets {
    private KindTargets() {}

    private static final List<Kind> SPLITS = List.of(Kind.WORKLOAD_PER_KIND, Kind.SPLIT_BY_ARRIVALS);

    /** The lines for one scenario at one load; none unless learned kinds ran there. */
    static List<String> of(CapacityScenario scenario, double load, Map<Config, List<CapacityRun>> byConfig, int b) {
        var learned = byConfig.get(new Config(Kind.RECOMMENDED_KINDS, b));
        if (learned == null) {
            return List.of();
        }
        var lines = new ArrayList<String>();
        String at = scenario.label
                + (scenario == CapacityScenario.S6_BURST ? ", " + f(load) + " at once: " : " at " + f(load) + "×: ");
        var pool = byConfig.get(new Config(Kind.POOL_ONLY, b));
        var without = byConfig.get(new Config(Kind.RECOMMENDED, b));
        int kinds = CapacityStats.kinds(learned);
        if (kinds < 2) {
            if (without != null) {
                lines.add(at
                        + ratio("recommended with kinds", learned, "without", without, 0.97)
                        + String.format(
                                Locale.ROOT,
                                "; failures p99 %s (≤ 5 ms: %s); admitted then timed out %.1f %% (≤ 2 %%: %s)",
                                failures(learned),
                                met(!(median(learned, r -> ms(r.failed, 99)) > 5)),
                                100 * median(learned, CapacityRun::wastedShare),
                                met(median(learned, CapacityRun::wastedShare) <= 0.02)));
            }
            return lines;
        }
        Split best = bestSplit(byConfig, b, CapacityRun::goodputInSlo);
        if (pool != null) {
            for (Kind split : SPLITS) {
                var list = byConfig.get(new Config(split, b));
                if (list != null) {
                    lines.add(at + ratio(split.label, list, "pool-only", pool, 1.5) + "; " + eachKind(list, pool));
                }
            }
        }
        if (best != null) {
            var line = new StringBuilder(at
                    + ratio("learned kinds", learned, "the best hand split (" + best.label() + ")", best.runs(), 0.9));
            if (pool != null) {
                line.append("; ").append(eachKind(learned, pool));
            }
            lines.add(line.toString());
        }
        if (without != null && load <= 2) {
            lines.add(at + ratio("learned kinds", learned, "recommended without", without, 0.99));
        }
        if (scenario == CapacityScenario.S7_SHIFT || scenario == CapacityScenario.S8_MEDIAN) {
            lines.add(at + phases(learned, byConfig, b));
        }
        return lines;
    }

    /** Each third of the shifting run against the best hand split of that third, and how soon the caps followed. */
    private static String phases(List<CapacityRun> learned, Map<Config, List<CapacityRun>> byConfig, int b) {
        var text = new StringBuilder("per third, learned kinds against the best hand split of that third:");
        for (int phase = 0; phase < 3; phase++) {
            int p = phase;
            ToDoubleFunction<CapacityRun> goodput = r -> r.phaseGoodput(p);
            Split best = bestSplit(byConfig, b, goodput);
            if (best != null) {
                double ours = median(learned, goodput);
                double theirs = median(best.runs(), goodput);
                text.append(String.format(
                        Locale.ROOT,
                        " %d: %.0f vs %.0f (%s) %.2f× (≥ 0.9: %s);",
                        phase + 1,
                        ours,
                        theirs,
                        best.label(),
                        ours / theirs,
                        met(ours >= 0.9 * theirs)));
            }
        }
        double up = median(learned, r -> CapacityStats.capSettle(r, 1 / 3.0));
        double down = median(learned, r -> CapacityStats.capSettle(r, 2 / 3.0));
        return text.append(String.format(
                        Locale.ROOT,
                        " caps settled %.2f s after the first shift, %.2f s after the second (≤ 2 s: %s)",
                        up,
                        down,
                        met(up <= 2 && down <= 2)))
                .toString();
    }

    /** A hand split and its runs. */
    private record Split(Config config, List<CapacityRun> runs) {
        String label() {
            return config.label();
        }
    }

    private static @Nullable Split bestSplit(
            Map<Config, List<CapacityRun>> byConfig, int b, ToDoubleFunction<CapacityRun> goodput) {
        Split best = null;
        for (Kind kind : SPLITS) {
            var list = byConfig.get(new Config(kind, b));
            if (list != null && (best == null || median(list, goodput) > median(best.runs(), goodput))) {
                best = new Split(new Config(kind, b), list);
            }
        }
        return best;
    }

    private static String ratio(
            String what, List<CapacityRun> ours, String against, List<CapacityRun> theirs, double target) {
        double a = median(ours, CapacityRun::goodputInSlo);
        double t = median(theirs, CapacityRun::goodputInSlo);
        return String.format(
                Locale.ROOT,
                "%s %.0f/s against %s %.0f/s: %.2f× (≥ %.2f: %s)",
                what,
                a,
                against,
                t,
                a / t,
                target,
                met(a >= target * t));
    }

    /** Whether {@code ours} serves at least what {@code pool} serves of every kind. */
    private static String eachKind(List<CapacityRun> ours, List<CapacityRun> pool) {
        var text = new StringBuilder("each kind ≥ pool-only:");
        boolean all = true;
        for (int k = 0; k < CapacityStats.kinds(ours); k++) {
            int kind = k;
            double a = median(ours, r -> r.goodputInSlo(kind));
            double p = median(pool, r -> r.goodputInSlo(kind));
            all &= a >= p;
            text.append(String.format(Locale.ROOT, " %s vs %s;", f(a), f(p)));
        }
        return text.append(' ').append(met(all)).toString();
    }

    /** The failures' p99 in ms, or "none" when nothing failed. */
    private static String failures(List<CapacityRun> runs) {
        double p99 = median(runs, r -> ms(r.failed, 99));
        return Double.isNaN(p99) ? "none" : f(p99) + " ms";
    }

    private static String met(boolean met) {
        return met ? "met" : "missed";
    }

    /** Goodput per kind by configuration, one panel per scenario and load that mixes kinds; empty if none does. */
    static String chart(List<Map.Entry<String, Map<Config, List<CapacityRun>>>> points) {
        var mixed = points.stream()
                .filter(p -> p.getValue().values().stream()
                        .findFirst()
                        .map(l -> CapacityStats.kinds(l) > 1)
                        .orElse(false))
                .toList();
        if (mixed.isEmpty()) {
            return "";
        }
        int panel = 260;
        var svg = new Svg(960, mixed.size() * (panel + 40) + 20);
        int y = 20;
        for (var point : mixed) {
            var configs = new ArrayList<Config>();
            var runs = new ArrayList<List<CapacityRun>>();
            point.getValue().forEach((config, list) -> {
                configs.add(config);
                runs.add(list);
            });
            int kinds = CapacityStats.kinds(runs.getFirst());
            double[][] series = new double[kinds][configs.size()];
            var names = new ArrayList<String>();
            for (int k = 0; k < kinds; k++) {
                int kind = k;
                names.add("kind " + (k + 1) + (k == 0 ? " (fastest)" : k == kinds - 1 ? " (slowest)" : ""));
                for (int c = 0; c < configs.size(); c++) {
                    series[k][c] = median(runs.get(c), r -> r.goodputInSlo(kind));
                }
            }
            svg.title(20, y + 12, point.getKey() + ": goodput within SLO per kind, /s (log scale)");
            svg.bars(
                    40,
                    y + 24,
                    900,
                    panel - 20,
                    configs.stream().map(Config::label).toList(),
                    series,
                    names,
                    Svg.COLOURS,
                    true);
            y += panel + 40;
        }
        return svg.end();
    }
}
