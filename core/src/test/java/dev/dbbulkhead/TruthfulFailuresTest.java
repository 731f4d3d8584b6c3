package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.TransactionOptions.Isolation;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource.Point;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Failure paths that must tell the truth, each seen to go wrong once: what the caller is told is what happened in
 * the database, and every permit and connection comes back (checked after each test by {@link BarrierExtension}).
 */
class TruthfulFailuresTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(3);

    @BeforeAll
    static void tables() throws SQLException {
        Db.execute("CREATE TABLE deferred_keys (k bigint UNIQUE DEFERRABLE INITIALLY DEFERRED)");
        Db.execute("CREATE TABLE on_call (doctor text PRIMARY KEY, on_call boolean NOT NULL)");
    }

    @AfterAll
    static void dropTables() throws SQLException {
        Db.execute("DROP TABLE deferred_keys, on_call");
    }

    /** Records each operation's outcome. */
    static final class Outcomes implements BulkheadListener {
        final List<Outcome> seen = new CopyOnWriteArrayList<>();

        @Override
        public void onFinished(Workload w, Outcome outcome, long permitWait, long poolWait, long hold, long work) {
            seen.add(outcome);
        }
    }

    private static DbBulkhead recorded(DataSource source, Outcomes outcomes, int concurrent) {
        return POOL.track(DbBulkhead.builder(source)
                .listener(outcomes)
                .workload("w", concurrent, 0)
                .build());
    }

    // --- The commit rule: a commit the server refused is a rollback, told as the driver's exception. ---

    @Test
    void aDeferredUniqueViolationAtCommitIsTheDriversExceptionAndARollback() throws Exception {
        var outcomes = new Outcomes();
        var gate = recorded(POOL.get(), outcomes, 1);
        long key = Db.newId();
        long id = Db.newId();
        gate.transaction(Duration.ZERO, c -> Db.update(c, "INSERT INTO deferred_keys VALUES (" + key + ")"));
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    Db.insert(c, id);
                    return Db.update(c, "INSERT INTO deferred_keys VALUES (" + key + ")"); // fails only at commit
                }))
                .isInstanceOf(SQLException.class)
                .isNotInstanceOf(CommitOutcomeUnknownException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("23505"));
        assertThat(outcomes.seen).containsExactly(Outcome.COMMITTED, Outcome.ROLLED_BACK);
        assertThat(Db.rows(id)).as("rolled back with the refused commit").isZero();
    }

    // --- A failed statement aborts a PostgreSQL transaction: work that catches it and goes on committed nothing. ---

    @Test
    void workThatSwallowsADuplicateKeyIsToldThatNothingWasCommitted() throws Exception {
        var outcomes = new Outcomes();
        var gate = recorded(POOL.get(), outcomes, 1);
        long key = Db.newId();
        long id = Db.newId();
        gate.transaction(Duration.ZERO, c -> Db.update(c, "INSERT INTO on_call VALUES ('dr " + key + "', true)"));
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    Db.insert(c, id);
                    try {
                        Db.update(
                                c, "INSERT INTO on_call VALUES ('dr " + key + "', true)"); // 23505, caught: "ignore it"
                    } catch (SQLException duplicate) {
                        assertThat(duplicate.getSQLState()).isEqualTo("23505");
                    }
                    return 1;
                }))
                .isInstanceOf(SQLException.class)
                .isNotInstanceOf(CommitOutcomeUnknownException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25P02"))
                .hasMessageContaining("nothing was committed");
        assertThat(outcomes.seen).containsExactly(Outcome.COMMITTED, Outcome.ROLLED_BACK);
        assertThat(Db.rows(id))
                .as("PostgreSQL rolled the aborted transaction back")
                .isZero();
    }

    @Test
    void workThatSwallowsADivisionByZeroIsToldTheSameOnAVirtualThread() throws Exception {
        var outcomes = new Outcomes();
        var gate = recorded(POOL.get(), outcomes, 1);
        long id = Db.newId();
        try (var executor = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            var result = executor.submit(() -> gate.transaction(Duration.ZERO, c -> {
                Db.insert(c, id);
                try {
                    Db.count(c, "SELECT 1 / 0"); // 22012
                } catch (SQLException swallowed) {
                    // ignored on purpose
                }
                return 1;
            }));
            assertThatThrownBy(result::get)
                    .hasCauseInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e.getCause()).getSQLState())
                            .isEqualTo("25P02"));
        }
        assertThat(outcomes.seen).containsExactly(Outcome.ROLLED_BACK);
        assertThat(Db.rows(id)).isZero();
    }

    @Test
    void workThatRollsBackToASavepointAfterAFailureStillCommitsAndSaysSo() throws Exception {
        var outcomes = new Outcomes();
        var gate = recorded(POOL.get(), outcomes, 1);
        long id = Db.newId();
        long other = Db.newId();
        int value = gate.transaction(Duration.ZERO, c -> {
            Db.insert(c, id);
            var savepoint = c.setSavepoint();
            try {
                Db.count(c, "SELECT 1 / 0");
            } catch (SQLException repaired) {
                c.rollback(savepoint); // the failure is undone: the transaction goes on
            }
            Db.insert(c, other);
            return 7;
        });
        assertThat(value).isEqualTo(7);
        assertThat(outcomes.seen).containsExactly(Outcome.COMMITTED);
        assertThat(Db.rows(id) + Db.rows(other)).isEqualTo(2);
    }

    @Test
    void aFailureOnAnotherConnectionDoesNotTaintThisTransaction() throws Exception {
        var outcomes = new Outcomes();
        var gate = recorded(POOL.get(), outcomes, 1);
        long id = Db.newId();
        try (var elsewhere = Db.server().connect()) {
            elsewhere.setAutoCommit(false);
            assertThatThrownBy(() -> Db.count(elsewhere, "SELECT 1 / 0")).isInstanceOf(SQLException.class);
            gate.transaction(Duration.ZERO, c -> Db.insert(c, id)); // its own transaction is not aborted
            elsewhere.rollback();
        }
        assertThat(outcomes.seen).containsExactly(Outcome.COMMITTED);
        assertThat(Db.rows(id)).isEqualTo(1);
    }

    @Test
    void aSerializableWriteSkewFailsOneSideWithTheDriversSerializationFailure() throws Exception {
        Db.execute("DELETE FROM on_call");
        Db.execute("INSERT INTO on_call VALUES ('alice', true), ('bob', true)");
        var outcomes = new Outcomes();
        var gate = recorded(POOL.get(), outcomes, 2);
        var read = new CyclicBarrier(2);
        var written = new CyclicBarrier(2);
        var serializable = TransactionOptions.queueWait(Duration.ZERO).isolation(Isolation.SERIALIZABLE);
        try (var g = new Gate()) {
            var sides = List.of("alice", "bob").stream()
                    .map(doctor -> g.submit(() -> gate.transaction(serializable, c -> {
                        int onCall = Db.count(c, "SELECT count(*) FROM on_call WHERE on_call");
                        await(read);
                        Db.update(c, "UPDATE on_call SET on_call = false WHERE doctor = '" + doctor + "'");
                        await(written); // both wrote before either commits: the conflict shows at commit
                        return onCall;
                    })))
                    .toList();
            int committed = 0;
            for (Future<Integer> side : sides) {
                try {
                    assertThat(side.get(30, TimeUnit.SECONDS)).isEqualTo(2);
                    committed++;
                } catch (ExecutionException e) {
                    assertThat(e.getCause())
                            .isInstanceOf(SQLException.class)
                            .isNotInstanceOf(CommitOutcomeUnknownException.class)
                            .satisfies(f ->
                                    assertThat(((SQLException) f).getSQLState()).isEqualTo("40001"));
                }
            }
            assertThat(committed).isEqualTo(1);
        }
        assertThat(outcomes.seen).containsExactlyInAnyOrder(Outcome.COMMITTED, Outcome.ROLLED_BACK);
        assertThat(Db.count("SELECT count(*) FROM on_call WHERE on_call"))
                .as("exactly one write took effect")
                .isEqualTo(1);
    }

    @Test
    void aCommitFailureOnALostConnectionIsStillOutcomeUnknown() throws Exception {
        var outcomes = new Outcomes();
        var gate = recorded(new FaultyDataSource(POOL.get()).fail(Point.COMMIT_AFTER), outcomes, 1);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> Db.insert(c, id)))
                .isInstanceOf(CommitOutcomeUnknownException.class);
        assertThat(outcomes.seen).containsExactly(Outcome.OUTCOME_UNKNOWN);
        assertThat(Db.rows(id)).as("it did commit: 'unknown' was the truth").isEqualTo(1);
    }

    // --- Interrupts: an interrupt during work must not break commit and cleanup, and is kept. ---

    @Test
    void aVirtualThreadInterruptedDuringWorkCommitsKeepsItsConnectionAndItsInterrupt() throws Exception {
        try (HikariDataSource one = Db.pool(1)) {
            var outcomes = new Outcomes();
            var gate = POOL.track(DbBulkhead.builder(one)
                    .listener(outcomes)
                    .workload("w", 1, 0)
                    .build());
            int backend = gate.transaction(Duration.ZERO, TruthfulFailuresTest::backendPid);
            long id = Db.newId();
            try (var g = new Gate(Gate.Threads.VIRTUAL)) {
                Future<String> f = g.submit(() -> {
                    int used = gate.transaction(Duration.ZERO, c -> {
                        Db.insert(c, id);
                        int pid = backendPid(c);
                        Thread.currentThread().interrupt(); // e.g. a timeout fired by the caller's framework
                        return pid;
                    });
                    return used + "/" + Thread.currentThread().isInterrupted();
                });
                assertThat(f.get(30, TimeUnit.SECONDS))
                        .as("same backend, interrupt still set")
                        .isEqualTo(backend + "/true");
            }
            assertThat(Db.rows(id)).isEqualTo(1);
            assertThat(outcomes.seen).containsExactly(Outcome.COMMITTED, Outcome.COMMITTED);
            assertThat(gate.transaction(Duration.ZERO, TruthfulFailuresTest::backendPid))
                    .as("the pool's connection survived")
                    .isEqualTo(backend);
            assertThat(one.getHikariPoolMXBean().getActiveConnections()).isZero();
        }
    }

    // --- Errors in cleanup: close runs whatever happened before it. ---

    @Test
    void anErrorWhileRestoringSettingsStillClosesAndSaysTheCommitTookEffect() throws Exception {
        var faulty = failingWhileRestoring(() -> new AssertionError("injected while restoring auto-commit"));
        var gate = POOL.bulkhead(faulty, 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> Db.insert(c, id)))
                .isInstanceOfSatisfying(
                        CommitOutcomeUnknownException.class,
                        e -> assertThat(e.commitAcknowledged()).isTrue())
                .cause()
                .isInstanceOf(AssertionError.class);
        assertThat(Db.rows(id)).isEqualTo(1);
        assertThat(faulty.openConnections()).as("closed after all").isZero();
    }

    @Test
    void anOutOfMemoryErrorWhileRestoringPropagatesAfterClosingAndCarriesTheCommit() throws Exception {
        var faulty = failingWhileRestoring(() -> new OutOfMemoryError("injected while restoring auto-commit"));
        var gate = POOL.bulkhead(faulty, 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> Db.insert(c, id)))
                .isInstanceOf(OutOfMemoryError.class)
                .satisfies(e -> assertThat(e.getSuppressed())
                        .singleElement()
                        .isInstanceOfSatisfying(
                                CommitOutcomeUnknownException.class,
                                u -> assertThat(u.commitAcknowledged()).isTrue()));
        assertThat(Db.rows(id)).isEqualTo(1);
        assertThat(faulty.openConnections()).isZero();
    }

    @Test
    void aStackOverflowFromCloseAfterCommitLeaksNothing() throws Exception {
        var faulty = new FaultyDataSource(POOL.get()).fail(Point.CLOSE, StackOverflowError::new);
        var gate = POOL.bulkhead(faulty, 1, 0);
        long id = Db.newId();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> Db.insert(c, id)))
                .isInstanceOf(StackOverflowError.class)
                .satisfies(e -> assertThat(e.getSuppressed())
                        .singleElement()
                        .isInstanceOf(CommitOutcomeUnknownException.class));
        assertThat(Db.rows(id)).isEqualTo(1);
        assertThat(faulty.openConnections()).isZero();
    }

    /** The pool, with {@code error} thrown when the barrier restores auto-commit after the transaction. */
    private static FaultyDataSource failingWhileRestoring(Supplier<Error> error) {
        return new FaultyDataSource(POOL.get()).onCall(Point.SET_AUTO_COMMIT, c -> {
            try {
                if (!c.getAutoCommit()) {
                    throw error.get();
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    // --- Listeners: nothing they throw changes what the caller is told once the transaction committed. ---

    @Test
    void aListenerThrowingSneakyCheckedExceptionsOrErrorsAfterCommitChangesNothing() throws Exception {
        var hostile = new BulkheadListener() {
            @Override
            public void onConnectionAcquired(Workload w, long poolWait) {
                throw FaultyDataSource.<RuntimeException>sneaky(new IOException("sneaky checked"));
            }

            @Override
            public void onFinished(Workload w, Outcome outcome, long permitWait, long poolWait, long hold, long work) {
                throw new OutOfMemoryError("listener out of memory");
            }
        };
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .listener(hostile)
                .workload("w", 1, 0)
                .build());
        long id = Db.newId();
        int inserted = gate.transaction(Duration.ZERO, c -> Db.insert(c, id));
        assertThat(inserted).isEqualTo(1);
        assertThat(Db.rows(id)).isEqualTo(1);
        try (Lease lease = gate.acquire(Duration.ZERO)) {
            assertThat(lease.workload().executing()).isEqualTo(1);
        } // onFinished(RELEASED) throws: contained too
    }

    // --- Deadlines. ---

    @Test
    void farDeadlinesJustWorkAndCapTheStatementTimeoutAtPostgresqlsMaximum() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        for (Deadline far : List.of(
                Deadline.in(Duration.ofDays(30)),
                Deadline.in(Duration.ofNanos(Long.MAX_VALUE)),
                Deadline.at(Instant.MAX),
                Deadline.in(Duration.ofSeconds(Long.MAX_VALUE)))) {
            long millis = gate.transaction(
                    far,
                    c -> Db.count(c, "SELECT setting::bigint FROM pg_settings " + "WHERE name = 'statement_timeout'"));
            assertThat(millis).as("%s", far).isEqualTo(Integer.MAX_VALUE);
            try (Lease lease = gate.acquire(far)) {
                assertThat(lease.deadline()).contains(far);
            }
        }
    }

    /**
     * A deadline in the far past ({@code Instant.MIN}, {@code Long.MIN_VALUE} nanoseconds) is long passed, not in the
     * future by an overflow: refused before admission, with a message that says so, even with a permit free.
     */
    @Test
    void aDeadlineInTheFarPastIsRefusedBeforeAdmissionAndSaysSo() {
        var gate = POOL.bulkhead(1, 0);
        for (Deadline past : List.of(Deadline.at(Instant.MIN), Deadline.atNanoTime(Long.MIN_VALUE))) {
            assertThatThrownBy(() -> gate.transaction(past, c -> 1))
                    .as("%s", past)
                    .isInstanceOfSatisfying(DeadlineExceededException.class, e -> {
                        assertThat(e.stage()).isEqualTo(DeadlineExceededException.Stage.BEFORE_ADMISSION);
                        assertThat(e.overdueNanos()).isEqualTo(Long.MAX_VALUE);
                        assertThat(e.getMessage()).contains("far past").doesNotContain("0.000 ms overdue");
                    });
            assertThatThrownBy(() -> gate.acquire(past)).isInstanceOf(DeadlineExceededException.class);
        }
        assertThat(gate.available()).isEqualTo(1);
    }

    /**
     * Session state set by the pool ({@code connectionInitSql}): behind PgBouncer's transaction pooling it would stay
     * on a shared server connection and reach other clients' transactions, so the PgBouncer pass leaves it out
     * ({@code docs/fleet.md}).
     */
    @Test
    @Tag("session-state")
    void aStricterSessionStatementTimeoutIsKeptAndItsCancellationIsTheDriversException() throws Exception {
        try (HikariDataSource strict = poolWithInitSql("SET statement_timeout = 150; SET lock_timeout = 120")) {
            var gate = POOL.track(DbBulkhead.builder(strict)
                    .lockTimeoutFromDeadline(true)
                    .workload("w", 1, 0)
                    .build());
            var deadline = Deadline.in(Duration.ofSeconds(20));
            String inside = gate.transaction(
                    deadline,
                    c -> Db.text(
                            c,
                            "SELECT current_setting('statement_timeout')"
                                    + " || '/' || current_setting('lock_timeout')"));
            assertThat(inside).as("never loosened by a longer deadline").isEqualTo("150ms/120ms");
            String shorter = gate.transaction(
                    Deadline.in(Duration.ofMillis(100)),
                    c -> Db.text(
                            c,
                            "SELECT current_setting('statement_timeout') || '/' || current_setting('lock_timeout')"));
            assertThat(shorter)
                    .as("a stricter deadline still wins")
                    .matches("\\d{2,3}ms/\\d{2,3}ms")
                    .isNotEqualTo("150ms/120ms");
            assertThatThrownBy(() -> gate.transaction(
                            Deadline.in(Duration.ofSeconds(20)), c -> Db.count(c, "SELECT count(*) FROM pg_sleep(1)")))
                    .isInstanceOf(SQLException.class)
                    .isNotInstanceOf(DeadlineExceededException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
            assertThat(strict.getHikariPoolMXBean().getActiveConnections()).isZero();
        }
    }

    @Test
    void aTimeoutTheWorkSetItselfStaysTheDriversException() {
        var gate = POOL.bulkhead(1, 0);
        assertThatThrownBy(() -> gate.transaction(Deadline.in(Duration.ofSeconds(20)), c -> {
                    Db.update(c, "SET LOCAL statement_timeout = 50");
                    return Db.count(c, "SELECT count(*) FROM pg_sleep(1)");
                }))
                .isInstanceOf(SQLException.class)
                .isNotInstanceOf(DeadlineExceededException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
    }

    @Test
    void aClockFailingRightAfterTheConnectionWasTakenStillClosesIt() {
        var broken = new AtomicBoolean();
        var faulty = new FaultyDataSource(POOL.get()).onCall(Point.GET_CONNECTION, c -> broken.set(true));
        var gate = POOL.track(DbBulkhead.builder(faulty)
                .nanoClock(() -> {
                    if (broken.get()) {
                        throw new IllegalStateException("the clock broke");
                    }
                    return System.nanoTime();
                })
                .workload("w", 1, 0)
                .build());
        assertThatThrownBy(() -> gate.transaction(Deadline.in(Duration.ofSeconds(20)), c -> 1))
                .hasMessage("the clock broke");
        assertThat(faulty.openConnections()).as("the connection went back").isZero();
    }

    private static HikariDataSource poolWithInitSql(String sql) {
        HikariConfig config = Db.server().config(1, Duration.ofSeconds(2));
        config.setConnectionInitSql(sql);
        return new HikariDataSource(config);
    }

    // --- Configuration. ---

    @Test
    void aDataSourceReturningNullGetsAClearSqlExceptionAndNoConnectionOutcome() {
        DataSource returnsNull = (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(),
                new Class<?>[] {DataSource.class},
                (p, m, a) -> m.getName().equals("toString") ? "null-source" : null);
        var outcomes = new Outcomes();
        var gate = recorded(returnsNull, outcomes, 1);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> 1))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("the data source null-source returned null from getConnection()");
        assertThat(outcomes.seen).containsExactly(Outcome.NO_CONNECTION);
    }

    @Test
    void sizingWithHugeDurationsDoesNotOverflow() {
        assertThat(Sizing.usefulExtraSlots(4, Duration.ofSeconds(Long.MAX_VALUE), Duration.ofNanos(1)))
                .isEqualTo(Long.MAX_VALUE);
        assertThat(Sizing.usefulExtraSlots(4, Duration.ofDays(3650), Duration.ofDays(365)))
                .isEqualTo(40);
        POOL.track(DbBulkhead.builder(POOL.get())
                .sizingHint(Duration.ofSeconds(Long.MAX_VALUE), Duration.ofNanos(1))
                .workload("w", 1, 5)
                .build());
    }

    private static int backendPid(Connection c) throws SQLException {
        return Db.count(c, "SELECT pg_backend_pid()");
    }

    private static void await(CyclicBarrier barrier) throws SQLException {
        try {
            barrier.await(20, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new SQLException("test coordination failed", e);
        }
    }
}
