package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.TransactionOptions.Isolation;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource.Point;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The barrier owns the transaction: what work may not do, and what happens when it tries. */
class GuardRailsTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(3);

    private static HikariDataSource pool() {
        return POOL.get();
    }

    @ParameterizedTest
    @ValueSource(strings = {"commit", "rollback", "setAutoCommit", "close"})
    void workCannotEndTheTransactionItself(String call) throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    Db.insert(c, id);
                    switch (call) {
                        case "commit" -> c.commit();
                        case "rollback" -> c.rollback();
                        case "setAutoCommit" -> c.setAutoCommit(true);
                        default -> c.close();
                    }
                    return null;
                }))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("db-bulkhead owns this transaction: work must not call " + call)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25000"));
        assertThat(Db.rows(id))
                .as("the refused call ended nothing; the failure rolled back")
                .isZero();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void savepointsAndRollingBackToOneStayAllowed() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        long kept = Db.newId();
        long undone = Db.newId();
        gate.transaction(Duration.ZERO, c -> {
            Db.insert(c, kept);
            var savepoint = c.setSavepoint();
            Db.insert(c, undone);
            c.rollback(savepoint);
            return null;
        });
        assertThat(Db.rows(kept)).isEqualTo(1);
        assertThat(Db.rows(undone)).isZero();
    }

    @Test
    void theConnectionFailsClearlyOnceTransactionHasReturned() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        var kept = new AtomicReference<Connection>();
        gate.transaction(Duration.ZERO, c -> {
            kept.set(c);
            return null;
        });
        assertThatThrownBy(() -> kept.get().createStatement())
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("transaction that has finished");
        assertThat(kept.get().isClosed()).isTrue();
    }

    static List<SqlWork<?>> escaping() {
        return List.of(
                c -> c,
                Connection::createStatement,
                c -> c.createStatement().executeQuery("SELECT 1"),
                c -> Stream.of(1),
                c -> IntStream.range(0, 3));
    }

    @Test
    void workReturningAJdbcResourceOrAStreamIsRolledBackWithAnExplanation() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        var names = new ArrayList<String>();
        for (var escape : escaping()) {
            long id = Db.newId();
            assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                        Db.insert(c, id);
                        return escape.run(c);
                    }))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("would escape the barrier")
                    .hasMessageContaining("the transaction was rolled back")
                    .satisfies(e -> names.add(e.getMessage().split(" ")[3]));
            assertThat(Db.rows(id)).isZero();
        }
        assertThat(names).hasSize(5);
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void reEnteringTheSameWorkloadFromItsOwnWorkFailsAtOnceInsteadOfDeadlocking() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        long id = Db.newId();
        var inner = new AtomicReference<Throwable>();
        gate.transaction(Duration.ZERO, c -> {
            try {
                gate.transaction(Duration.ofSeconds(30), c2 -> 1);
            } catch (IllegalStateException | InterruptedException e) {
                inner.set(e);
            }
            return Db.insert(c, id);
        });
        assertThat(inner.get())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("re-entered on a thread that already holds one of its permits")
                .hasMessageContaining("'default' -> 'default'");
        assertThat(Db.rows(id))
                .as("the outer transaction went on and committed")
                .isEqualTo(1);
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void reEnteringAnotherWorkloadOfTheSameBarrierFailsToo() throws Exception {
        var gate = POOL.track(DbBulkhead.builder(pool())
                .workload("interactive", 1, 0)
                .workload("batch", 1, 0)
                .build());
        assertThatThrownBy(() -> gate.workload("interactive")
                        .transaction(Duration.ZERO, c -> nested(gate.workload("batch"), c2 -> 1)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("'interactive' -> 'batch'");
        Db.assertAllReleased(gate.workload("batch"), pool());
        Db.assertAllReleased(gate.workload("interactive"), pool());
    }

    @Test
    void anotherBarrierMayBeCalledFromWork() throws Exception {
        var first = POOL.bulkhead(pool(), 1, 0);
        var second = POOL.bulkhead(pool(), 1, 0);
        int value = first.transaction(Duration.ZERO, c -> nested(second.defaultWorkload(), c2 -> 5));
        assertThat(value).isEqualTo(5);
    }

    @Test
    void readOnlyAndIsolationApplyInsideAndAreRestoredBeforeTheConnectionGoesBack() throws Exception {
        var atClose = new ArrayList<String>();
        var probe = new FaultyDataSource(pool()).onCall(Point.CLOSE, c -> {
            try {
                atClose.add(c.isReadOnly() + "/" + c.getTransactionIsolation() + "/" + c.getAutoCommit());
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        var gate = POOL.bulkhead(probe, 1, 0);
        String inside = gate.transaction(
                TransactionOptions.queueWait(Duration.ZERO).readOnly().isolation(Isolation.SERIALIZABLE), c -> {
                    try (var s = c.createStatement();
                            var r = s.executeQuery("SELECT current_setting('transaction_read_only') || '/' "
                                    + "|| current_setting('transaction_isolation') || '/' "
                                    + "|| current_setting('default_transaction_read_only') || '/' "
                                    + "|| current_setting('default_transaction_isolation')")) {
                        r.next();
                        return r.getString(1);
                    }
                });
        // This transaction only (SET TRANSACTION), never the session's defaults: behind a transaction-pooling PgBouncer
        // a session change would land on another server connection (docs/fleet.md).
        assertThat(inside).isEqualTo("on/serializable/off/read committed");
        assertThat(atClose).containsExactly("false/" + Connection.TRANSACTION_READ_COMMITTED + "/true");
    }

    @Test
    void aWriteInAReadOnlyTransactionFailsAndRollsBack() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(
                        TransactionOptions.queueWait(Duration.ZERO).readOnly(), c -> Db.insert(c, id)))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25006"));
        assertThat(Db.rows(id)).isZero();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    /** A transaction called from inside another one's work. */
    private static <T> T nested(Workload w, SqlWork<T> work) throws SQLException {
        try {
            return w.transaction(Duration.ZERO, work);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException(e);
        }
    }
}
