package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The chance to start in time against the Poisson distribution's own values, the normal approximation against the
 * exact sum where both apply, and the decision against a simulation of permits coming back at random.
 */
class StartChanceTest {
    @Test
    void thePoissonTailMatchesItsClosedForms() {
        assertThat(StartChance.atLeast(1, 0.25)).isCloseTo(1 - Math.exp(-0.25), within(1e-12));
        // P(N >= 3), mean 2: 1 - e^-2 (1 + 2 + 2)
        assertThat(StartChance.atLeast(3, 2)).isCloseTo(1 - Math.exp(-2) * 5, within(1e-12));
        assertThat(StartChance.atLeast(0, 5)).isEqualTo(1);
        assertThat(StartChance.atLeast(400, 20)).as("far past the mean").isLessThan(1e-5);
    }

    @Test
    void aCallerIsRefusedOnlyBelowAOnePercentChance() {
        assertThat(StartChance.unlikely(1, 0.25))
                .as("22 % to get the next permit back in time")
                .isFalse();
        assertThat(StartChance.unlikely(1, 0.005)).as("0.5 %").isTrue();
        assertThat(StartChance.unlikely(4, 0.25))
                .as("four permits back where a quarter is expected")
                .isTrue();
        assertThat(StartChance.unlikely(1, 0)).as("no time to wait at all").isTrue();
        assertThat(StartChance.unlikely(0, 0)).as("nothing to wait for").isFalse();
        // Mean 10: P(N >= 17) = 2.7 %, P(N >= 18) = 1.4 %, P(N >= 19) = 0.72 %.
        assertThat(StartChance.unlikely(18, 10)).isFalse();
        assertThat(StartChance.unlikely(19, 10)).isTrue();
    }

    @Test
    void theNormalApproximationAgreesWithTheExactSumWhereTheyMeet() {
        for (int needed = 100; needed <= 140; needed++) {
            boolean exact = StartChance.atLeast(needed, 100) < StartChance.REFUSE_BELOW;
            boolean approximate = StartChance.unlikely(needed, 100.0001);
            if (needed < 123 || needed > 126) { // the 99th percentile of Poisson(100) is 124: either side of it
                assertThat(approximate).as("needed %d", needed).isEqualTo(exact);
            }
        }
        assertThat(StartChance.unlikely(1100, 1000)).as("3.2 sigma up").isTrue();
        assertThat(StartChance.unlikely(1060, 1000)).as("1.9 sigma up").isFalse();
    }

    /** Permits come back as a Poisson process: of the callers refused, at most about 1 % would have started in time. */
    @Test
    void ofTheCallersRefusedAboutOnePercentWouldHaveStartedInTime() {
        var random = new SplittableRandom(20261205);
        int refused = 0;
        int wouldHaveStarted = 0;
        for (int i = 0; i < 200_000; i++) {
            int needed = 1 + random.nextInt(30);
            double expectedBack = random.nextDouble() * 30;
            if (!StartChance.unlikely(needed, expectedBack)) {
                continue;
            }
            refused++;
            double t = 0; // the time of the needed-th return, the mean gap being 1 / expectedBack of the allowed time
            for (int k = 0; k < needed; k++) {
                t -= Math.log(1 - random.nextDouble()) / expectedBack;
            }
            if (t <= 1) {
                wouldHaveStarted++;
            }
        }
        assertThat(refused).isGreaterThan(50_000);
        assertThat((double) wouldHaveStarted / refused).isLessThanOrEqualTo(StartChance.REFUSE_BELOW);
    }
}
