package dev.dbbulkhead.tools.fleet;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToLongFunction;

/** The fleet run's table and chart (server connections over time, per topology, with the limit). */
final class FleetReport {
    private FleetReport() {}

    /** One topology's run: each instance's result line, and the samples. */
    record Run(List<Map<String, String>> instances, List<FleetSampler.Sample> samples, String samplingFailure,
            List<List<long[]>> limits, long startMillis) {
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
            return limits.isEmpty() ? Double.NaN
                    : samples.stream().mapToLong(s -> sumOfLimits(s.millis())).average().orElse(Double.NaN);
        }

        /** The 99th percentile of PgBouncer's clients waiting over the samples; -1 without PgBouncer. */
        long clientsWaitingP99() {
            long[] v = samples.stream().mapToLong(FleetSampler.Sample::clientsWaiting).sorted().toArray();
            return v.length == 0 || v[v.length - 1] < 0 ? -1 : v[(int) Math.min(v.length - 1, Math.ceil(0.99 * v.length) - 1)];
        }

        long sum(String key) {
            return instances.stream().mapToLong(r -> Math.round(Double.parseDouble(r.getOrDefault(key, "0")))).sum();
        }

        double worst(String key) {
            return instances.stream().mapToDouble(r -> Double.parseDouble(r.getOrDefault(key, "0"))).max().orElse(0);
        }

        long peak(ToLongFunction<FleetSampler.Sample> metric) {
            return samples.stream().mapToLong(metric).max().orElse(-1);
        }

        double seconds() {
            return samples.isEmpty() ? Double.NaN : samples.get(samples.size() - 1).millis() / 1e3;
        }
    }

    static List<String> table(Map<String, Run> runs, int limit) {
        var lines = new ArrayList<String>();
        lines.add("| topology | succeeded | goodput /s | refused 53300 | pool timeouts | rejected full / timeout "
                + "| worst instance p50 / p99 ms | peak server connections (limit " + limit + ") "
                + "| PgBouncer clients waiting: p99 / peak | mean Σ L (adaptive) | peak inside a barrier |");
        lines.add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        runs.forEach((name, r) -> lines.add(String.format(Locale.ROOT,
                "| %s | %d | %.0f | %d | %d | %d / %d | %.1f / %.1f | %d | %s | %s | %.0f |", name, r.sum("succeeded"),
                r.sum("succeeded") / r.seconds(), r.sum("refused_53300"), r.sum("pool_timeout"),
                r.sum("rejected_full"), r.sum("rejected_timeout"), r.worst("p50_ms"), r.worst("p99_ms"),
                r.peak(FleetSampler.Sample::serverConnections),
                r.peak(FleetSampler.Sample::clientsWaiting) < 0 ? "–" : r.clientsWaitingP99() + " / "
                        + r.peak(FleetSampler.Sample::clientsWaiting),
                Double.isNaN(r.meanSumOfLimits()) ? "–" : String.format(Locale.ROOT, "%.1f", r.meanSumOfLimits()),
                r.worst("peak_inside"))));
        runs.forEach((name, r) -> {
            if (r.samplingFailure() != null) {
                lines.add("");
                lines.add(name + ": " + r.samplingFailure());
            }
        });
        return lines;
    }

    static String svg(Map<String, Run> runs, int limit) {
        int w = 760;
        int h = 300;
        int left = 50;
        int top = 30;
        int plotW = w - left - 170;
        int plotH = h - top - 40;
        double maxT = runs.values().stream().mapToDouble(Run::seconds).filter(d -> !Double.isNaN(d)).max().orElse(1);
        long maxY = Math.max(limit, runs.values().stream().mapToLong(r -> r.peak(FleetSampler.Sample::serverConnections))
                .max().orElse(1)) + 5;
        String[] colors = {"#c0392b", "#2471a3", "#229954", "#7d3c98"};
        var s = new StringBuilder(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                        + "font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>%n", w, h));
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"18\" font-weight=\"bold\">Server connections of the "
                + "fleet over time (N, N + surge, N)</text>%n", left));
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", left,
                top + plotH, left + plotW, top + plotH));
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>%n", left, top,
                left, top + plotH));
        double yLimit = top + plotH - (double) limit / maxY * plotH;
        s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"gray\" "
                + "stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"%.1f\" fill=\"gray\">limit %d</text>%n", left, yLimit,
                left + plotW, yLimit, left + plotW + 4, yLimit + 4, limit));
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\">%d</text>%n",
                left - 14, top + plotH + 4, left - 30, top + 4, maxY));
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">seconds (0 – %.0f)</text>%n", left + plotW / 2 - 40,
                h - 8, maxT));
        int i = 0;
        for (var e : runs.entrySet()) {
            String color = colors[i % colors.length];
            var points = new StringBuilder();
            for (var sample : e.getValue().samples()) {
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", left + sample.millis() / 1e3 / maxT * plotW,
                        top + plotH - (double) sample.serverConnections() / maxY * plotH));
            }
            s.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                    + "points=\"%s\"/>%n", color, points.toString().trim()));
            s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>"
                    + "<text x=\"%d\" y=\"%d\">%s</text>%n", left + plotW + 4, top + 40 + i * 18, color,
                    left + plotW + 20, top + 45 + i * 18, e.getKey()));
            i++;
        }
        return s.append("</svg>\n").toString();
    }

    /**
     * Per adaptive topology, over time: Σ L over its instances, PgBouncer's clients waiting and its server
     * connections (where it has PgBouncer), against the pool size PgBouncer serves; null when none ran.
     */
    static String adaptiveSvg(Map<String, Run> runs, int poolerPool) {
        var adaptive = runs.entrySet().stream().filter(e -> !e.getValue().limits().isEmpty()).toList();
        if (adaptive.isEmpty()) {
            return null;
        }
        int w = 760;
        int panel = 230;
        int left = 50;
        int plotW = w - left - 190;
        var s = new StringBuilder(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                + "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" "
                + "fill=\"white\"/>%n", w, adaptive.size() * panel + 10));
        int y = 0;
        for (var e : adaptive) {
            Run r = e.getValue();
            int top = y + 30;
            int plotH = panel - 70;
            double maxT = Math.max(1, r.seconds());
            long maxY = 5 + Math.max(poolerPool, r.samples().stream().mapToLong(x -> Math.max(r.sumOfLimits(x.millis()),
                    Math.max(x.clientsWaiting(), x.poolerServers()))).max().orElse(1));
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s: Σ L of the "
                    + "instances, PgBouncer's clients waiting and server connections</text>%n", left, y + 18, e.getKey()));
            s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                    + "stroke=\"#ccc\"/>%n", left, top, plotW, plotH));
            double yPool = top + plotH - (double) poolerPool / maxY * plotH;
            s.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"gray\" "
                    + "stroke-dasharray=\"4 3\"/><text x=\"%d\" y=\"%.1f\" fill=\"gray\">PgBouncer pool %d</text>%n",
                    left, yPool, left + plotW, yPool, left + plotW + 4, yPool + 4, poolerPool));
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\">%d</text>"
                    + "<text x=\"%d\" y=\"%d\">%.0f s</text>%n", left - 14, top + plotH + 4, left - 30, top + 10,
                    maxY, left + plotW - 20, top + plotH + 16, maxT));
            String[][] series = {{"Σ L", "#2471a3"}, {"clients waiting", "#c0392b"}, {"server connections", "#229954"}};
            for (int k = 0; k < series.length; k++) {
                var points = new StringBuilder();
                for (var x : r.samples()) {
                    long v = switch (k) {
                        case 0 -> r.sumOfLimits(x.millis());
                        case 1 -> Math.max(0, x.clientsWaiting());
                        default -> Math.max(0, x.poolerServers());
                    };
                    points.append(String.format(Locale.ROOT, "%.1f,%.1f ", left + x.millis() / 1e3 / maxT * plotW,
                            top + plotH - (double) v / maxY * plotH));
                }
                s.append(String.format(Locale.ROOT, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                        + "points=\"%s\"/>%n", series[k][1], points.toString().trim()));
                s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>"
                        + "<text x=\"%d\" y=\"%d\">%s</text>%n", left + plotW + 4, top + 30 + k * 18, series[k][1],
                        left + plotW + 20, top + 35 + k * 18, series[k][0]));
            }
            y += panel;
        }
        return s.append("</svg>\n").toString();
    }
}
