package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource.Point;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** One deadline bounds the permit wait, the connection acquisition and the statements on the server. */
class DeadlineTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(3);

    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    private static HikariDataSource pool() {
        return POOL.get();
    }

    private DbBulkhead.Builder fakeClock(javax.sql.DataSource source) {
        return DbBulkhead.builder(source).nanoClock(now::get).workload("w", 1, 1);
    }

    private static String show(Connection c, String setting) throws SQLException {
        try (var s = c.createStatement();
                var r = s.executeQuery("SHOW " + setting)) {
            r.next();
            return r.getString(1);
        }
    }

    private static long statementTimeoutMillis(Connection c) throws SQLException {
        try (var s = c.createStatement();
                var r = s.executeQuery("SELECT setting::bigint FROM pg_settings WHERE name = 'statement_timeout'")) {
            r.next();
            return r.getLong(1);
        }
    }

    @Test
    void theStatementTimeoutIsTheRemainingTimeInWholeMillisecondsRoundedUp() throws Exception {
        var gate = POOL.track(fakeClock(pool()).build());
        var deadline = Deadline.atNanoTime(now.get() + 1_500_000_001L); // 1500.000001 ms
        String timeout = gate.transaction(deadline, c -> show(c, "statement_timeout"));
        assertThat(timeout).isEqualTo("1501ms");
    }

    @Test
    void aNearlySpentDeadlineStillSetsAtLeastOneMillisecond() throws Exception {
        var gate = POOL.track(fakeClock(pool()).build());
        String timeout = gate.transaction(Deadline.atNanoTime(now.get() + 1), c -> show(c, "statement_timeout"));
        assertThat(timeout).isEqualTo("1ms");
    }

    @Test
    void theStatementTimeoutFollowsTheRealClockToo() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        long timeout = gate.transaction(Deadline.in(Duration.ofSeconds(5)), DeadlineTest::statementTimeoutMillis);
        assertThat(timeout).isBetween(1L, 5000L);
        long atInstant =
                gate.transaction(Deadline.at(Instant.now().plusSeconds(3)), DeadlineTest::statementTimeoutMillis);
        assertThat(atInstant).isBetween(1L, 3000L);
    }

    @Test
    void lockTimeoutIsSetToo_whenAskedFor() throws Exception {
        var gate = POOL.track(fakeClock(pool()).lockTimeoutFromDeadline(true).build());
        var deadline = Deadline.atNanoTime(now.get() + 250_000_000L);
        String both = gate.transaction(deadline, c -> show(c, "statement_timeout") + "/" + show(c, "lock_timeout"));
        assertThat(both).isEqualTo("250ms/250ms");
    }

    @Test
    void statementTimeoutsCanBeTurnedOff() throws Exception {
        var gate =
                POOL.track(fakeClock(pool()).statementTimeoutFromDeadline(false).build());
        String timeout =
                gate.transaction(Deadline.atNanoTime(now.get() + 250_000_000L), c -> show(c, "statement_timeout"));
        assertThat(timeout).isEqualTo("0");
    }

    @Test
    void aServerTimeoutFromTheDeadlineStopsASlowStatementAndTheNextTransactionIsUnbounded() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Deadline.in(Duration.ofMillis(200)), c -> {
                    Db.insert(c, id);
                    try (var s = c.createStatement()) {
                        s.execute("SELECT pg_sleep(3)");
                    }
                    return null;
                }))
                .isInstanceOfSatisfying(DeadlineExceededException.class, e -> {
                    assertThat(e.stage()).isEqualTo(DeadlineExceededException.Stage.STATEMENT);
                    assertThat(e.getMessage()).contains("in a statement");
                    assertThat(e.getCause())
                            .isInstanceOfSatisfying(
                                    SQLException.class,
                                    cause -> assertThat(cause.getSQLState()).isEqualTo("57014"));
                });
        assertThat(Db.rows(id)).as("rolled back").isZero();
        String after = gate.transaction(Duration.ZERO, c -> show(c, "statement_timeout"));
        assertThat(after).isEqualTo("0");
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void aDeadlineAlreadyPassedRejectsBeforeAnyPermitIsTaken() {
        var probe = new FaultyDataSource(pool());
        var gate = POOL.track(fakeClock(probe).build());
        var ran = new AtomicBoolean();
        var e = Calls.catchRejection(
                () -> gate.transaction(Deadline.atNanoTime(now.get() - 5_000), c -> ran.getAndSet(true)));
        assertThat(e).isInstanceOf(DeadlineExceededException.class);
        var d = (DeadlineExceededException) e;
        assertThat(d.stage()).isEqualTo(DeadlineExceededException.Stage.BEFORE_ADMISSION);
        assertThat(d.overdueNanos()).isEqualTo(5_000);
        assertThat(d.getMessage()).contains("deadline exceeded before admission, 0.005 ms overdue");
        assertThat(ran).isFalse();
        assertThat(probe.openConnections()).isZero();
        assertThat(gate.available()).isEqualTo(1);
        assertThat(gate.availableSlots()).isEqualTo(2);
    }

    @Test
    void aDeadlineThatExpiresDuringThePermitWaitRejectsAtAboutTheDeadline() throws Exception {
        var gate = POOL.bulkhead(1, 1);
        try (var g = new Gate()) {
            g.hold(gate.defaultWorkload(), 1);
            long start = System.nanoTime();
            var e = Calls.catchRejection(() -> gate.transaction(
                    TransactionOptions.deadline(Deadline.in(Duration.ofMillis(150)))
                            .withQueueWait(Duration.ofSeconds(20)),
                    c -> 1));
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertThat(e).isInstanceOf(DeadlineExceededException.class);
            assertThat(((DeadlineExceededException) e).stage()).isEqualTo(DeadlineExceededException.Stage.PERMIT_WAIT);
            assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(140)).isLessThan(Duration.ofSeconds(10));
            assertThat(gate.availableSlots()).isEqualTo(1);
        }
    }

    @Test
    void aQueueWaitShorterThanTheDeadlineIsAQueueTimeout() throws Exception {
        var gate = POOL.bulkhead(1, 1);
        try (var g = new Gate()) {
            g.hold(gate.defaultWorkload(), 1);
            var e = Calls.catchRejection(() -> gate.transaction(
                    TransactionOptions.queueWait(Duration.ofMillis(20))
                            .withDeadline(Deadline.in(Duration.ofSeconds(20))),
                    c -> 1));
            assertThat(e).isInstanceOf(QueueTimeoutException.class);
        }
    }

    @Test
    void aDeadlinePassedOnceTheConnectionIsInHandReleasesEverythingBeforeWorkRuns() {
        var probe = new FaultyDataSource(pool()).onCall(Point.GET_CONNECTION, c -> now.addAndGet(2_000_000_000L));
        var gate = POOL.track(fakeClock(probe).build());
        var ran = new AtomicBoolean();
        var e = Calls.catchRejection(
                () -> gate.transaction(Deadline.atNanoTime(now.get() + 1_000_000_000L), c -> ran.getAndSet(true)));
        assertThat(e).isInstanceOf(DeadlineExceededException.class);
        assertThat(((DeadlineExceededException) e).stage())
                .isEqualTo(DeadlineExceededException.Stage.CONNECTION_ACQUISITION);
        assertThat(e.getMessage())
                .contains("while acquiring a connection from the pool, 1000.000 ms overdue "
                        + "(1000.000 ms were left when admission began)");
        assertThat(ran).isFalse();
        assertThat(probe.openConnections()).isZero();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    /**
     * A pool drained by callers outside the barrier makes getConnection() wait up to its own connectionTimeout (here
     * 10 s; HikariCP cannot go below 250 ms): the deadline cuts that wait short, and the caller's interrupt status is
     * untouched.
     */
    @ParameterizedTest
    @EnumSource(Gate.Threads.class)
    void theDeadlineBoundsThePoolsOwnWaitForAConnection(Gate.Threads threads) throws Exception {
        try (var pool = Db.pool(1, Duration.ofSeconds(10));
                var g = new Gate(threads);
                Connection outside = pool.getConnection()) { // the only connection, taken outside the barrier
            var gate = POOL.track(DbBulkhead.builder(pool).workload("w", 1, 0).build());
            long start = System.nanoTime();
            var call = g.submit(() -> {
                try {
                    return gate.transaction(Deadline.in(Duration.ofMillis(200)), c -> 1);
                } finally {
                    assertThat(Thread.currentThread().isInterrupted())
                            .as("no interrupt left behind")
                            .isFalse();
                }
            });
            var e = Calls.catchRejection(() -> {
                try {
                    call.get(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException failed) {
                    throw (Exception) failed.getCause();
                }
            });
            long tookMillis = (System.nanoTime() - start) / 1_000_000;
            assertThat(e)
                    .isInstanceOfSatisfying(
                            DeadlineExceededException.class,
                            d -> assertThat(d.stage())
                                    .isEqualTo(DeadlineExceededException.Stage.CONNECTION_ACQUISITION));
            assertThat(tookMillis)
                    .as("bounded by the deadline, not the pool's 10 s")
                    .isBetween(200L, 5_000L);
            assertThat(gate.available()).isEqualTo(1);
            assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                    .as("only the one outside")
                    .isEqualTo(1);
        }
    }

    @Test
    void badDeadlineArgumentsAreNamed() {
        var gate = POOL.bulkhead(1, 0);
        assertThatThrownBy(() -> gate.transaction((Deadline) null, c -> 1))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("deadline must not be null");
        assertThatThrownBy(() -> gate.transaction((TransactionOptions) null, c -> 1))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("options must not be null");
        assertThatThrownBy(() -> Deadline.in(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("timeout must not be null");
        assertThatThrownBy(() -> TransactionOptions.queueWait(Duration.ofMillis(-2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("queueWait must not be negative, was PT-0.002S");
        assertThatThrownBy(() -> TransactionOptions.deadline(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("deadline must not be null");
    }
}
