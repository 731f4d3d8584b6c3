package dev.dbbulkhead.tools.overload;

import static dev.dbbulkhead.tools.support.Stats.f;
import static dev.dbbulkhead.tools.support.Stats.median;

import dev.dbbulkhead.tools.support.Stats;
import java.util.List;
import java.util.Locale;

/** What the capacity scenarios compute from their runs, beyond medians: audits, settling times, goodput by kind. */
final class CapacityStats {
    private CapacityStats() {}

    /** s4's goodput by kind: "512 / 20.0 (3.8 % / 10.0 %)", the long operations' share of goodput and of arrivals. */
    static String byKind(List<CapacityRun> list) {
        double shortOnes = median(list, r -> r.goodputInSlo(0));
        double longOnes = median(list, r -> r.goodputInSlo(1));
        double share = shortOnes + longOnes == 0 ? 0 : longOnes / (shortOnes + longOnes);
        return String.format(
                Locale.ROOT,
                "%s / %s (%.1f %% / %.1f %%)",
                f(shortOnes),
                f(longOnes),
                100 * share,
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
