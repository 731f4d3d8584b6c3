package dev.dbbulkhead.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The adaptive limit's soak: s2-locks at 2× its capacity for {@code capacity.soak.seconds} (600 with {@code -Psoak};
 * skipped otherwise), then the mean limit over the last fifth of the run must be within 20 % of its mean over the
 * fifth after the first tenth: no drift while the database stays overloaded.
 */
class AdaptiveLimitSoakTest {
    private static final Pattern DRIFT = Pattern.compile("limit drift ([+-]?\\d+) %");

    @Test
    void theLimitDoesNotDriftDuringALongOverload() {
        long seconds = Long.getLong("capacity.soak.seconds", 0);
        assumeTrue(seconds > 0, "the soak runs with -Psoak");
        Cli.Result r = Cli.run(
                "overload",
                "--scenarios",
                "s2-locks",
                "--loads",
                "2",
                "--duration",
                Long.toString(seconds),
                "--repetitions",
                "1",
                "--capacity-configs",
                "db-bulkhead-adaptive");
        assertThat(r.exit()).as(r.err()).isZero();
        var drift = DRIFT.matcher(r.out());
        assertThat(drift.find()).as(r.out()).isTrue();
        assertThat(Integer.parseInt(drift.group(1))).as(r.out()).isBetween(-20, 20);
    }
}
