package dev.dbbulkhead.tools.overload;

import static dev.dbbulkhead.tools.support.Stats.f;
import static dev.dbbulkhead.tools.support.Stats.median;
import static dev.dbbulkhead.tools.support.Stats.ms;

import dev.dbbulkhead.tools.overload.Barriers.Result;
import dev.dbbulkhead.tools.support.Svg;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The overload tool's table (medians over repetitions), as text, Markdown and an SVG chart. */
final class OverloadReport {
    private OverloadReport() {}

    static final String HEADER =
            "| scenario | configuration | succeeded | rejected full / predicted / timeout | failed pool / other "
                    + "| wall s | goodput /s | succeeded p50 / p99 / max ms | failures p50 / p99 / max ms "
                    + "| refused at once: in call p50 / p99 µs | peak waiting | peak heap MB |";

    /** One scenario through one barrier: what each repetition's run is filed under. */
    record Key(String scenario, Barriers barrier) {}

    private static String n(double v) {
        return String.format(Locale.ROOT, "%.0f", v);
    }

    /** The rows of the table, Markdown-formatted, one per scenario and configuration. */
    static List<String> table(Map<Key, List<OverloadRun>> runs) {
        var lines = new ArrayList<String>();
        lines.add(HEADER);
        lines.add("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        runs.forEach((key, list) -> {
            lines.add("| " + key.scenario() + " | " + key.barrier().label
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

    static void write(Path dir, String settings, List<String> table, Map<Key, List<OverloadRun>> runs)
            throws IOException {
        var md = new StringBuilder();
        md.append("# Overload comparison\n\n").append(settings).append("\n\n");
        md.append("Medians over the repetitions. Latency counts from each operation's intended start (the burst's ")
                .append("release, or its slot in the open loop). \"Failures\" are rejections and pool timeouts ")
                .append("together; \"predicted\" are predictive rejections (the expected wait exceeded the queue "
                        + "wait); ")
                .append("\"in call\" is the time a caller refused at once (admission full or predicted) spent inside ")
                .append("the barrier (queue timeouts wait by design and are left out).\n\n");
        table.forEach(line -> md.append(line).append('\n'));
        md.append("\n![goodput and p99 latency per configuration](overload.svg)\n");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("overload.md"), md.toString());
        Files.writeString(dir.resolve("overload.svg"), svg(runs));
    }

    /** Per scenario: goodput bars, and p99 latency of successes and of failures on a log scale. */
    static String svg(Map<Key, List<OverloadRun>> runs) {
        List<String> scenarios =
                runs.keySet().stream().map(Key::scenario).distinct().toList();
        int panelW = 440;
        int panelH = 260;
        var svg = new Svg(panelW * 2 + 60, scenarios.size() * (panelH + 60) + 40);
        int y0 = 30;
        for (String scenario : scenarios) {
            var ofScenario = runs.entrySet().stream()
                    .filter(e -> e.getKey().scenario().equals(scenario))
                    .toList();
            var configs =
                    ofScenario.stream().map(e -> e.getKey().barrier().label).toList();
            var lists = ofScenario.stream().map(Map.Entry::getValue).toList();
            double[] goodput = lists.stream()
                    .mapToDouble(l -> median(l, OverloadRun::goodput))
                    .toArray();
            double[] okP99 = lists.stream()
                    .mapToDouble(l -> median(l, r -> ms(r.succeeded, 99)))
                    .toArray();
            double[] failP99 = lists.stream()
                    .mapToDouble(l -> median(l, r -> ms(r.failed, 99)))
                    .toArray();
            svg.title(20, y0, scenario + ": goodput (succeeded / s)");
            svg.bars(
                    20,
                    y0 + 10,
                    panelW,
                    panelH,
                    configs,
                    new double[][] {goodput},
                    List.of("goodput"),
                    List.of("#888888"),
                    false);
            svg.title(panelW + 40, y0, scenario + ": p99 latency, ms (log scale)");
            svg.bars(
                    panelW + 40,
                    y0 + 10,
                    panelW,
                    panelH,
                    configs,
                    new double[][] {okP99, failP99},
                    List.of("succeeded", "failures"),
                    List.of(Svg.COLOURS.get(0), Svg.COLOURS.get(1)),
                    true);
            y0 += panelH + 60;
        }
        return svg.end();
    }
}
