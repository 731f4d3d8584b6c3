package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The adaptive limit's decisions against a simulated database with K truly parallel resources (cores, locks): with
 * n operations in use, each holds its permit {@code base × max(1, n/K)} (±5 % noise, seeded), so K is the optimum
 * and anything above it only queues. Demand always exceeds the limit, as in an overload. Simulated time on an
 * injected clock: the decisions are the real ones, without a database or a sleep. The real-PostgreSQL version of
 * the same claims is {@code AdaptiveLimitTest}.
 */
@Tag("no-db")
class AdaptiveLimitModelTest {
    private static final long BASE = 5_000_000; // 5 ms
    private static final long SECOND = 1_000_000_000;

    /** A saturated simulated database; {@link #run} advances its clock and feeds the limit every operation. */
    private static final class Simulation {
        final Permits permits = new Permits(16, 100);
        final List<String> changes = new ArrayList<>();
        final Random random = new Random(42);
        long now = 0;
        int capacity;
        /** One operation alone. */
        long base = BASE;
        boolean overloadNext;
        /** Every operation gives an overload signal. */
        boolean overloading;
        final AdaptiveLimit limit;

        Simulation(int min, int capacity) {
            this.capacity = capacity;
            this.limit = new AdaptiveLimit(permits, min, 16, now,
                    (from, to, cause, baseline, latency) -> changes.add(now / 1_000_000 + " ms: " + from + " -> " + to
                            + " (" + cause + ")"));
        }

        /** Runs for {@code nanos}: L operations at a time, each completing after its hold time. */
        void run(long nanos) {
            long end = now + nanos;
            while (now < end) {
                int n = permits.limit();
                double hold = base * Math.max(1.0, (double) n / capacity) * (0.95 + 0.1 * random.nextDouble());
                // n operations in flight, each holding `hold`: one completes every hold / n.
                now += (long) (hold / n);
                limit.sample((long) hold, overloadNext || overloading, now);
                overloadNext = false;
            }
        }

        /** The time-average of L over the next {@code nanos}. */
        double averageLimit(long nanos) {
            long end = now + nanos;
            double area = 0;
            while (now < end) {
                long before = now;
                int l = permits.limit();
                run(Math.min(SECOND / 100, end - now));
                area += (double) l * (now - before);
            }
            return area / nanos;
        }
    }

    @Test
    void startsAtTheMinimumAndSettlesAtTheCapacityWithoutOvershootingForLong() {
        var sim = new Simulation(1, 8);
        sim.run(3 * SECOND);
        assertThat(sim.averageLimit(10 * SECOND)).as("%s", sim.changes).isBetween(7.5, 9.6);
        assertThat(sim.limit.baselineNanos()).isBetween((long) (BASE * 0.94), (long) (BASE * 1.06));
    }

    @Test
    void fallsToTheNewCapacityWithinFiveSecondsAndRecoversWithinTen() {
        var sim = new Simulation(1, 8);
        sim.run(10 * SECOND);
        sim.capacity = 2;
        sim.run(5 * SECOND);
        assertThat(sim.permits.limit()).as("5 s after the step down: %s", sim.changes).isBetween(2, 3);
        assertThat(sim.averageLimit(10 * SECOND)).as("%s", sim.changes).isBetween(1.6, 2.4);
        sim.capacity = 8;
        sim.run(10 * SECOND);
        assertThat(sim.permits.limit()).as("10 s after the step up: %s", sim.changes).isBetween(7, 9);
    }

    @Test
    void theBaselineAndTheLimitDoNotDriftDuringALongOverload() {
        var sim = new Simulation(1, 4);
        sim.run(10 * SECOND);
        double early = sim.averageLimit(30 * SECOND);
        long baseline = sim.limit.baselineNanos();
        sim.run(9 * 60 * SECOND);
        double late = sim.averageLimit(30 * SECOND);
        assertThat(late).as("%s", sim.changes.subList(Math.max(0, sim.changes.size() - 20), sim.changes.size()))
                .isBetween(early * 0.8, early * 1.2);
        assertThat(sim.limit.baselineNanos()).isBetween((long) (baseline * 0.95), (long) (baseline * 1.05));
    }

    @Test
    void whenTheOperationsThemselvesGetSlowerTheBaselineFollowsFromTheMinimumAndTheLimitComesBack() {
        var sim = new Simulation(1, 8);
        sim.run(10 * SECOND);
        sim.base = 2 * BASE; // a plan change: every operation takes twice as long, at any concurrency
        sim.run(60 * SECOND);
        assertThat(sim.limit.baselineNanos()).as("%s", sim.changes).isBetween((long) (2 * BASE * 0.94),
                (long) (2 * BASE * 1.06));
        assertThat(sim.averageLimit(10 * SECOND)).as("%s", sim.changes).isBetween(7.5, 9.6);
    }

    @Test
    void overloadSignalsCutTheLimitByAQuarterPerWindowButAStrayOneDoesNot() {
        var sim = new Simulation(1, 16);
        sim.run(5 * SECOND);
        assertThat(sim.permits.limit()).isEqualTo(16);
        sim.overloadNext = true; // one operation in a window of hundreds: a deadline at the margin, not overload
        sim.run(3 * AdaptiveLimit.WINDOW_MILLIS * 1_000_000);
        assertThat(sim.changes).noneMatch(c -> c.contains("overload signal"));
        sim.overloading = true;
        sim.run(AdaptiveLimit.WINDOW_MILLIS * 1_000_000 + BASE);
        assertThat(sim.changes).anyMatch(c -> c.contains("16 -> 12 (overload signal)"));
        sim.run(5 * SECOND);
        assertThat(sim.permits.limit()).as("while the signals go on: down to the minimum").isEqualTo(1);
    }

    @Test
    void anOverloadDuringTheBaselinesMeasurementCutsFromTheLimitItWouldGoBackTo() {
        var sim = new Simulation(1, 16);
        while (sim.changes.stream().noneMatch(c -> c.contains("(baseline measurement)"))) {
            sim.run(AdaptiveLimit.WINDOW_MILLIS * 1_000_000);
        }
        assertThat(sim.changes.getLast()).contains("16 -> 1 (baseline measurement)");
        sim.overloading = true;
        sim.run(AdaptiveLimit.WINDOW_MILLIS * 1_000_000 + BASE);
        sim.overloading = false;
        assertThat(sim.changes.getLast()).contains("1 -> 12 (overload signal)");
        sim.run(2 * AdaptiveLimit.WINDOW_MILLIS * 1_000_000);
        assertThat(sim.changes).noneMatch(c -> c.contains("(baseline measured)"));
    }

    @Test
    void neverLeavesItsBoundsNorLosesAPermit() {
        var sim = new Simulation(3, 1);
        sim.run(20 * SECOND);
        assertThat(sim.permits.limit()).isEqualTo(3);
        assertThat(sim.permits.available()).isEqualTo(3);
        assertThat(sim.changes).allMatch(c -> !c.contains("-> 2 ") && !c.contains("-> 1 "));
    }
}
