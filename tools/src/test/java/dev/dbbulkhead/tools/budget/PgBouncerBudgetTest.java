package dev.dbbulkhead.tools.budget;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dbbulkhead.tools.Cli;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The two-tier budget behind PgBouncer: its settings parsed from the admin console's column sets of 1.18 and of
 * 1.23 (fixtures), the arithmetic of both tiers, and, where a PgBouncer runs on 127.0.0.1:6432 (.ci/run and
 * bin/pgbouncer start one), the console read for real.
 */
class PgBouncerBudgetTest {
    static List<Map<String, String>> fixture(String name) throws IOException {
        var lines = Files.readAllLines(Path.of("src/test/resources/pgbouncer", name), StandardCharsets.UTF_8);
        var header = lines.get(0).split("\t", -1);
        var rows = new ArrayList<Map<String, String>>();
        for (String line : lines.subList(1, lines.size())) {
            var cells = Arrays.copyOf(line.split("\t", -1), header.length);
            var row = new LinkedHashMap<String, String>();
            for (int i = 0; i < header.length; i++) {
                row.put(header[i], cells[i]);
            }
            rows.add(row);
        }
        return rows;
    }

    @Test
    void pgbouncer118ColumnsPerDatabaseLimitAndReservePool() throws IOException {
        var s = PgBouncerSettings.of(fixture("show-config-1.18.tsv"), fixture("show-databases-1.18.tsv"), null);
        assertThat(s).isEqualTo(new PgBouncerSettings("app", 2000, 40, 5, "transaction"));
        assertThat(s.serverConnections()).isEqualTo(45);
    }

    @Test
    void pgbouncer123ColumnsFallBackToTheGlobalLimit() throws IOException {
        var s = PgBouncerSettings.of(fixture("show-config-1.23.tsv"), fixture("show-databases-1.23.tsv"), "app");
        assertThat(s).isEqualTo(new PgBouncerSettings("app", 2000, 30, 5, "transaction"));
    }

    @Test
    void anUnknownDatabaseNamesTheOnesServed() throws IOException {
        assertThatThrownBy(() -> PgBouncerSettings.of(
                        fixture("show-config-1.18.tsv"), fixture("show-databases-1.18.tsv"), "orders"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("PgBouncer has no database 'orders'; it serves [app]");
    }

    @Test
    void bothTiersAreChecked() {
        var poolers = new ConnectionBudget.Poolers(2, new PgBouncerSettings("app", 100, 40, 5, "transaction"));
        var fits = ConnectionBudget.of(12, 3, 10, Map.of("ops", 5), 100, 3, poolers);
        assertThat(fits.clientsFit()).as("150 clients ≤ 2 × 100").isTrue();
        assertThat(fits.demand()).as("2 × (40 + 5) + 5").isEqualTo(95);
        assertThat(fits.fits()).isTrue();
        assertThat(ConnectionBudget.of(12, 3, 20, Map.of(), 100, 3, poolers).explain())
                .contains(
                        "  OVER: 300 > 200 by 100; the poolers refuse the excess clients",
                        "OVER BUDGET at tier 1: the largest pool size per instance that the poolers accept is 13");
        var tier2 = ConnectionBudget.of(12, 3, 10, Map.of("ops", 10), 100, 3, poolers);
        assertThat(tier2.fits()).isFalse();
        assertThat(tier2.explain())
                .contains("OVER BUDGET at tier 2: 100 > 97 by 3; lower max_db_connections (or "
                        + "reserve_pool) or the number of poolers");
    }

    @Test
    void theCommandNeedsBothLimitsWhenGivenByHand() {
        var r = Cli.run(
                "budget", "--instances", "2", "--pool", "3", "--max-connections", "100", "--max-client-conn", "10");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("give both --max-client-conn and --max-db-connections");
        var exit1 = Cli.run(
                "budget",
                "--instances",
                "12",
                "--surge",
                "3",
                "--pool",
                "10",
                "--max-client-conn",
                "100",
                "--max-db-connections",
                "60",
                "--poolers",
                "2",
                "--max-connections",
                "100",
                "--reserved",
                "3");
        assertThat(exit1.exit()).isEqualTo(1);
        assertThat(exit1.out()).contains("server connections = 2 × (60 max_db_connections + 0 reserve_pool) = 120");
    }

    @Test
    void anUnreachablePgBouncerIsOneLineAndExit2() {
        var r = Cli.run(
                "budget", "--instances", "2", "--pool", "3", "--max-connections", "100", "--pgbouncer", "127.0.0.1:1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err().strip())
                .startsWith("error: cannot read PgBouncer's settings from 127.0.0.1:1")
                .doesNotContain("\n");
    }

    @Test
    void theRealConsoleIsReadOverTheSimpleProtocol() {
        assumeTrue(Cli.listening(6432), "no PgBouncer on 127.0.0.1:6432 (bin/pgbouncer starts one)");
        var r = Cli.run(
                "budget",
                "--instances",
                "3",
                "--pool",
                "5",
                "--max-connections",
                "100",
                "--reserved",
                "3",
                "--pgbouncer",
                "127.0.0.1:6432",
                "--pgbouncer-user",
                "postgres",
                "--pgbouncer-database",
                "bulkhead");
        assertThat(r.exit()).as(r.err()).isZero();
        assertThat(r.out())
                .contains("pgbouncer 127.0.0.1:6432: database 'bulkhead', pool_mode=transaction")
                .contains("tier 2: PgBouncer(s) → PostgreSQL")
                .containsPattern("queue no barrier sees, now: \\d+ client\\(s\\) waiting for a server connection")
                .contains("suggested B per instance: at most 6 (= 20 max_db_connections / 3 peak instances)");
    }

    @Test
    void theQueueInPgBouncerIsReadFromShowPoolsAndTheSuggestedBKeepsItEmpty() {
        var pools = List.of(
                Map.of(
                        "database",
                        "app",
                        "user",
                        "svc",
                        "cl_active",
                        "12",
                        "cl_waiting",
                        "7",
                        "sv_active",
                        "10",
                        "maxwait",
                        "1",
                        "maxwait_us",
                        "250000"),
                Map.of(
                        "database",
                        "app",
                        "user",
                        "ops",
                        "cl_active",
                        "1",
                        "cl_waiting",
                        "2",
                        "sv_active",
                        "1",
                        "maxwait",
                        "0",
                        "maxwait_us",
                        "5000"),
                Map.of(
                        "database",
                        "other",
                        "user",
                        "svc",
                        "cl_active",
                        "9",
                        "cl_waiting",
                        "9",
                        "sv_active",
                        "9",
                        "maxwait",
                        "9",
                        "maxwait_us",
                        "0"));
        var queue = PoolerQueue.of(pools, "app");
        assertThat(queue).isEqualTo(new PoolerQueue("app", 13, 9, 11, 1.25));
        assertThat(queue.describe()).contains("9 client(s) waiting for a server connection (longest 1.250 s)");
        var settings = new PgBouncerSettings("app", 1000, 40, 5, "transaction");
        assertThat(PoolerQueue.suggestion(settings, 15))
                .startsWith("suggested B per instance: at most 2 (= 40 " + "max_db_connections / 15 peak instances)");
        assertThat(PoolerQueue.suggestion(settings, 50)).startsWith("suggested B per instance: none fits");
    }

    /** Limits as large as an int add up in longs: once, 2147483647 + 1 printed "OK: -2147483648 ≤ 97". */
    @Test
    void hugeLimitsDoNotOverflow() {
        var r = Cli.run(
                "budget",
                "--instances",
                "2",
                "--pool",
                "3",
                "--max-connections",
                "100",
                "--reserved",
                "3",
                "--max-client-conn",
                "1000",
                "--max-db-connections",
                "2147483647",
                "--reserve-pool",
                "1");
        assertThat(r.exit()).as(r.out()).isEqualTo(1);
        assertThat(r.out())
                .contains("server connections = 1 × (2147483647 max_db_connections + 1 reserve_pool) = " + "2147483648")
                .contains("OVER BUDGET at tier 2")
                .doesNotContain("-2147483648");
    }
}
