package dev.dbbulkhead.tools.overload;

import static dev.dbbulkhead.tools.support.Stats.f;
import static dev.dbbulkhead.tools.support.Stats.median;

import dev.dbbulkhead.tools.support.Stats;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/** What the capacity scenarios compute from their runs, beyond medians: audits, settling times, goodput by kind. */
final class CapacityStats {
    private CapacityStats() {}

    /**
     * Goodput by kind, fastest first, for a mix of kinds: "512 / 20.0 (3.8 % / 10.0 %)", the slowest kind's share of
     * goodput and of arrivals; empty for one kind.
     */
    static String byKind(List<CapacityRun> list) {
        int kinds = kinds(list);
        if (kinds < 2) {
            return "";
        }
        var text = new StringBuilder();
        double all = 0;
        double slowest = 0;
        for (int k = 0; k < kinds; k++) {
            int kind = k;
            double g = median(list, r -> r.goodputInSlo(kind));
            text.append(k == 0 ? "" : " / ").append(f(g));
            all += g;
            slowest = g;
        }
        int last = kinds - 1;
        return text.append(String.format(
                        Locale.ROOT,
                        " (%.1f %% / %.1f %%)",
                        all == 0 ? 0 : 100 * slowest / all,
                        100 * median(list, r -> r.offeredShare(last))))
                .toString();
    }

    /** How many kinds arrived in the first run: the highest kind seen, plus one. */
    static int kinds(List<CapacityRun> list) {
        int kinds = 0;
        for (int k = 0; k < CapacityScenario.KINDS; k++) {
            kinds = list.getFirst().offeredShare(k) > 0 ? k + 1 : kinds;
        }
        return kinds;
    }

    /**
     * Seconds from the shift at {@code fraction} until every kind's cap is first at the value it holds most of the
     * phase's last half (the samples' columns from the fourth); NaN without caps.
     */
    static double capSettle(CapacityRun run, double fraction) {
        double step = fraction * run.seconds;
        double phaseEnd = step + run.seconds / 3;
        double slowest = Double.NaN;
        for (int column = 3; column < 3 + CapacityScenario.KINDS; column++) {
            int c = column;
            var late = run.limits.stream()
                    .filter(s -> s[0] >= phaseEnd - run.seconds / 6 && s[0] < phaseEnd && !Double.isNaN(s[c]))
                    .mapToDouble(s -> s[c])
                    .sorted()
                    .toArray();
            if (late.length == 0) {
                continue;
            }
            double settled = late[late.length / 2];
            double at = Double.POSITIVE_INFINITY;
            for (double[] s : run.limits) {
                if (s[0] >= step && s[c] == settled) {
                    at = s[0] - step;
                    break;
                }
            }
            slowest = Double.isNaN(slowest) ? at : Math.max(slowest, at);
        }
        return slowest;
    }

    /**
     * Operations that failed neither by refusal nor by a timeout (a server error, a broken connection): the median
     * count over the runs, and the first such failure of any run, so that a fault shows in the report instead of
     * ending the measurement: "2 (SQLState 53300: too many clients)"; "0" when none failed.
     */
    static String failures(List<CapacityRun> list) {
        double median = median(list, r -> r.count(CapacityRun.Result.OTHER));
        String first = list.stream()
                .map(CapacityRun::firstFailure)
                .filter(Objects::nonNull)
                .findFirst()
                .orElse(null);
        return first == null
                ? String.format(Locale.ROOT, "%.0f", median)
                : String.format(Locale.ROOT, "%.0f (%s)", median, first);
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
        double[] ci = Stats.wilson(served, audited);
        return String.format(
                Locale.ROOT, "%.1f %% [%.1f–%.1f] of %d", 100.0 * served / audited, 100 * ci[0], 100 * ci[1], audited);
    }

    /**
     * Seconds from the step at {@code fraction} until the limit is first within 20 % of where it settles: its mean
     * over the last third of that phase (the capacity step changes the phase every third of the run).
     */
    static double settle(CapacityRun run, double fraction) {
        double step = fraction * run.seconds;
        double phaseEnd = step + run.seconds / 3;
        double settled = run.limits.stream()
                .filter(s -> s[0] >= phaseEnd - run.seconds / 9 && s[0] < phaseEnd)
                .mapToDouble(s -> s[1])
                .average()
                .orElse(Double.NaN);
        for (double[] s : run.limits) {
            if (s[0] >= step && Math.abs(s[1] - settled) <= 0.2 * settled) {
                return s[0] - step;
            }
        }
        return Double.NaN;
    }
}
