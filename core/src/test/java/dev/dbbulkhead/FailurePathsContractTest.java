package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource.Point;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The article's failure conditions on the real PostgreSQL: cancellation while work runs, server-side statement
 * timeout, pool exhaustion, and connection acquisition, commit and close failures.
 */
class FailurePathsContractTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(4);

    private static HikariDataSource pool() {
        return POOL.get();
    }

    @Test
    void cancellingACallerWhoseWorkRunsReleasesNothingUntilTheWorkEnds() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 1);
        var w = gate.defaultWorkload();
        long id = Db.newId();
        var entered = new CountDownLatch(1);
        var finish = new CountDownLatch(1);
        var interruptSeen = new AtomicBoolean();
        try (var g = new Gate()) {
            Future<Integer> f = g.submit(() -> gate.transaction(Duration.ZERO, c -> {
                int n = Db.insert(c, id);
                entered.countDown();
                // Work that does not stop when its caller gives up, like a JDBC call in flight.
                while (true) {
                    try {
                        if (finish.await(30, TimeUnit.SECONDS)) {
                            break;
                        }
                    } catch (InterruptedException e) {
                        interruptSeen.set(true);
                    }
                }
                return n;
            }));
            assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(f.cancel(true)).isTrue();
            await().atMost(Duration.ofSeconds(10)).untilTrue(interruptSeen);
            assertThat(w.available())
                    .as("the permit stays with the running work")
                    .isZero();
            assertThat(w.availableSlots()).isEqualTo(1);
            assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> 0)).isInstanceOf(QueueTimeoutException.class);
            finish.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> w.available() == 1 && w.availableSlots() == 2);
        }
        assertThat(Db.rows(id)).as("the abandoned work still committed, once").isEqualTo(1);
        Db.assertAllReleased(w, pool());
    }

    @Test
    void aServerSideStatementTimeoutFailsWith57014AndTheNextTransactionWorks() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    try (var s = c.createStatement()) {
                        s.execute("SET LOCAL statement_timeout = '100ms'");
                        s.execute("SELECT pg_sleep(2)");
                    }
                    return null;
                }))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
        Db.assertAllReleased(gate.defaultWorkload(), pool());
        String after = gate.transaction(Duration.ZERO, c -> {
            try (var s = c.createStatement();
                    var r = s.executeQuery("SHOW statement_timeout")) {
                r.next();
                return r.getString(1);
            }
        });
        assertThat(after).as("SET LOCAL ended with the failed transaction").isEqualTo("0");
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void poolExhaustionByACallerOutsideTheBarrierFailsWithSqlExceptionAndRestoresEveryPermit() throws Exception {
        try (var small = Db.pool(1, Duration.ofMillis(250))) {
            var gate = POOL.bulkhead(small, 1, 2);
            var ran = new AtomicBoolean();
            try (Connection outside = small.getConnection()) {
                assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> ran.getAndSet(true)))
                        .isInstanceOf(SQLTransientConnectionException.class);
                assertThat(ran).isFalse();
                assertThat(gate.available()).isEqualTo(1);
                assertThat(gate.availableSlots()).isEqualTo(3);
            }
            String recovered = gate.transaction(Duration.ZERO, c -> "recovered");
            assertThat(recovered).isEqualTo("recovered");
            Db.assertAllReleased(gate.defaultWorkload(), small);
        }
    }

    @Test
    void aGetConnectionSqlExceptionIsRethrownAndRestoresThePermits() {
        var faulty = new FaultyDataSource(pool()).fail(Point.GET_CONNECTION);
        var gate = POOL.bulkhead(faulty, 2, 1);
        var ran = new AtomicBoolean();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> ran.getAndSet(true)))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("GET_CONNECTION");
        assertThat(ran).isFalse();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void aGetConnectionRuntimeExceptionIsRethrownAndRestoresThePermits() {
        DataSource broken = new FaultyDataSource(pool()).onCall(Point.GET_CONNECTION, c -> {
            throw new IllegalStateException("pool is shut down");
        });
        var gate = POOL.bulkhead(broken, 1, 0);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> 1)).hasMessage("pool is shut down");
        assertThat(gate.available()).isEqualTo(1);
        assertThat(gate.availableSlots()).isEqualTo(1);
    }

    @Test
    void aFailedCommitIsReportedAsOutcomeUnknownAndRestoresThePermits() {
        var faulty = new FaultyDataSource(pool()).fail(Point.COMMIT);
        var gate = POOL.bulkhead(faulty, 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> Db.insert(c, id)))
                .isInstanceOf(CommitOutcomeUnknownException.class)
                .hasMessageContaining("may have taken effect")
                .satisfies(e -> assertThat(((CommitOutcomeUnknownException) e).commitAcknowledged())
                        .isFalse())
                .cause()
                .hasMessageContaining("injected fault at COMMIT");
        assertThat(faulty.openConnections()).isZero();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void aLostCommitAcknowledgementIsOutcomeUnknownAndTheWriteIsThere() throws Exception {
        var faulty = new FaultyDataSource(pool()).fail(Point.COMMIT_AFTER);
        var gate = POOL.bulkhead(faulty, 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> Db.insert(c, id)))
                .isInstanceOf(CommitOutcomeUnknownException.class);
        assertThat(Db.rows(id))
                .as("committed although the caller got an exception")
                .isEqualTo(1);
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void aCloseFailureAfterCommitIsOutcomeUnknownWithTheCommitAcknowledged() throws Exception {
        var faulty = new FaultyDataSource(pool()).fail(Point.CLOSE);
        var gate = POOL.bulkhead(faulty, 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> Db.insert(c, id)))
                .isInstanceOf(CommitOutcomeUnknownException.class)
                .satisfies(e -> assertThat(((CommitOutcomeUnknownException) e).commitAcknowledged())
                        .isTrue());
        assertThat(Db.rows(id)).isEqualTo(1);
        assertThat(faulty.openConnections()).isZero();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void aCloseFailureAfterAFailedWorkIsSuppressedUnderTheOriginal() {
        var faulty = new FaultyDataSource(pool()).fail(Point.CLOSE);
        var gate = POOL.bulkhead(faulty, 1, 0);
        var failure = new SQLException("work failed");
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    throw failure;
                }))
                .isSameAs(failure);
        assertThat(failure.getSuppressed())
                .extracting(Throwable::getMessage)
                .containsExactly("injected fault at CLOSE");
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void repeatedFailuresNeverShrinkOrGrowTheBarrier() throws Exception {
        var faulty = new FaultyDataSource(pool(), 42)
                .fail(Point.GET_CONNECTION, 0.2)
                .fail(Point.COMMIT, 0.2)
                .fail(Point.CLOSE, 0.2);
        var gate = POOL.bulkhead(faulty, 2, 2);
        int failures = 0;
        for (int i = 0; i < 200; i++) {
            try {
                gate.transaction(Duration.ZERO, c -> Db.insert(c, Db.newId()));
            } catch (SQLException expected) {
                failures++;
            }
            assertThat(gate.available()).isEqualTo(2);
            assertThat(gate.availableSlots()).isEqualTo(4);
        }
        assertThat(failures).isBetween(40, 160);
        assertThat(faulty.openConnections()).isZero();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }
}
