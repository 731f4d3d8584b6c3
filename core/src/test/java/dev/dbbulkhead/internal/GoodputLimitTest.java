package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import java.util.function.IntToDoubleFunction;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The adaptive limit's algorithm alone, fed synthetic windows: each window's goodput is a function of the limit it ran
 * at (no noise unless said), so that every rule shows on its own.
 */
@Tag("no-db")
class GoodputLimitTest {
    private static final long MS = 1_000_000;

    /** Feeds {@code windows} windows whose goodput at limit n is {@code goodput(n)}; returns the limits in force. */
    private static int[] run(GoodputLimit rule, int windows, IntToDoubleFunction goodput) {
        int[] limits = new int[windows];
        int limit = rule.level();
        for (int i = 0; i < windows; i++) {
            limits[i] = limit;
            limit = rule.next(new GoodputLimit.Window(limit, 100, goodput.applyAsDouble(limit), 10 * MS, 0, true), 0)
                    .limit();
        }
        return limits;
    }

    private static GoodputLimit rule(int max) {
        return new GoodputLimit(1, max, new SplittableRandom(1));
    }

    @Test
    void startsAtBAndProbesOneStepDownNeverToTheMinimum() {
        var rule = rule(16);
        int[] limits = run(rule, 20, n -> 100.0 * n); // every permit pays
        assertThat(limits[0]).isEqualTo(16);
        assertThat(limits).as("probes a step away: 16 - 3").containsOnly(16, 13);
        assertThat(rule.level()).as("fewer in flight complete fewer: it stays").isEqualTo(16);
    }

    @Test
    void comesDownWhereFewerInFlightCompleteAsMany() {
        var rule = rule(16);
        run(rule, 200, n -> 100.0 * Math.min(n, 4)); // four resources: beyond them nothing more completes
        assertThat(rule.level()).isBetween(4, 5);
    }

    @Test
    void goesUpWhereMoreInFlightCompleteMore() {
        var rule = new GoodputLimit(1, 16, 2, new SplittableRandom(1));
        run(rule, 200, n -> 100.0 * Math.min(n, 12));
        assertThat(rule.level()).isBetween(12, 14);
    }

    @Test
    void smallStepsDownAShallowSlopeDoNotAddUp() {
        var rule = rule(16);
        // 0.2 % per permit in flight: each step down loses less than the bound, all of them together more.
        run(rule, 400, n -> 1000 + 2.0 * n);
        assertThat(1000 + 2.0 * rule.level())
                .as("within the bound of the peak, at %d", rule.level())
                .isGreaterThanOrEqualTo((1 - GoodputLimit.LOSS) * (1000 + 2.0 * 16));
    }

    @Test
    void noisyProbesAreAveragedBeforeAMove() {
        var noise = new SplittableRandom(7);
        var rule = new GoodputLimit(1, 16, 8, new SplittableRandom(1));
        // Flat beyond 8, 6 % noise per window: no single probe decides, and the level stays on the flat part.
        int[] limits = run(rule, 400, n -> 100.0 * Math.min(n, 8) * (1 + 0.06 * noise.nextGaussian()));
        for (int i = 200; i < limits.length; i++) {
            assertThat(limits[i]).as("window %d", i).isGreaterThanOrEqualTo(6);
        }
    }

    @Test
    void overloadSignalsCutByAQuarterButAStrayOneDoesNot() {
        var rule = rule(16);
        var stray = rule.next(new GoodputLimit.Window(16, 100, 1000, 10 * MS, 1, true), 0);
        assertThat(stray.cause()).isNull();
        var cut = rule.next(new GoodputLimit.Window(16, 100, 1000, 10 * MS, 5, true), 0);
        assertThat(cut.limit()).isEqualTo(12);
        assertThat(cut.cause()).isEqualTo("overload signals");
    }

    @Test
    void theLatencyCeilingCutsInProportionByHalfAtMost() {
        var rule = rule(16);
        var cut = rule.next(new GoodputLimit.Window(16, 100, 1000, 200 * MS, 0, true), 150 * MS);
        assertThat(cut.limit()).as("16 × 0.75").isEqualTo(12);
        assertThat(cut.cause()).isEqualTo("latency ceiling");
        assertThat(rule.next(new GoodputLimit.Window(12, 100, 1000, 2_000 * MS, 0, true), 150 * MS)
                        .limit())
                .isEqualTo(6);
    }

    @Test
    void stuckHoldersRaiseItByOneAndAnUnusedLimitTeachesNothing() {
        var rule = new GoodputLimit(1, 16, 4, new SplittableRandom(1));
        assertThat(rule.next(new GoodputLimit.Window(4, 0, 0, 0, 0, true), 0).limit())
                .isEqualTo(5);
        for (int i = 0; i < 50; i++) {
            assertThat(rule.next(new GoodputLimit.Window(5, 100, 500, 10 * MS, 0, false), 0)
                            .limit())
                    .as("not binding: no probe, no move")
                    .isEqualTo(5);
        }
    }

    @Test
    void aDropInTheReferencesIsAChangeAndTheLevelFollowsItDown() {
        var rule = rule(16);
        int[] capacity = {16};
        run(rule, 100, n -> 100.0 * Math.min(n, capacity[0]));
        assertThat(rule.level()).isEqualTo(16);
        capacity[0] = 4;
        int[] limits = run(rule, 120, n -> 100.0 * Math.min(n, capacity[0]));
        assertThat(rule.level()).isBetween(4, 5);
        int firstBelow = 0;
        while (limits[firstBelow] == 16) {
            firstBelow++;
        }
        assertThat(firstBelow)
                .as("the first probe after the change comes soon, not after a long back-off")
                .isLessThan(12);
    }
}
