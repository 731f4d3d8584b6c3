package dev.dbbulkhead.tools.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dbbulkhead.testkit.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The middle tier failing under load, through a real PgBouncer ({@code bin/pgbouncer}; the PgBouncer pass of
 * .ci/run): killed with SIGKILL and restarted, paused and resumed, its server connections replaced, its client limit
 * reached, its queue timeout firing. In each: every caller is told (within its deadline, for those that have one,
 * with room for a loaded machine), the ledger agrees with what each was told (nothing reported committed is absent,
 * nothing reported failed is present, nothing is there twice), the saturation faults reach the adaptive limit as
 * overload, and every permit and connection comes back.
 */
class PgBouncerFaultsTest {
    private static final Duration DEADLINE = Duration.ofMillis(300);
    private static final long HANG_MILLIS = DEADLINE.toMillis() + 2_000; // a 30 s hang would be far beyond
    private static PgBouncerFaults faults;

    @BeforeAll
    static void throughPgBouncer() {
        var db = TestDatabase.get();
        assumeTrue(
                db.jdbcUrl().contains("127.0.0.1:6432/bulkhead?"),
                "the PgBouncer pass (DB_URL on " + "127.0.0.1:6432/bulkhead)");
        Path pidFile =
                Path.of(System.getenv().getOrDefault("PGBOUNCER_DIR", "/tmp/db-bulkhead-pgbouncer"), "pgbouncer.pid");
        assumeTrue(Files.isReadable(pidFile), "bin/pgbouncer's pid file " + pidFile);
        faults = new PgBouncerFaults(new PgBouncerFaults.Settings(
                db.jdbcUrl(),
                db.user(),
                db.password(),
                "127.0.0.1:6432",
                "bulkhead",
                pidFile,
                List.of("../bin/pgbouncer"),
                8,
                150,
                DEADLINE,
                Duration.ofMillis(800),
                Duration.ofMillis(1_500)));
    }

    private static PgBouncerFaults.Result run(PgBouncerFaults.Fault fault) throws Exception {
        var result = faults.run(fault, "test-" + ProcessHandle.current().pid() + "-" + fault.option());
        PgBouncerFaults.table(List.of(result), DEADLINE).forEach(System.out::println);
        assertThat(result.leaks()).as("permits and connections").isNull();
        assertThat(result.lost())
                .as("reported committed, absent from the ledger")
                .isZero();
        assertThat(result.contradicted())
                .as("reported failed, present in the ledger")
                .isZero();
        assertThat(result.doubled()).as("present twice").isZero();
        assertThat(result.told())
                .as("every outcome is named")
                .doesNotContainKeys("interrupted", "RuntimeException", "IllegalStateException");
        return result;
    }

    @Test
    void killedAndRestarted() throws Exception {
        var r = run(PgBouncerFaults.Fault.KILL);
        assertThat(r.maxWaitMillis()).as("nobody hangs on a dead PgBouncer").isLessThan(HANG_MILLIS);
        assertThat(r.told().keySet())
                .as("told as refusals, deadlines, or lost connections")
                .allMatch(k -> k.startsWith("rejected")
                        || k.startsWith("deadline")
                        || k.startsWith("SQLState 08")
                        || k.equals("outcome unknown"));
        assertThat(r.recoveryMillis()).as("commits again after the restart").isNotNegative();
    }

    @Test
    void pausedThenResumed() throws Exception {
        var r = run(PgBouncerFaults.Fault.PAUSE);
        assertThat(r.maxWaitMillis()).as("deadline rejections, not hangs").isLessThan(HANG_MILLIS);
        assertThat(r.told().keySet())
                .as("the paused callers are told by their deadline")
                .anyMatch(k -> k.startsWith("deadline"));
        assertThat(r.overloadSignals())
                .as("a deadline passed waiting in PgBouncer is overload")
                .isPositive();
        assertThat(r.recoveryMillis()).as("commits again after RESUME").isNotNegative();
    }

    @Test
    void clientLimitReached() throws Exception {
        var r = run(PgBouncerFaults.Fault.MAX_CLIENT_CONN);
        assertThat(r.maxWaitMillis()).isLessThan(HANG_MILLIS);
        assertThat(r.told())
                .as("the pool cannot open a connection: the deadline passes acquiring one")
                .containsKey("deadline connection_acquisition");
        assertThat(r.overloadSignals()).isPositive();
        assertThat(r.recoveryMillis()).isNotNegative();
    }

    @Test
    void queueTimeoutFired() throws Exception {
        var r = run(PgBouncerFaults.Fault.QUERY_WAIT_TIMEOUT);
        long timedOut = r.told().getOrDefault("SQLState 08P01 query_wait_timeout", 0L);
        assertThat(timedOut)
                .as("callers without a deadline are told by PgBouncer's query_wait_timeout")
                .isPositive();
        assertThat(r.overloadSignals())
                .as("each is overload for the adaptive limit")
                .isGreaterThanOrEqualTo(timedOut);
        assertThat(r.recoveryMillis()).isNotNegative();
    }
}
