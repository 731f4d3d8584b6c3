package dev.dbbulkhead.tools;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The overload tool on a tiny scenario against the real PostgreSQL. */
class OverloadCommandTest {
    @Test
    void aTinyRunComparesEveryConfigurationInBothScenariosAndWritesAReport(@TempDir Path dir) throws Exception {
        Cli.Result r = Cli.run(
                "overload",
                "--pool",
                "2",
                "--concurrent",
                "2",
                "--extra",
                "2",
                "--wait",
                "20",
                "--connection-timeout",
                "250",
                "--sql",
                "SELECT pg_sleep(0.01)",
                "--operations",
                "60",
                "--rate",
                "400",
                "--duration",
                "0.25",
                "--repetitions",
                "1",
                "--report",
                dir.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        List<String> rows = Arrays.stream(r.out().split("\n"))
                .filter(l -> l.startsWith("| burst") || l.startsWith("| open-loop"))
                .toList();
        assertThat(rows).hasSize(10);
        for (String row : rows) {
            String[] cells = row.split("\\|");
            long succeeded = Long.parseLong(cells[3].trim());
            long[] rejected = Arrays.stream(cells[4].split("/"))
                    .mapToLong(s -> Long.parseLong(s.trim()))
                    .toArray();
            long[] failed = Arrays.stream(cells[5].split("/"))
                    .mapToLong(s -> Long.parseLong(s.trim()))
                    .toArray();
            long total =
                    succeeded + Arrays.stream(rejected).sum() + failed[0] + failed[1]; // full / predicted / timeout
            assertThat(total).as(row).isEqualTo(row.startsWith("| burst") ? 60 : 100);
            assertThat(succeeded).as(row).isPositive();
            assertThat(failed[1]).as("no unexpected failures: %s", row).isZero();
        }
        // Pool-only never rejects; the barriers never let a caller reach the pool's timeout.
        assertThat(rows).filteredOn(l -> l.contains("| pool-only |")).allMatch(l -> l.contains("| 0 / 0 / 0 |"));
        assertThat(rows)
                .filteredOn(l -> l.contains("| db-bulkhead |"))
                .allMatch(l -> l.split("\\|")[5].trim().equals("0 / 0"));
        assertThat(Files.readString(dir.resolve("overload.md")))
                .contains("# Overload comparison", "| burst | db-bulkhead |");
        var svg = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(dir.resolve("overload.svg").toFile());
        assertThat(svg.getDocumentElement().getTagName()).isEqualTo("svg");
        assertThat(svg.getElementsByTagName("rect").getLength()).isGreaterThan(16);
    }

    /** SQL the guard refuses stops the run in one line before any measurement, instead of a comparison of failures. */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {
                "COMMIT",
                "select 1; commit",
                "SET search_path TO x",
                "update pg_settings set setting = 'x' where name = 'search_path'"
            })
    void sqlThatCannotRunThroughABarrierIsRefusedBeforeTheRun(String sql) {
        Cli.Result r = Cli.run(
                "overload",
                "--pool",
                "2",
                "--concurrent",
                "2",
                "--sql",
                sql,
                "--operations",
                "20",
                "--rate",
                "50",
                "--duration",
                "0.2",
                "--repetitions",
                "1");
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList())
                .as(r.err())
                .hasSize(1)
                .first()
                .asString()
                .startsWith("error: --sql cannot run inside a db-bulkhead transaction")
                .contains("25000", "as SQL");
        assertThat(r.out()).doesNotContain("database:");
    }

    /** A pool larger than the server's free connections is refused before the run, with both numbers. */
    @Test
    void aPoolTheServerCannotOpenIsRefusedBeforeTheRun() {
        Cli.Result r = Cli.run("overload", "--pool", "2147483647", "--concurrent", "2", "--repetitions", "1");
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.err())
                .startsWith("error: --pool=2147483647 is more connections than the server has free: ")
                .contains("max_connections")
                .doesNotContain("--sql");
        assertThat(r.out()).doesNotContain("database:");
    }

    @Test
    void badSettingsAreNamedWithTheirValues() {
        Cli.Result r = Cli.run(
                "overload",
                "--pool",
                "0",
                "--connection-timeout",
                "100",
                "--extra",
                "-1",
                "--configs",
                "pool-only,hystrix",
                "--scenarios",
                "soak");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        "--pool must be >= 1, was 0",
                        "--connection-timeout must be >= 250 (HikariCP's " + "minimum), was 100",
                        "--extra must be >= 0, was -1",
                        "unknown configuration 'hystrix'",
                        "--scenarios: unknown 'soak'");
    }

    /**
     * A smoke run of each capacity scenario (a second each, one load): the static sweep and the limiters run (the
     * db-bulkhead configuration is the sweep's gate with B = max, pool-only the plain transaction they all use), each
     * row has goodput, and the report is written. The real runs are long and stay out of the build
     * (docs/performance.md).
     */
    @Test
    void aSmokeRunOfEachCapacityScenarioComparesTheLimitersAndWritesAReport(@TempDir Path dir) throws Exception {
        Cli.Result r = Cli.run(
                "overload",
                "--scenarios",
                "s1-cpu,s2-locks,s3-step,s4-mixed,s5-two-workloads,s6-burst",
                "--loads",
                "2",
                "--duration",
                "0.5",
                "--repetitions",
                "1",
                "--sweep",
                "2",
                "--max-concurrent",
                "4",
                "--locks",
                "2",
                "--hold",
                "5",
                "--cpu",
                "2",
                "--burst-size",
                "20",
                "--capacity-configs",
                "static,db-bulkhead-adaptive,gradient2,vegas,recommended",
                "--report",
                dir.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        List<String> rows = Arrays.stream(r.out().split("\n"))
                .filter(l -> l.matches("\\| s[12346]-.*"))
                .toList();
        // s1, s2, s4 and s6: static B=2, adaptive, gradient2, vegas, recommended; s3 has no static sweep.
        assertThat(rows).hasSize(5 + 5 + 4 + 5 + 5);
        for (String row : rows) {
            String[] cells = row.split("\\|");
            // goodput "median (min–max)"; failed otherwise in the 8th column (none on a healthy server), mean limit
            // in the 13th
            assertThat(Double.parseDouble(cells[4].trim().split(" ")[0]))
                    .as("goodput within SLO: %s", row)
                    .isPositive();
            assertThat(cells[8].trim()).as("failed otherwise: %s", row).isEqualTo("0");
            assertThat(Double.parseDouble(cells[13].trim()))
                    .as("mean limit: %s", row)
                    .isBetween(1.0, 4.0);
        }
        assertThat(rows)
                .filteredOn(row -> row.startsWith("| s6-burst | 20") && row.contains(" at once | recommended |"))
                .hasSize(1);
        assertThat(r.out()).contains("s2-locks at 2.0×: adaptive", "s4-mixed at 2.0×: adaptive");
        // s5: the sweep of fixed batch caps (1 to a quarter of the pool of 4: one), the first cut's fixed split, and
        // priorities with interactive sized to its need and with the first cut's B; then the recovery run
        assertThat(Arrays.stream(r.out().split("\n")).filter(l -> l.matches("\\| fixed cap \\d+ / \\d+ \\|.*")))
                .hasSize(1);
        assertThat(Arrays.stream(r.out().split("\n")).filter(l -> l.matches("\\| fixed \\d+ / \\d+ \\|.*")))
                .hasSize(1);
        assertThat(Arrays.stream(r.out().split("\n"))
                        .filter(l -> l.matches("\\| priorities \\d+ / elastic \\d+ \\|.*")))
                .hasSize(2);
        assertThat(r.out()).contains("best interactive-alone p99 of the run", "| s5 recovery (priorities ");
        assertThat(Files.readString(dir.resolve("capacity.md"))).contains("# Capacity scenarios", "| s3-step |");
        var frontier = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(dir.resolve("s5-frontier.svg").toFile());
        assertThat(frontier.getElementsByTagName("circle").getLength())
                .as("a point per s5 configuration")
                .isEqualTo(4);
        var svg = DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(dir.resolve("capacity.svg").toFile());
        assertThat(svg.getElementsByTagName("polyline").getLength())
                .as("limit and K lines")
                .isGreaterThanOrEqualTo(9);
    }

    @Test
    void badCapacitySettingsAreNamedWithTheirValues() {
        Cli.Result r = Cli.run(
                "overload",
                "--scenarios",
                "s2-locks",
                "--capacity-configs",
                "hystrix",
                "--loads",
                "0",
                "--sweep",
                "0,17",
                "--locks",
                "0",
                "--deadline",
                "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err())
                .contains(
                        "--capacity-configs: unknown 'hystrix'",
                        "--loads must all be finite numbers > 0, was [0.0]",
                        "--sweep values must be between 1 and --max-concurrent 16, was [0, 17]",
                        "--locks must be >= 1, was 0",
                        "--deadline must be >= 1, was 0");
    }
}
