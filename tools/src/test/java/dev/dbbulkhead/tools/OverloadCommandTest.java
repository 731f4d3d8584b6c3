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
        Cli.Result r = Cli.run("overload", "--pool", "2", "--concurrent", "2", "--extra", "2", "--wait", "20",
                "--connection-timeout", "250", "--sql", "SELECT pg_sleep(0.01)", "--operations", "60",
                "--rate", "400", "--duration", "0.25", "--repetitions", "1", "--report", dir.toString());
        assertThat(r.exit()).as(r.err()).isZero();
        List<String> rows = Arrays.stream(r.out().split("\n")).filter(l -> l.startsWith("| burst") || l.startsWith(
                "| open-loop")).toList();
        assertThat(rows).hasSize(10);
        for (String row : rows) {
            String[] cells = row.split("\\|");
            long succeeded = Long.parseLong(cells[3].trim());
            long[] rejected = Arrays.stream(cells[4].split("/")).mapToLong(s -> Long.parseLong(s.trim())).toArray();
            long[] failed = Arrays.stream(cells[5].split("/")).mapToLong(s -> Long.parseLong(s.trim())).toArray();
            long total = succeeded + Arrays.stream(rejected).sum() + failed[0] + failed[1]; // full / predicted / timeout
            assertThat(total).as(row).isEqualTo(row.startsWith("| burst") ? 60 : 100);
            assertThat(succeeded).as(row).isPositive();
            assertThat(failed[1]).as("no unexpected failures: %s", row).isZero();
        }
        // Pool-only never rejects; the barriers never let a caller reach the pool's timeout.
        assertThat(rows).filteredOn(l -> l.contains("| pool-only |")).allMatch(l -> l.contains("| 0 / 0 / 0 |"));
        assertThat(rows).filteredOn(l -> l.contains("| db-bulkhead |"))
                .allMatch(l -> l.split("\\|")[5].trim().equals("0 / 0"));
        assertThat(Files.readString(dir.resolve("overload.md"))).contains("# Overload comparison", "| burst | db-bulkhead |");
        var svg = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(dir.resolve("overload.svg").toFile());
        assertThat(svg.getDocumentElement().getTagName()).isEqualTo("svg");
        assertThat(svg.getElementsByTagName("rect").getLength()).isGreaterThan(16);
    }

    @Test
    void badSettingsAreNamedWithTheirValues() {
        Cli.Result r = Cli.run("overload", "--pool", "0", "--connection-timeout", "100", "--extra", "-1", "--configs",
                "pool-only,hystrix", "--scenarios", "soak");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--pool must be >= 1, was 0", "--connection-timeout must be >= 250 (HikariCP's "
                + "minimum), was 100", "--extra must be >= 0, was -1", "unknown configuration 'hystrix'",
                "--scenarios: unknown 'soak'");
    }
}
