package dev.dbbulkhead.tools.overload;

import dev.dbbulkhead.tools.overload.Barriers.Result;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.HdrHistogram.Histogram;

/** The overload tool's table (medians over repetitions), as text, Markdown and an SVG chart. */
final class OverloadReport {
    private OverloadReport() {}

    static final String HEADER = "| scenario | configuration | succeeded | rejected full / predicted / timeout | failed pool / other "
            + "| wall s | goodput /s | succeeded p50 / p99 / max ms | failures p50 / p99 / max ms "
            + "| refused at once: in call p50 / p99 µs | peak waiting | peak heap MB |";

    static <R> double median(List<R> runs, ToDoubleFunction<R> metric) {
        double[] v = runs.stream().mapToDouble(metric).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
    }

    static String f(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    private static String n(double v) {
        return String.format(Locale.ROOT, "%.0f", v);
    }

    /** The rows of the table, Markdown-formatted, one per scenario and configuration. */
    static List<String> table(Map<String, List<OverloadRun>> runs) {
        var lines = new ArrayList<String>();
        lines.add(HEADER);
        lines.add("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        runs.forEach((key, list) -> {
            String[] k = key.split("/", 2);
            lines.add("| " + k[0] + " | " + k[1]
                    + " | " + n(median(list, r -> r.count(Result.SUCCEEDED)))
                    + " | " + n(median(list, r -> r.count(Result.REJECTED_FULL))) + " / "
                    + n(median(list, r -> r.count(Result.REJECTED_PREDICTED))) + " / "
                    + n(median(list, r -> r.count(Result.REJECTED_TIMEOUT)))
                    + " | " + n(median(list, r -> r.count(Result.FAILED_POOL_TIMEOUT))) + " / "
                    + n(median(list, r -> r.count(Result.FAILED_OTHER)))
                    + " | " + String.format(Locale.ROOT, "%.2f", median(list, r -> r.wallNanos / 1e9))
                    + " | " + n(median(list, OverloadRun::goodput))
                    + " | " + f(median(list, r -> ms(r.succeeded, 50))) + " / "
                    + f(median(list, r -> ms(r.succeeded, 99))) + " / " + f(median(list, r -> ms(r.succeeded, 100)))
                    + " | " + f(median(list, r -> ms(r.failed, 50))) + " / " + f(median(list, r -> ms(r.failed, 99)))
                    + " / " + f(median(list, r -> ms(r.failed, 100)))
                    + " | " + f(median(list, r -> ms(r.fullInCall, 50) * 1000)) + " / "
                    + f(median(list, r -> ms(r.fullInCall, 99) * 1000))
                    + " | " + n(median(list, OverloadRun::peakWaiting))
                    + " | " + n(median(list, r -> r.peakHeapBytes() / 1048576.0)) + " |");
        });
        return lines;
    }

    static void write(Path dir, String settings, List<String> table, Map<String, List<OverloadRun>> runs)
            throws IOException {
        var md = new StringBuilder();
        md.append("# Overload comparison\n\n").append(settings).append("\n\n");
        md.append("Medians over the repetitions. Latency counts from each operation's intended start (the burst's ")
                .append("release, or its slot in the open loop). \"Failures\" are rejections and pool timeouts ")
                .append("together; \"predicted\" are predictive rejections (the expected wait exceeded the queue wait); ")
                .append("\"in call\" is the time a caller refused at once (admission full or predicted) spent inside ")
                .append("the barrier (queue timeouts wait by design and are left out).\n\n");
        table.forEach(line -> md.append(line).append('\n'));
        md.append("\n![goodput and p99 latency per configuration](overload.svg)\n");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("overload.md"), md.toString());
        Files.writeString(dir.resolve("overload.svg"), svg(runs));
    }

    /** Per scenario: goodput bars, and p99 latency of successes and of failures on a log scale. */
    static String svg(Map<String, List<OverloadRun>> runs) {
        Map<String, Map<String, List<OverloadRun>>> byScenario = new LinkedHashMap<>();
        runs.forEach((key, list) -> {
            String[] k = key.split("/", 2);
            byScenario.computeIfAbsent(k[0], s -> new LinkedHashMap<>()).put(k[1], list);
        });
        int panelW = 440;
        int panelH = 260;
        int width = panelW * 2 + 60;
        int height = byScenario.size() * (panelH + 60) + 40;
        var s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "font-family=\"sans-serif\" font-size=\"12\">%n", width, height));
        s.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
        String[] colours = {"#888888", "#d9822b", "#2b7bd9", "#5aa02c", "#a02c8f"};
        int y0 = 30;
        for (var scenario : byScenario.entrySet()) {
            var configs = new ArrayList<>(scenario.getValue().keySet());
            double[] goodput = configs.stream().mapToDouble(c -> median(scenario.getValue().get(c),
                    OverloadRun::goodput)).toArray();
            double[] okP99 = configs.stream().mapToDouble(c -> median(scenario.getValue().get(c),
                    r -> ms(r.succeeded, 99))).toArray();
            double[] failP99 = configs.stream().mapToDouble(c -> median(scenario.getValue().get(c),
                    r -> ms(r.failed, 99))).toArray();
            text(s, 20, y0, scenario.getKey() + ": goodput (succeeded / s)", true);
            bars(s, 20, y0 + 10, panelW, panelH, configs, new double[][] {goodput}, new String[] {"goodput"},
                    colours, false);
            text(s, panelW + 40, y0, scenario.getKey() + ": p99 latency, ms (log scale)", true);
            bars(s, panelW + 40, y0 + 10, panelW, panelH, configs, new double[][] {okP99, failP99},
                    new String[] {"succeeded", "failures"}, new String[] {colours[2], colours[1]}, true);
            y0 += panelH + 60;
        }
        s.append("</svg>\n");
        return s.toString();
    }

    private static void text(StringBuilder s, int x, int y, String text, boolean bold) {
        s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\"%s>%s</text>%n", x, y,
                bold ? " font-weight=\"bold\"" : "", text.replace("&", "&amp;").replace("<", "&lt;")));
    }

    private static void bars(StringBuilder s, int x, int y, int w, int h, List<String> labels, double[][] series,
            String[] names, String[] colours, boolean log) {
        int plotH = h - 40;
        double max = Arrays.stream(series).flatMapToDouble(Arrays::stream).filter(v -> !Double.isNaN(v)).max()
                .orElse(1);
        double min = log ? 0.01 : 0;
        double top = log ? Math.pow(10, Math.ceil(Math.log10(Math.max(max, 1)))) : max * 1.15;
        s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#cccccc\"/>%n", x, y, w, plotH));
        int groupW = w / Math.max(1, labels.size());
        int barW = Math.max(4, (groupW - 16) / series.length);
        for (int g = 0; g < labels.size(); g++) {
            for (int k = 0; k < series.length; k++) {
                double v = series[k][g];
                if (Double.isNaN(v)) {
                    continue;
                }
                double frac = log ? (Math.log10(Math.max(v, min)) - Math.log10(min)) / (Math.log10(top)
                        - Math.log10(min)) : v / top;
                int bh = (int) Math.round(Math.max(0, Math.min(1, frac)) * plotH);
                int bx = x + g * groupW + 8 + k * barW;
                s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                        + "fill=\"%s\"><title>%s %s: %s</title></rect>%n", bx, y + plotH - bh, barW - 2, bh,
                        colours[k % colours.length], labels.get(g), names[k], f(v)));
                s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"10\" "
                        + "text-anchor=\"middle\">%s</text>%n", bx + (barW - 2) / 2, y + plotH - bh - 3, f(v)));
            }
            // Staggered, so that long neighbouring names do not run into each other.
            s.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"10\" "
                    + "text-anchor=\"middle\">%s</text>%n", x + g * groupW + groupW / 2,
                    y + plotH + (g % 2 == 0 ? 14 : 26), labels.get(g)));
        }
        if (series.length > 1) {
            for (int k = 0; k < series.length; k++) {
                int lx = x + 10 + k * 110;
                s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" "
                        + "fill=\"%s\"/>%n", lx, y + plotH + 32, colours[k % colours.length]));
                text(s, lx + 14, y + plotH + 41, names[k], false);
            }
        }
    }
}
