package dev.dbbulkhead.tools.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dbbulkhead.tools.Cli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A short fleet run on the real topology: instance JVMs straight to PostgreSQL over and within the budget, and
 * through PgBouncer. Runs in the PgBouncer pass (DB_URL on 127.0.0.1:6432, as .ci/run's third pass, or locally after
 * bin/pgbouncer), where PostgreSQL is on 127.0.0.1:5432 behind it; skipped elsewhere, to keep bin/test short.
 */
class FleetCommandTest {
    @Test
    void theServerConnectionsStayWithinTheLimitExceptWherePoolsAreOverBudget(@TempDir Path report) throws Exception {
        assumeTrue(
                String.valueOf(System.getenv("DB_URL")).contains("127.0.0.1:6432/")
                        && Cli.listening(5432)
                        && Cli.listening(6432),
                "the PgBouncer pass only: DB_URL through PgBouncer on 127.0.0.1:6432 (bin/pgbouncer)");
        var r = Cli.run(
                "fleet",
                "--instances",
                "1",
                "--surge",
                "1",
                "--limit",
                "6",
                "--pool",
                "4",
                "--rate",
                "20",
                "--phase",
                "1",
                "--report",
                report.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        var rows = Arrays.stream(r.out().split("\n"))
                .filter(l -> l.startsWith("| "))
                .toList();
        assertThat(rows).hasSize(4);
        assertThat(cells(rows, "direct-over-budget")[8])
                .as("server connections over budget: at the limit")
                .isEqualTo("6");
        assertThat(Integer.parseInt(cells(rows, "direct-within-budget")[8]))
                .as("within budget")
                .isLessThanOrEqualTo(6);
        assertThat(cells(rows, "direct-within-budget")[4])
                .as("refused 53300 within budget")
                .isEqualTo("0");
        var pgbouncer = cells(rows, "pgbouncer");
        assertThat(pgbouncer[4]).as("refused 53300 through PgBouncer").isEqualTo("0");
        assertThat(Integer.parseInt(pgbouncer[8]))
                .as("server connections through PgBouncer")
                .isLessThanOrEqualTo(6);
        assertThat(Files.readString(report.resolve("fleet.md"))).contains("| pgbouncer |");
        assertThat(Files.readString(report.resolve("fleet.svg")))
                .startsWith("<svg")
                .contains("polyline");
    }

    @Test
    void contradictoryOptionsAreRefusedBeforeAnyWork() {
        var r = Cli.run("fleet", "--instances", "2", "--surge", "3", "--limit", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err())
                .contains("--surge must be between 0 and --instances (2), was 3")
                .contains("--limit must be >= 1, was 0");
    }

    /** Its help promises exit 2 for an unreachable PgBouncer: one line, before any instance starts. */
    @Test
    void anUnreachablePgBouncerIsOneLineAndExit2() {
        var r = Cli.run("fleet", "--topologies", "pgbouncer", "--pgbouncer", "127.0.0.1:1", "--phase", "1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip())
                .startsWith("error: cannot reach PgBouncer's admin console on 127.0.0.1:1")
                .doesNotContain("\n");
        assertThat(r.out()).doesNotContain("started");
    }

    /** A JDBC URL that answers nothing is one line and exit 2 before the run, not a report of 0 successes. */
    @Test
    void anUnreachableDatabaseUrlIsOneLineAndExit2BeforeTheRun() {
        var r = Cli.run(
                "fleet",
                "--topologies",
                "direct-over-budget",
                "--db-url",
                "jdbc:postgresql://127.0.0.1:1/nowhere",
                "--phase",
                "1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip())
                .startsWith("error: cannot reach jdbc:postgresql://127.0.0.1:1/nowhere")
                .doesNotContain("\n");
        assertThat(r.out()).doesNotContain("instances");
    }

    /** With PgBouncer's console up, a --pgbouncer-url pointing at nothing is caught before the run as well. */
    @Test
    void anUnreachablePgBouncerUrlIsOneLineAndExit2BeforeTheRun() {
        assumeTrue(Cli.listening(6432), "PgBouncer on 127.0.0.1:6432 (bin/pgbouncer)");
        var r = Cli.run(
                "fleet",
                "--topologies",
                "pgbouncer",
                "--pgbouncer-url",
                "jdbc:postgresql://127.0.0.1:1/bulkhead?prepareThreshold=0",
                "--phase",
                "1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip())
                .startsWith("error: cannot reach jdbc:postgresql://127.0.0.1:1/bulkhead")
                .doesNotContain("\n");
        assertThat(r.out()).doesNotContain("instances");
    }

    /** The instances' command lines carry no URL and no password: any user can read them with ps. */
    @Test
    void anInstancesCommandLineCarriesNoSecret() {
        var fleet = new FleetCommand();
        fleet.rate = 10;
        fleet.sql = "SELECT 1";
        String url = "jdbc:postgresql://fleet:hunter2@db/app?sslpassword=k3y&password=hunter2";
        var pb = fleet.instance("i-0", url, 4, false);
        assertThat(String.join(" ", pb.command())).doesNotContain("hunter2", "k3y", "jdbc:");
        assertThat(pb.environment()).containsEntry(FleetInstance.URL_VARIABLE, url);
    }

    private static String[] cells(java.util.List<String> rows, String topology) {
        return rows.stream()
                .filter(l -> l.startsWith("| " + topology + " |"))
                .findFirst()
                .orElseThrow()
                .split("\\s*\\|\\s*");
    }
}
