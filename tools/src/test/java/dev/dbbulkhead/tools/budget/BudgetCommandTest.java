package dev.dbbulkhead.tools.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dbbulkhead.testkit.TestDatabase;
import dev.dbbulkhead.tools.Cli;
import java.sql.Connection;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BudgetCommandTest {
    private static Cli.Result run(String... args) {
        return Cli.run(args);
    }

    @Test
    void theWorkedExampleOfTheSizingGuideFitsWithAPoolOf12AndNotOf20() {
        var fits = run(
                "budget",
                "--instances",
                "12",
                "--surge",
                "3",
                "--pool",
                "12",
                "--other",
                "reporting=10",
                "--other",
                "migrations=2",
                "--other",
                "psql=5",
                "--max-connections",
                "200",
                "--reserved",
                "3");
        assertThat(fits.exit()).as(fits.err()).isZero();
        assertThat(fits.out())
                .contains(
                        "peak instances      = 12 (autoscaling maximum) + 3 (rolling-deploy surge) = 15",
                        "fleet connections   = 15 × 12 (pool size) = 180",
                        "other clients       = reporting 10 + migrations 2 " + "+ psql 5 = 17",
                        "demand              = 180 + 17 = 197",
                        "budget              = 200 (max_connections) − 3 (reserved) = 197",
                        "OK: 197 ≤ 197 (0 to spare)");

        var over = run(
                "budget",
                "--instances",
                "12",
                "--surge",
                "3",
                "--pool",
                "20",
                "--other",
                "reporting=10",
                "--other",
                "migrations=2",
                "--other",
                "psql=5",
                "--max-connections",
                "200",
                "--reserved",
                "3");
        assertThat(over.exit()).isEqualTo(1);
        assertThat(over.out()).contains("OVER BUDGET: 317 > 197 by 120; the largest pool size that fits is 12");
    }

    @Test
    void anUnreachableDatabaseIsOneLineAndExit2AndNeverShowsThePassword() {
        var r = run(
                "budget",
                "--instances",
                "2",
                "--pool",
                "3",
                "--db-url",
                "jdbc:postgresql://user:s3cret@127.0.0.1:1/nowhere?password=s3cret&ssl=false");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err())
                .contains("cannot read the server's settings from")
                .doesNotContain("s3cret")
                .contains("password=***");
    }

    @Test
    void theArithmetic() {
        var b = ConnectionBudget.of(4, 1, 10, Map.of("batch", 7), 100, 3);
        assertThat(b.peakInstances()).isEqualTo(5);
        assertThat(b.fleet()).isEqualTo(50);
        assertThat(b.demand()).isEqualTo(57);
        assertThat(b.budget()).isEqualTo(97);
        assertThat(b.fits()).isTrue();
        assertThat(b.largestPoolThatFits()).isEqualTo(18);
        assertThat(ConnectionBudget.of(1, 0, 1, Map.of("ops", 200), 100, 3).largestPoolThatFits())
                .isZero();
    }

    @Test
    void absurdInputsAreNamedWithTheirValues() {
        assertThatThrownBy(() -> ConnectionBudget.of(0, -1, 0, Map.of("batch", -2), 0, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--instances must be >= 1, was 0")
                .hasMessageContaining("--surge must be >= 0, was -1")
                .hasMessageContaining("--pool must be >= 1, was 0")
                .hasMessageContaining("max_connections must be >= 1, was 0")
                .hasMessageContaining("reserved connections must be >= 0, was -1")
                .hasMessageContaining("--other batch must be >= 0, was -2");
        assertThatThrownBy(() -> ConnectionBudget.of(1, 0, 1, Map.of(), 10, 10))
                .hasMessageContaining("reserved connections (10) must be fewer than max_connections (10)");
        assertThatThrownBy(() -> ConnectionBudget.of(200_000, 0, 1, Map.of(), 10, 1))
                .hasMessageContaining("--instances + --surge must be <= 100000, was 200000");
    }

    @Test
    void badCommandLinesExitWith2AndSayWhy() {
        var missing = run("budget", "--instances", "3");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.err()).contains("Missing required option: '--pool=P'");
        var noBudget = run("budget", "--instances", "3", "--pool", "5");
        assertThat(noBudget.exit()).isEqualTo(2);
        assertThat(noBudget.err()).contains("give --max-connections (and --reserved), or --db-url");
        var notANumber = run("budget", "--instances", "three", "--pool", "5");
        assertThat(notANumber.exit()).isEqualTo(2);
        assertThat(notANumber.err()).contains("Invalid value for option '--instances'");
        var negative = run("budget", "--instances", "3", "--pool", "-5", "--max-connections", "100");
        assertThat(negative.exit()).isEqualTo(2);
        assertThat(negative.err()).contains("--pool must be >= 1, was -5");
        var unreachable = run(
                "budget",
                "--instances",
                "3",
                "--pool",
                "5",
                "--db-url",
                "jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1");
        assertThat(unreachable.exit()).isEqualTo(2);
        assertThat(unreachable.err()).contains("cannot read the server's settings");
    }

    @Test
    void withADbUrlItReadsTheServersSettingsAndCurrentUse() throws Exception {
        TestDatabase db = TestDatabase.get();
        // Two connections of a named application, as other clients on the server.
        var props = new java.util.Properties();
        props.setProperty("user", db.user());
        props.setProperty("password", db.password());
        props.setProperty("ApplicationName", "nightly-batch");
        try (Connection a = java.sql.DriverManager.getConnection(db.jdbcUrl(), props);
                Connection b = java.sql.DriverManager.getConnection(db.jdbcUrl(), props)) {
            var r = run("budget", "--instances", "2", "--pool", "3", "--db-url", db.jdbcUrl());
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out())
                    .containsPattern("server: max_connections=\\d+, superuser_reserved_connections=\\d+")
                    .contains("  nightly-batch: 2")
                    .contains("nightly-batch 2");
        }
    }
}
