package dev.dbbulkhead.tools.overload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A fault during a measurement (the server refusing a connection, a pool timeout) is one failed operation, counted and
 * shown in the report, never the end of the run or of its scenario: faults injected at the pool on the real server.
 */
class CapacityFaultsTest {
    /** A short wait: each operation sleeps this long on the server. */
    private static final CapacityScenario.Work WORK = new CapacityScenario.Work(CapacityScenario.S6_BURST, 0, 0, 2);

    private static HikariDataSource pool;

    @BeforeAll
    static void open() {
        pool = TestDatabase.get().pool(4, Duration.ofSeconds(10));
    }

    @AfterAll
    static void close() {
        pool.close();
    }

    private static FaultyDataSource refusing(double probability, long seed) {
        return new FaultyDataSource(pool, seed)
                .fail(
                        FaultyDataSource.Point.GET_CONNECTION,
                        () -> new SQLException("injected: too many clients", "53300"))
                .fail(FaultyDataSource.Point.GET_CONNECTION, probability); // after the fault, which sets 1
    }

    @Test
    void serverErrorsAreCountedAndReportedThroughEveryKindOfGate() throws Exception {
        for (var kind :
                List.of(CapacityGates.Kind.POOL_ONLY, CapacityGates.Kind.FIXED, CapacityGates.Kind.RECOMMENDED)) {
            var faulty = refusing(0.3, 7);
            var gate = CapacityGates.of(new CapacityGates.Config(kind, 4), faulty, 4, 1_000, WORK);

            var run = CapacityRun.run(gate, WORK, 100, 1.0, TimeUnit.SECONDS.toNanos(1), 11);

            int injected = faulty.injected(FaultyDataSource.Point.GET_CONNECTION);
            assertThat(injected).as(kind.label).isPositive();
            assertThat(run.count(CapacityRun.Result.OTHER)).as(kind.label).isEqualTo(injected);
            assertThat(run.count(CapacityRun.Result.IN_SLO)).as(kind.label).isPositive();
            assertThat(run.firstFailure()).as(kind.label).contains("injected: too many clients");
            assertThat(CapacityStats.failures(List.of(run)))
                    .as(kind.label)
                    .isEqualTo(injected + " (" + run.firstFailure() + ")");
        }
    }

    @Test
    void poolTimeoutsAreCountedAsAdmittedThenTimedOut() throws Exception {
        var faulty = new FaultyDataSource(pool, 3)
                .fail(
                        FaultyDataSource.Point.GET_CONNECTION,
                        () -> new SQLTransientConnectionException("injected: timed out"))
                .fail(FaultyDataSource.Point.GET_CONNECTION, 0.25);
        var gate = CapacityGates.of(new CapacityGates.Config(CapacityGates.Kind.POOL_ONLY, 4), faulty, 4, 1_000, WORK);

        var run = CapacityRun.run(gate, WORK, 100, 1.0, TimeUnit.SECONDS.toNanos(1), 5);

        assertThat(run.count(CapacityRun.Result.WASTED))
                .isEqualTo(faulty.injected(FaultyDataSource.Point.GET_CONNECTION));
        assertThat(run.count(CapacityRun.Result.OTHER)).isZero();
        assertThat(CapacityStats.failures(List.of(run))).isEqualTo("0");
    }

    @Test
    void theTwoWorkloadsTableSaysWhatFailed() throws Exception {
        var faulty = refusing(0.3, 13);
        var gate = CapacityGates.of(new CapacityGates.Config(CapacityGates.Kind.POOL_ONLY, 4), faulty, 4, 1_000, WORK);
        var clean = CapacityGates.of(new CapacityGates.Config(CapacityGates.Kind.POOL_ONLY, 4), pool, 4, 1_000, WORK);
        var alone = CapacityRun.run(clean, WORK, 50, 0.5, TimeUnit.SECONDS.toNanos(1), 1);
        var batch = CapacityRun.run(gate, WORK, 50, 0.5, TimeUnit.SECONDS.toNanos(1), 2);
        var run = new TwoWorkloads.Run(alone, alone, batch);

        assertThat(TwoWorkloads.failures(List.of(List.of(run))))
                .contains("interactive 0, batch " + batch.count(CapacityRun.Result.OTHER))
                .contains("injected: too many clients");
        assertThat(TwoWorkloads.failures(List.of(List.of(new TwoWorkloads.Run(alone, alone, alone)))))
                .isEmpty();
    }

    @Test
    void theMeasurementsBeforeARunTryAgainAfterAFault() throws Exception {
        var sometimes = refusing(0.4, 17);
        assertThat(Barriers.medianNanos(sometimes, WORK.sql(0, 0), 15)).isPositive();
        assertThat(sometimes.injected(FaultyDataSource.Point.GET_CONNECTION)).isPositive();
        assertThat(Barriers.closedLoopRate(sometimes, WORK, 4, 0.3)).isPositive();

        var always = refusing(1.0, 19);
        assertThatThrownBy(() -> Barriers.medianNanos(always, WORK.sql(0, 0), 3))
                .hasMessageContaining("injected: too many clients");
        assertThat(always.injected(FaultyDataSource.Point.GET_CONNECTION)).isEqualTo(4);
        assertThatThrownBy(() -> Barriers.closedLoopRate(always, WORK, 2, 0.1))
                .hasMessageContaining("injected: too many clients");
    }
}
