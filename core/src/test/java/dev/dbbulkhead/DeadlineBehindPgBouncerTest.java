package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.UnpooledDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The deadline bounds the waits in PgBouncer's queue. With every server connection of a PgBouncer pool busy, a
 * client waits in PgBouncer for one, where the server's {@code statement_timeout} cannot help: to log in (a pool
 * opening a connection), and at the first statement of a transaction on a connection already open. The caller gets
 * {@link DeadlineExceededException} shortly after its deadline, in the first case while acquiring the connection
 * (the pool's wait is interrupted), in the second as {@code NO_ANSWER} (the client's network timeout); nothing is
 * committed, and every permit and connection is back. (Before: a 300 ms deadline returned after 2,947 ms, and a
 * transaction on a fresh pool connection even succeeded after 2,973 ms.)
 *
 * <p>Runs in the PgBouncer pass only ({@code bin/pgbouncer}, whose database {@code bulkhead_two} has a pool of 2
 * server connections); the holders keep both for up to 30 s, so a caller that waited for the queue would take that
 * long.
 */
class DeadlineBehindPgBouncerTest {
    private static final Duration DEADLINE = Duration.ofMillis(300);
    private static final long BOUND_MILLIS = DEADLINE.toMillis() + 2_000; // room for a loaded machine; docs/fleet.md

    private final CountDownLatch release = new CountDownLatch(1);
    private Future<?>[] holders;
    private Gate holding;
    private String two;

    @BeforeEach
    void takeBothServerConnections() throws Exception {
        var db = Db.server();
        assumeThat(db.jdbcUrl())
                .as("the PgBouncer pass (DB_URL on 127.0.0.1:6432/bulkhead)")
                .contains("127.0.0.1:6432/bulkhead?");
        two = db.jdbcUrl().replace("/bulkhead?", "/bulkhead_two?");
    }

    /** Both server connections of {@code bulkhead_two}, each in a transaction until {@link #release}. */
    private void hold() throws InterruptedException {
        var db = Db.server();
        var busy = new CountDownLatch(2);
        holding = new Gate();
        holders = new Future<?>[2];
        for (int i = 0; i < 2; i++) {
            holders[i] = holding.submit(() -> {
                try (Connection c = DriverManager.getConnection(two, db.user(), db.password())) {
                    c.setAutoCommit(false);
                    try (var s = c.createStatement()) {
                        s.execute("SELECT 1");
                    }
                    busy.countDown();
                    release.await(30, TimeUnit.SECONDS);
                    c.rollback();
                }
                return null;
            });
        }
        assertThat(busy.await(30, TimeUnit.SECONDS))
                .as("both server connections taken")
                .isTrue();
    }

    @AfterEach
    void releaseThem() throws Exception {
        release.countDown();
        if (holders != null) {
            for (var h : holders) {
                h.get(30, TimeUnit.SECONDS);
            }
            holding.close();
            holders = null;
        }
    }

    @ParameterizedTest
    @EnumSource(Gate.Threads.class)
    void aPoolThatMustOpenAConnectionIsInterruptedAtTheDeadline(Gate.Threads threads) throws Exception {
        var config = Db.server().config(2, Duration.ofSeconds(20));
        config.setJdbcUrl(two);
        try (var pool = new HikariDataSource(config);
                var g = new Gate(threads)) {
            hold(); // the pool has no connection yet: it must log in, and PgBouncer makes it wait
            var gate = DbBulkhead.builder(pool).workload("w", 2, 0).build();
            var e = refusedWithin(g, gate);
            assertThat(e.stage()).isEqualTo(DeadlineExceededException.Stage.CONNECTION_ACQUISITION);
            assertThat(e.getMessage()).contains("while acquiring a connection");
            assertAllBack(gate);
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
            releaseThem(); // before the pool closes: its login still waits in PgBouncer's queue
            int value = gate.transaction(Deadline.in(Duration.ofSeconds(10)), c -> Db.count(c, "SELECT 42"));
            assertThat(value).as("once the queue is gone, the same pool works").isEqualTo(42);
        }
    }

    @ParameterizedTest
    @EnumSource(Gate.Threads.class)
    void aFirstStatementThatWaitsInPgBouncersQueueIsCutAtTheDeadline(Gate.Threads threads) throws Exception {
        var db = Db.server();
        // One connection logged in before PgBouncer's pool fills: its first statement is what waits.
        Connection open = DriverManager.getConnection(two, db.user(), db.password());
        var source = new FaultyDataSource(new UnpooledDataSource(two, db.user(), db.password()) {
            @Override
            public Connection getConnection() {
                return open;
            }
        });
        try (var g = new Gate(threads)) {
            hold();
            var gate =
                    DbBulkhead.builder(source).poolSize(2).workload("w", 2, 0).build();
            var e = refusedWithin(g, gate);
            assertThat(e.stage()).isEqualTo(DeadlineExceededException.Stage.NO_ANSWER);
            assertThat(e.getMessage()).contains("nothing was committed");
            assertAllBack(gate);
            assertThat(source.openConnections()).as("the connection was closed").isZero();
            assertThat(open.isClosed()).isTrue();
        }
    }

    /** The caller's deadline rejection, checked to come after the deadline and long before the queue. */
    private static DeadlineExceededException refusedWithin(Gate g, DbBulkhead gate) {
        long start = System.nanoTime();
        var call = g.submit(() -> gate.transaction(Deadline.in(DEADLINE), c -> Db.count(c, "SELECT 1")));
        var e = Calls.catchRejection(() -> {
            try {
                call.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException failed) {
                throw (Exception) failed.getCause();
            }
        });
        long took = (System.nanoTime() - start) / 1_000_000;
        System.out.println("deadline " + DEADLINE.toMillis() + " ms behind a full PgBouncer pool: refused after " + took
                + " ms: " + e.getMessage());
        assertThat(e).isInstanceOf(DeadlineExceededException.class);
        assertThat(took)
                .as("refused after the deadline, long before the queue")
                .isBetween(DEADLINE.toMillis(), BOUND_MILLIS);
        return (DeadlineExceededException) e;
    }

    private static void assertAllBack(DbBulkhead gate) {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(gate.available()).isEqualTo(2);
            assertThat(gate.availableSlots()).isEqualTo(2);
        });
    }
}
