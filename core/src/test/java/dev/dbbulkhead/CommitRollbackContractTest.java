package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource.Point;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Article points 4 and 5: the transaction the barrier owns, on the real PostgreSQL. */
class CommitRollbackContractTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(3);

    private static HikariDataSource pool() {
        return POOL.get();
    }

    @Test
    void workIsCommittedAndItsValueReturned() throws Exception {
        var gate = POOL.bulkhead(pool(), 2, 1);
        long id = Db.newId();
        int inserted = gate.transaction(Duration.ZERO, c -> Db.insert(c, id));
        assertThat(inserted).isEqualTo(1);
        assertThat(Db.rows(id)).isEqualTo(1);
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void workRunsSynchronouslyOnTheCallersThreadWithAutoCommitOff() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        Thread caller = Thread.currentThread();
        var seen = gate.transaction(Duration.ZERO, c -> List.of(Thread.currentThread() == caller, c.getAutoCommit()));
        assertThat(seen).containsExactly(true, false);
    }

    static Stream<Throwable> workFailures() {
        return Stream.of(
                new SQLException("work failed", "22000"),
                new IllegalStateException("bug in work"),
                new AssertionError("error in work"));
    }

    @ParameterizedTest
    @MethodSource("workFailures")
    void aFailureThrownByWorkRollsBackAndIsRethrownAsIs(Throwable failure) {
        var gate = POOL.bulkhead(pool(), 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    Db.insert(c, id);
                    throw sneaky(failure);
                }))
                .isSameAs(failure);
        assertRolledBack(gate, id);
    }

    /** Throws any throwable from work, whose signature declares only SQLException. */
    @SuppressWarnings("unchecked")
    private static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
        throw (E) t;
    }

    @Test
    void aServerErrorInWorkRollsBackTheWholeTransaction() {
        var gate = POOL.bulkhead(pool(), 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    Db.insert(c, id);
                    return Db.insert(c, id); // duplicate key
                }))
                .isInstanceOf(SQLException.class)
                .extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo("23505");
        assertRolledBack(gate, id);
    }

    @Test
    void aFailingRollbackIsAttachedAsSuppressedToTheOriginal() {
        var faulty = new FaultyDataSource(pool()).fail(Point.ROLLBACK);
        var gate = POOL.bulkhead(faulty, 1, 0);
        long id = Db.newId();
        var failure = new SQLException("work failed");
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    Db.insert(c, id);
                    throw failure;
                }))
                .isSameAs(failure);
        assertThat(failure.getSuppressed()).hasSize(1);
        assertThat(failure.getSuppressed()[0]).hasMessageContaining("injected fault at ROLLBACK");
        assertThat(faulty.injected(Point.ROLLBACK)).isEqualTo(1);
        assertThat(faulty.openConnections()).isZero();
        assertRolledBack(gate, id); // the pool rolls back on close
    }

    @Test
    void permitsAreHeldThroughCommitAndConnectionClose() throws Exception {
        var seen = new ArrayList<String>();
        var gate = new AtomicReference<DbBulkhead>();
        var faulty = new FaultyDataSource(pool())
                .onCall(Point.COMMIT, c -> seen.add("commit " + permits(gate.get())))
                .onCall(Point.CLOSE, c -> seen.add("close " + permits(gate.get())));
        gate.set(POOL.bulkhead(faulty, 2, 3));
        gate.get().transaction(Duration.ZERO, c -> Db.insert(c, Db.newId()));
        assertThat(seen).containsExactly("commit 1/4", "close 1/4");
        assertThat(permits(gate.get())).isEqualTo("2/5");
    }

    @Test
    void permitsAreHeldThroughRollbackAndConnectionClose() {
        var seen = new ArrayList<String>();
        var gate = new AtomicReference<DbBulkhead>();
        var faulty = new FaultyDataSource(pool())
                .onCall(Point.ROLLBACK, c -> seen.add("rollback " + permits(gate.get())))
                .onCall(Point.CLOSE, c -> seen.add("close " + permits(gate.get())));
        gate.set(POOL.bulkhead(faulty, 1, 0));
        assertThatThrownBy(() -> gate.get().transaction(Duration.ZERO, c -> {
                    throw new SQLException("fail");
                }))
                .hasMessage("fail");
        assertThat(seen).containsExactly("rollback 0/0", "close 0/0");
        assertThat(permits(gate.get())).isEqualTo("1/1");
    }

    @Test
    void aFailingSetAutoCommitClosesTheConnectionAndReleasesThePermits() {
        var faulty = new FaultyDataSource(pool()).fail(Point.SET_AUTO_COMMIT);
        var gate = POOL.bulkhead(faulty, 1, 1);
        var ran = new AtomicReference<Boolean>(false);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> ran.getAndSet(true)))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("SET_AUTO_COMMIT");
        assertThat(ran.get()).isFalse();
        assertThat(faulty.openConnections()).isZero();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void theConnectionGoesBackToThePoolWithAutoCommitRestored() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        gate.transaction(Duration.ZERO, c -> Db.insert(c, Db.newId()));
        try (var c = pool().getConnection()) {
            assertThat(c.getAutoCommit()).isTrue();
        }
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    private static String permits(DbBulkhead gate) {
        return gate.available() + "/" + gate.availableSlots();
    }

    private static void assertRolledBack(DbBulkhead gate, long id) {
        try {
            assertThat(Db.rows(id)).as("rows of %d after rollback", id).isZero();
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }
}
