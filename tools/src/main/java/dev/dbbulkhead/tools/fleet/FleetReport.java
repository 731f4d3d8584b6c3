package dev.dbbulkhead.tools.fleet;

import dev.dbbulkhead.tools.support.Svg;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/** The fleet run's table and chart (server connections over time, per topology, with the limit). */
final class FleetReport {
    private FleetReport() {}

    /** One topology's run: each instance's result line, and the samples. */
    record Run(
            List<Map<String, String>> instances,
            List<FleetSampler.Sample> samples,
            @Nullable String samplingFailure,
            List<List<long[]>> limits,
            long startMillis) {
        /** Σ L over the adaptive instances at {@code millis} since the start (each one's last report before it). */
        long sumOfLimits(long millis) {
            long at = startMillis + millis;
            long sum = 0;
            for (var series : limits) {
                long last = 0;
                if (series.isEmpty() || series.getFirst()[0] > at || series.getLast()[0] < at - 1_000) {
                    continue; // not started yet, or gone
                }
                for (long[] s : series) {
                    if (s[0] <= at) {
                        last = s[1];
                    }
                }
                sum += last;
            }
            return sum;
        }

        /** The mean of Σ L over the samples; NaN without adaptive instances. */
        double meanSumOfLimits() {
            return limits.isEmpty()
                    ? Double.NaN
                    : samples.stream()
                            .mapToLong(s -> sumOfLimits(s.millis()))
                            .average()
                            .orElse(Double.NaN);
        }

        /** The 99th percentile of PgBouncer's clients waiting over the samples; -1 without PgBouncer. */
        long clientsWaitingP99() {
            long[] v = samples.stream()
                    .mapToLong(FleetSampler.Sample::clientsWaiting)
                    .sorted()
                    .toArray();
            return v.length == 0 || v[v.length - 1] < 0
                    ? -1
                    : v[(int) Math.min(v.length - 1, Math.ceil(0.99 * v.length) - 1)];
        }

        long sum(String key) {
            return instances.stream()
                    .mapToLong(r -> Math.round(Double.parseDouble(r.getOrDefault(key, "0"))))
                    .sum();
        }

        double worst(String key) {
            return instances.stream()
                    .mapToDouble(r -> Double.parseDouble(r.getOrDefault(key, "0")))
                    .max()
                    .orElse(0);
        }

        long peak(ToLongFunction<FleetSampler.Sample> metric) {
            return samples.stream().mapToLong(metric).max().orElse(-1);
        }

        double seconds() {
            return samples.isEmpty()
                    ? Double.NaN
                    : samples.get(samples.size() - 1).millis() / 1e3;
        }
    }

    static List<String> table(Map<FleetTopology, Run> runs, int limit) {
        var lines = new ArrayList<String>();
        lines.add("| topology | succeeded | goodput /s | refused 53300 | pool timeouts | rejected full / timeout "
                + "| worst instance p50 / p99 ms | peak server connections (limit " + limit + ") "
                + "| PgBouncer clients waiting: p99 / peak | mean Σ L (adaptive) | peak inside a barrier |");
        lines.add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        runs.forEach((name, r) -> lines.add(String.format(
                Locale.ROOT,
                "| %s | %d | %.0f | %d | %d | %d / %d | %.1f / %.1f | %d | %s | %s | %.0f |",
                name.label,
                r.sum("succeeded"),
                r.sum("succeeded") / r.seconds(),
                r.sum("refused_53300"),
                r.sum("pool_timeout"),
                r.sum("rejected_full"),
                r.sum("rejected_timeout"),
                r.worst("p50_ms"),
                r.worst("p99_ms"),
                r.peak(FleetSampler.Sample::serverConnections),
                r.peak(FleetSampler.Sample::clientsWaiting) < 0
                        ? "–"
                        : r.clientsWaitingP99() + " / " + r.peak(FleetSampler.Sample::clientsWaiting),
                Double.isNaN(r.meanSumOfLimits()) ? "–" : String.format(Locale.ROOT, "%.1f", r.meanSumOfLimits()),
                r.worst("peak_inside"))));
        runs.forEach((name, r) -> {
            if (r.samplingFailure() != null) {
                lines.add("");
                lines.add(name.label + ": " + r.samplingFailure());
            }
        });
        return lines;
    }

    static String svg(Map<FleetTopology, Run> runs, int limit) {
        double maxT = runs.values().stream()
                .mapToDouble(Run::seconds)
                .filter(d -> !Double.isNaN(d))
                .max()
                .orElse(1);
        long maxY = Math.max(
                        limit,
                        runs.values().stream()
                                .mapToLong(r -> r.peak(FleetSampler.Sample::serverConnections))
                                .max()
                                .orElse(1))
                + 5;
        var svg = new Svg(760, 300).title(50, 18, "Server connections of the fleet over time (N, N + surge, N)");
        var panel = svg.lines(50, 30, 540, 230, maxT, (double) maxY, "s").level(limit, "limit " + limit);
        int i = 0;
        for (var e : runs.entrySet()) {
            var points = series(e.getValue(), FleetSampler.Sample::serverConnections);
            panel.line(points, Svg.COLOURS.get(i++ % Svg.COLOURS.size()), 2, e.getKey().label);
        }
        return svg.end();
    }

    /**
     * Per adaptive topology, over time: Σ L over its instances, PgBouncer's clients waiting and its server
     * connections (where it has PgBouncer), against the pool size PgBouncer serves; null when none ran.
     */
    static @Nullable String adaptiveSvg(Map<FleetTopology, Run> runs, int poolerPool) {
        var adaptive = runs.entrySet().stream()
                .filter(e -> !e.getValue().limits().isEmpty())
                .toList();
        if (adaptive.isEmpty()) {
            return null;
        }
        int panel = 230;
        var svg = new Svg(760, adaptive.size() * panel + 10);
        int y = 0;
        for (var e : adaptive) {
            Run r = e.getValue();
            long maxY = 5
                    + Math.max(
                            poolerPool,
                            r.samples().stream()
                                    .mapToLong(x -> Math.max(
                                            r.sumOfLimits(x.millis()), Math.max(x.clientsWaiting(), x.poolerServers())))
                                    .max()
                                    .orElse(1));
            svg.title(
                    50,
                    y + 18,
                    e.getKey().label + ": Σ L of the instances, PgBouncer's clients waiting and server "
                            + "connections");
            svg.lines(50, y + 30, 520, panel - 70, Math.max(1, r.seconds()), (double) maxY, "s")
                    .level(poolerPool, "PgBouncer pool " + poolerPool)
                    .line(series(r, x -> r.sumOfLimits(x.millis())), Svg.COLOURS.get(0), 1.5, "Σ L")
                    .line(series(r, x -> Math.max(0, x.clientsWaiting())), Svg.COLOURS.get(4), 1.5, "clients waiting")
                    .line(
                            series(r, x -> Math.max(0, x.poolerServers())),
                            Svg.COLOURS.get(2),
                            1.5,
                            "server connections");
            y += panel;
        }
        return svg.end();
    }

    /** {seconds, value} for each sample of {@code run}. */
    private static List<double[]> series(Run run, ToLongFunction<FleetSampler.Sample> value) {
        return run.samples().stream()
                .map(x -> new double[] {x.millis() / 1e3, (double) value.applyAsLong(x)})
                .toList();
    }
}
