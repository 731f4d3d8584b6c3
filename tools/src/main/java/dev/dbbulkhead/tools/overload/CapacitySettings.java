package dev.dbbulkhead.tools.overload;

import dev.dbbulkhead.tools.overload.CapacityGates.Config;
import dev.dbbulkhead.tools.overload.CapacityGates.Kind;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** What the command line asked of the capacity scenarios. */
record CapacitySettings(
        List<String> scenarios,
        List<Kind> kinds,
        List<Double> loads,
        List<Integer> sweep,
        int maxConcurrent,
        long deadlineMs,
        double seconds,
        int repetitions,
        int locks,
        int holdMillis,
        double cpuMillis,
        int burst,
        @Nullable Path report,
        boolean pin) {

    /**
     * The configurations of one scenario: the static one expanded to the sweep (not for the step, B has no best), the
     * splits per kind only where kinds mix.
     */
    List<Config> configs(CapacityScenario scenario) {
        var list = new ArrayList<Config>();
        for (Kind kind : kinds) {
            boolean split = kind == Kind.WORKLOAD_PER_KIND || kind == Kind.SPLIT_BY_ARRIVALS;
            if (split && !scenario.mixed()) {
                continue; // one kind: a split is the recommended workload
            }
            if (kind != Kind.STATIC) {
                list.add(new Config(kind, maxConcurrent));
            } else if (scenario != CapacityScenario.S3_STEP && scenario != CapacityScenario.S5_TWO) {
                sweep.forEach(b -> list.add(new Config(Kind.STATIC, b)));
            }
        }
        return list;
    }

    /** These settings in a sentence, for a report: on {@code database}, {@code pinned} or not. */
    String describe(String database, String pinned) {
        return String.format(
                Locale.ROOT,
                "B max = pool = %d, deadline %d ms from each arrival's intended start, Poisson arrivals at the loads × "
                        + "the measured capacity for %.0f s, %d repetition(s) round-robin (medians, spread min–max), "
                        + "K = %d locks held %d ms (s2), CPU %.1f ms (s1), database: %s, JDK %s, %s.%n",
                maxConcurrent,
                deadlineMs,
                seconds,
                repetitions,
                locks,
                holdMillis,
                cpuMillis,
                database,
                Runtime.version(),
                pinned);
    }
}
