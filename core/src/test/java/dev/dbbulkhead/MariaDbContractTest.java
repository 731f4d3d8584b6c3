package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.MariaDb.Driver;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The same promises on MariaDB (10.11 here; MySQL by the same rules), through MariaDB Connector/J and MySQL
 * Connector/J, on a pool of one connection so that the next caller gets the same session: the article's scenario;
 * what commits the transaction implicitly or hides a {@code COMMIT} is refused before it runs and nothing commits;
 * ordinary MySQL text is served; a deadlock that work caught is told as a rollback, never committed piecewise;
 * a read-only transaction cannot write; a deadline bounds a long statement; session changes are refused and the next
 * caller sees the session as the pool left it.
 */
class MariaDbContractTest {
    @BeforeAll
    static void procedures() throws Exception {
        try (Connection c = MariaDb.connect();
                var s = c.createStatement()) {
            for (String end : List.of("COMMIT", "ROLLBACK", "")) {
                s.execute("CREATE OR REPLACE PROCEDURE db_bulkhead_" + (end.isEmpty() ? "plain" : end.toLowerCase())
                        + "(k BIGINT) BEGIN INSERT INTO " + MariaDb.TABLE + " (id, note) VALUES (k, 'in'); " + end
                        + (end.isEmpty() ? "" : ";") + " END");
            }
        }
    }

    private static DbBulkhead gate(HikariDataSource pool) {
        return DbBulkhead.builder(pool).workload("w", 1, 0).build();
    }

    private static void assertAllBack(DbBulkhead gate, HikariDataSource pool) {
        assertThat(gate.available()).isEqualTo(1);
        assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
    }

    /**
     * What the barrier cannot keep on MariaDB is told without a transaction of its own (callers that run their own,
     * as the Spring starter's do, would never see it otherwise), and its connection is back.
     */
    @ParameterizedTest
    @EnumSource(Driver.class)
    void whatCannotBeKeptIsToldBeforeAnyTransaction(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = new DbBulkhead(pool, 1, 0);
            assertThat(gate.databaseLimits())
                    .hasValueSatisfying(limits -> assertThat(limits).isNotBlank());
            assertThat(gate.databaseLimits()).as("read once, the same").isEqualTo(gate.databaseLimits());
            assertAllBack(gate, pool);
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void theArticlesScenario(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = new DbBulkhead(pool, 1, 0);
            var inside = new CountDownLatch(1);
            var release = new CountDownLatch(1);
            try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
                Future<Integer> holder = threads.submit(() -> gate.transaction(Duration.ofSeconds(5), c -> {
                    inside.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new SQLException(e);
                    }
                    return 1;
                }));
                assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
                assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> 0))
                        .isInstanceOf(java.util.concurrent.RejectedExecutionException.class);
                release.countDown();
                assertThat(holder.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            }
            int answer = gate.transaction(Duration.ofSeconds(1), c -> {
                try (var s = c.createStatement();
                        var r = s.executeQuery("SELECT 42")) {
                    r.next();
                    return r.getInt(1);
                }
            });
            assertThat(answer).isEqualTo(42);
            assertThat(gate.available()).isEqualTo(1);
        }
    }

    static Stream<Arguments> refused() {
        var texts = List.of(
                "CREATE TABLE " + MariaDb.TABLE + " (id INT)",
                "TRUNCATE TABLE " + MariaDb.TABLE,
                "DROP TABLE IF EXISTS no_such_table_here",
                "ALTER TABLE " + MariaDb.TABLE + " COMMENT 'x'",
                "ANALYZE TABLE " + MariaDb.TABLE,
                "OPTIMIZE TABLE " + MariaDb.TABLE,
                "LOCK TABLES " + MariaDb.TABLE + " WRITE",
                "UNLOCK TABLES",
                "RENAME TABLE a_table TO b_table",
                "SET autocommit = 1",
                "SET @@session.autocommit = 1",
                "COMMIT",
                "commit work",
                "ROLLBACK",
                "BEGIN",
                "START TRANSACTION",
                "XA START 'x1'",
                "/*!COMMIT*/",
                "/*!50000 COMMIT */",
                "/*M!100000 COMMIT */",
                "SELECT 1; COMMIT",
                "SELECT 1 /*!; COMMIT */",
                "SELECT 1;\n# a comment\nCOMMIT",
                "PREPARE s FROM 'COMMIT'",
                "EXECUTE s",
                "CREATE INDEX i_note ON " + MariaDb.TABLE + " (note)",
                "GRANT SELECT ON test.* TO 'nobody'@'localhost'",
                "FLUSH TABLES",
                "USE mysql",
                "SET SESSION sql_mode = ''",
                "SET NAMES latin1",
                "SET @@session.wait_timeout = 5",
                "SET LOCAL innodb_lock_wait_timeout = 1",
                "SET sql_mode = 'ANSI_QUOTES'",
                "CREATE TEMPORARY TABLE session_t (a INT)",
                "SELECT GET_LOCK('db-bulkhead-test', 0)",
                "HANDLER " + MariaDb.TABLE + " OPEN",
                "SET @x = 1, autocommit = 1",
                "SET @x = 1, @@session.autocommit = 1",
                "SET `autocommit` = 1",
                "SET @x = 1, wait_timeout = 55",
                "SET @x = 'a, b', SESSION wait_timeout = 56",
                "SET @x = 1 /*!, wait_timeout = 77 */",
                "SELECT `get_lock`('db-bulkhead-test', 0)",
                "SELECT `GET_LOCK` ('db-bulkhead-test', 0)");
        return perDriver(texts);
    }

    /** Each text with each driver. */
    private static Stream<Arguments> perDriver(List<String> texts) {
        var arguments = new ArrayList<Arguments>();
        for (Driver d : Driver.values()) {
            texts.forEach(t -> arguments.add(Arguments.of(d, t)));
        }
        return arguments.stream();
    }

    @ParameterizedTest
    @MethodSource("refused")
    void whatWouldCommitOrOutliveTheTransactionIsRefusedAndNothingCommits(Driver driver, String sql) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            String before = session(gate);
            long id = Db.newId();
            assertThatThrownBy(() -> gate.transaction(Duration.ofSeconds(5), c -> {
                        MariaDb.insert(c, id);
                        try (var s = c.createStatement()) {
                            s.execute(sql);
                        }
                        return null;
                    }))
                    .as(sql)
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25000"))
                    .satisfies(e -> assertThat(e.getMessage())
                            .doesNotContain("SET LOCAL name")
                            .doesNotContain("search_path"));
            assertThat(MariaDb.rows(id))
                    .as("%s: told refused, nothing committed", sql)
                    .isZero();
            assertThat(session(gate)).as("%s: what the next caller sees", sql).isEqualTo(before);
            assertAllBack(gate, pool);
        }
    }

    /** What a later caller would notice of the session. */
    private static String session(DbBulkhead gate) throws Exception {
        return gate.transaction(Duration.ofSeconds(5), c -> {
            try (var s = c.createStatement();
                    var r = s.executeQuery("SELECT CONCAT_WS('|', DATABASE(), @@sql_mode, "
                            + "@@character_set_client, @@wait_timeout, @@innodb_lock_wait_timeout, @@autocommit, "
                            + "@@max_statement_time, "
                            + "IS_USED_LOCK('db-bulkhead-test') IS NULL)")) {
                r.next();
                return r.getString(1);
            }
        });
    }

    static Stream<Arguments> served() {
        var texts = List.of(
                "SELECT 1 # ; commit",
                "SELECT 'it\\'s; commit'",
                "SELECT 1 AS `;begin`",
                "SELECT \"a; commit\"",
                "SELECT 1 -- ; commit",
                "SELECT 2--1",
                "SELECT 1 AS $x",
                "SELECT /* ; commit */ 1",
                "SELECT 1 /*+ MAX_EXECUTION_TIME(1000) */",
                "UPDATE " + MariaDb.TABLE + " SET note = 'y' WHERE id = -1",
                "INSERT INTO " + MariaDb.TABLE + " (id, note) VALUES (-2, 'a') ON DUPLICATE KEY UPDATE note = 'b'",
                "REPLACE INTO " + MariaDb.TABLE + " (id, note) VALUES (-3, 'c')",
                "SELECT * FROM " + MariaDb.TABLE + " WHERE id = -3 FOR UPDATE",
                "SET @counter = 1",
                "SELECT @counter := @counter + 1",
                "SAVEPOINT s1; ROLLBACK TO SAVEPOINT s1",
                "SAVEPOINT s2",
                "DO SLEEP(0)",
                "SELECT RELEASE_LOCK('nothing')",
                "WITH x AS (SELECT 1 AS a) SELECT a FROM x",
                "SELECT JSON_EXTRACT('{\"commit\": 1}', '$.commit')");
        return perDriver(texts);
    }

    @ParameterizedTest
    @MethodSource("served")
    void ordinaryMySqlTextIsServedAndCommits(Driver driver, String sql) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            long id = Db.newId();
            gate.transaction(Duration.ofSeconds(5), c -> {
                MariaDb.insert(c, id);
                try (var s = c.createStatement()) {
                    s.execute(sql);
                }
                return null;
            });
            assertThat(MariaDb.rows(id)).as(sql).isOne();
            assertAllBack(gate, pool);
        }
    }

    /**
     * Work catches InnoDB's deadlock (1213), which rolled back the whole transaction, and goes on: the statements
     * after it ran in a new transaction. Told as a rollback (40001), and neither half is committed.
     */
    @ParameterizedTest
    @EnumSource(Driver.class)
    void aDeadlockThatWorkCaughtIsToldAsARollbackAndNothingCommits(Driver driver) throws Exception {
        long r1 = Db.newId();
        long r2 = Db.newId();
        long before = Db.newId();
        long after = Db.newId();
        try (Connection setup = MariaDb.connect();
                var s = setup.createStatement()) {
            s.execute("INSERT INTO " + MariaDb.TABLE + " (id, note) VALUES (" + r1 + ", 'r1'), (" + r2 + ", 'r2')");
        }
        try (HikariDataSource pool = MariaDb.pool(driver, 1);
                var threads = Executors.newVirtualThreadPerTaskExecutor();
                Connection other = MariaDb.connect()) {
            var gate = gate(pool);
            other.setAutoCommit(false);
            lock(other, r2);
            try (var s = other.createStatement()) {
                // The other transaction weighs more (rows written), so InnoDB picks the barrier's as the victim.
                for (int i = 0; i < 5; i++) {
                    s.execute("INSERT INTO " + MariaDb.TABLE + " (id, note) VALUES (" + Db.newId() + ", 'heavy')");
                }
            }
            var holdsR1 = new CountDownLatch(1);
            Future<Object> worker = threads.submit(() -> gate.transaction(Duration.ofSeconds(10), c -> {
                MariaDb.insert(c, before);
                lock(c, r1);
                holdsR1.countDown();
                try {
                    lock(c, r2);
                    return "no deadlock";
                } catch (SQLException deadlock) {
                    MariaDb.insert(c, after);
                    return deadlock.getErrorCode();
                }
            }));
            assertThat(holdsR1.await(10, TimeUnit.SECONDS)).isTrue();
            awaitLockWait(other);
            lock(other, r1); // closes the cycle
            other.rollback();
            assertThatThrownBy(() -> worker.get(30, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(SQLException.class)
                    .cause()
                    .hasMessageContaining("nothing was committed")
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("40001"))
                    .satisfies(
                            e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1213));
            assertThat(MariaDb.rows(before) + MariaDb.rows(after))
                    .as("neither half committed")
                    .isZero();
            assertAllBack(gate, pool);
        }
    }

    private static void lock(Connection c, long id) throws SQLException {
        try (var s = c.prepareStatement("SELECT note FROM " + MariaDb.TABLE + " WHERE id = ? FOR UPDATE")) {
            s.setLong(1, id);
            s.executeQuery().close();
        }
    }

    /** Until a transaction other than {@code mine} waits for a row lock (the barrier's, on r2). */
    private static void awaitLockWait(Connection mine) throws Exception {
        try (Connection probe = MariaDb.connect();
                var s = probe.createStatement()) {
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
                try (var r = s.executeQuery(
                        "SELECT count(*) FROM information_schema.innodb_trx " + "WHERE trx_state = 'LOCK WAIT'")) {
                    r.next();
                    return r.getInt(1) > 0;
                }
            });
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void aReadOnlyTransactionCannotWrite(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            long id = Db.newId();
            assertThatThrownBy(() -> gate.transaction(
                            TransactionOptions.queueWait(Duration.ofSeconds(5)).readOnly(), c -> MariaDb.insert(c, id)))
                    .isInstanceOf(SQLException.class);
            assertThat(MariaDb.rows(id)).isZero();
            long next = Db.newId();
            gate.transaction(Duration.ofSeconds(5), c -> MariaDb.insert(c, next));
            assertThat(MariaDb.rows(next))
                    .as("the next transaction is not read-only")
                    .isOne();
            assertAllBack(gate, pool);
        }
    }

    /**
     * A 300 ms deadline over a 3 s statement: MariaDB cancels it at the deadline (max_statement_time, set for the
     * transaction and put back after it), told as the deadline; the next caller's session has its own limit again.
     */
    @ParameterizedTest
    @EnumSource(Driver.class)
    void aDeadlineBoundsALongStatementOnTheServer(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = DbBulkhead.builder(pool)
                    .lockTimeoutFromDeadline(true)
                    .workload("w", 1, 0)
                    .build();
            String before = session(gate);
            long start = System.nanoTime();
            assertThatThrownBy(() -> gate.transaction(Deadline.in(Duration.ofMillis(300)), c -> {
                        try (var s = c.createStatement()) {
                            s.execute("SELECT SLEEP(3)");
                        }
                        return null;
                    }))
                    .isInstanceOf(DeadlineExceededException.class)
                    .satisfies(e -> assertThat(((DeadlineExceededException) e).stage())
                            .isEqualTo(DeadlineExceededException.Stage.STATEMENT));
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .as("well before the statement's 3 s")
                    .isLessThan(Duration.ofMillis(2500));
            String inside = gate.transaction(
                    Deadline.in(Duration.ofSeconds(20)),
                    c -> Db.text(c, "SELECT CONCAT(@@max_statement_time, '/', @@innodb_lock_wait_timeout)"));
            assertThat(inside).as("the deadline's limits inside").matches("(19|20)\\.\\d+/20");
            assertThat(session(gate)).as("the session's own limits, after").isEqualTo(before);
            assertAllBack(gate, pool);
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void setCatalogAndSetSchemaGiveMySqlsAdvice(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            assertThatThrownBy(() -> gate.transaction(Duration.ofSeconds(5), c -> {
                        c.setCatalog("mysql");
                        return null;
                    }))
                    .hasMessageContaining("db.table")
                    .hasMessageNotContaining("SET LOCAL");
        }
    }

    /** Work inserts A, calls a procedure that inserts B and ends with {@code end}, inserts C, and returns or throws. */
    private static Object callingWork(DbBulkhead gate, String procedure, long[] ids, boolean fail) throws Exception {
        return gate.transaction(Duration.ofSeconds(5), c -> {
            MariaDb.insert(c, ids[0]);
            try (var call = c.prepareCall("{call " + procedure + "(?)}")) {
                call.setLong(1, ids[1]);
                call.execute();
            }
            MariaDb.insert(c, ids[2]);
            if (fail) {
                throw new IllegalStateException("work failed after the procedure");
            }
            return "returned";
        });
    }

    private static int[] rows(long[] ids) throws SQLException {
        return new int[] {MariaDb.rows(ids[0]), MariaDb.rows(ids[1]), MariaDb.rows(ids[2])};
    }

    /**
     * User variables outlive the transaction on the server: the ones work assigned ({@code SET}, {@code :=},
     * {@code INTO}) are set back to {@code NULL} when it ends, committed or rolled back, on the same connection (no
     * discard); the next caller finds them unset.
     */
    @ParameterizedTest
    @EnumSource(Driver.class)
    void theUserVariablesWorkAssignedAreUnsetForTheNextCaller(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            for (boolean fails : new boolean[] {false, true}) {
                long id = Db.newId();
                long connection = gate.transaction(Duration.ofSeconds(5), c -> {
                    try (var s = c.createStatement()) {
                        s.execute("SELECT @`x y` := 43, 1 INTO @t, @one");
                    }
                    return MariaDb.insert(c, id) >= 0 ? connectionId(c) : -1;
                });
                try {
                    gate.transaction(Duration.ofSeconds(5), c -> {
                        try (var s = c.createStatement()) {
                            s.execute("SET @tenant = 42, @'quoted' = 'a'");
                            s.executeQuery("SELECT @counter := 1, 7 INTO @into, @x")
                                    .close();
                        }
                        if (fails) {
                            throw new SQLException("work failed");
                        }
                        return null;
                    });
                } catch (SQLException e) {
                    assertThat(fails).as("only the failing round throws").isTrue();
                }
                String seen = gate.transaction(Duration.ofSeconds(5), c -> {
                    try (var s = c.createStatement();
                            var r = s.executeQuery("SELECT CONCAT_WS('|', IFNULL(@tenant, '-'), IFNULL(@quoted, '-'),"
                                    + " IFNULL(@counter, '-'), IFNULL(@into, '-'), IFNULL(@`x y`, '-'),"
                                    + " IFNULL(@t, '-'), CONNECTION_ID())")) {
                        r.next();
                        return r.getString(1);
                    }
                });
                assertThat(seen)
                        .as("fails=%s: unset, on the same connection", fails)
                        .isEqualTo("-|-|-|-|-|-|" + connection);
                assertThat(MariaDb.rows(id)).isOne();
            }
            assertAllBack(gate, pool);
        }
    }

    /**
     * One call site that sends two shapes of statement, under contention: the slow shape is capped at its first
     * statement, with nothing sent (a capped caller's insert is never there; a served one's is), and every permit and
     * connection comes back.
     */
    @ParameterizedTest
    @EnumSource(Driver.class)
    void aShapeCappedAtItsFirstStatementSendsNothing(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 4)) {
            var gate = DbBulkhead.builder(pool)
                    .workload(WorkloadConfig.builder("w")
                            .concurrent(4)
                            .extraSlots(64)
                            .kinds(true)
                            .build())
                    .build();
            var told = new java.util.concurrent.ConcurrentLinkedQueue<long[]>(); // {id, 1 served / 0 capped}
            var stop = new java.util.concurrent.atomic.AtomicBoolean();
            var callers = new ArrayList<Thread>();
            for (int i = 0; i < 12; i++) {
                boolean slow = i < 4;
                callers.add(Thread.ofVirtual().start(() -> {
                    while (!stop.get()) {
                        long id = slow ? Db.newId() : 0;
                        try {
                            gate.transaction(
                                    Duration.ofSeconds(2),
                                    shaped(slow ? "SELECT SLEEP(0.1) AS report" : "SELECT SLEEP(0.002)", id));
                            if (slow) {
                                told.add(new long[] {id, 1});
                            }
                        } catch (KindCappedException capped) {
                            told.add(new long[] {id, slow ? 0 : -1});
                        } catch (BulkheadRejectedException | SQLException | InterruptedException other) {
                            // refused by the queue or the deadline: not what this test counts
                        }
                    }
                }));
            }
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> told.stream().filter(t -> t[1] == 0).count() >= 3
                            && told.stream().filter(t -> t[1] == 1).count() >= 3);
            stop.set(true);
            for (Thread t : callers) {
                t.join();
            }
            assertThat(told).as("the fast shape is never capped").noneMatch(t -> t[1] == -1);
            for (long[] t : told) {
                assertThat(MariaDb.rows(t[0]))
                        .as("told %s", t[1] == 1 ? "served" : "capped")
                        .isEqualTo((int) t[1]);
            }
            assertThat(gate.available()).isEqualTo(4);
            assertThat(pool.getHikariPoolMXBean().getActiveConnections()).isZero();
        }
    }

    /** One call site for every statement, as a data-access helper: the same lambda class whatever it sends. */
    private static SqlWork<Integer> shaped(String sql, long id) {
        return c -> {
            try (var s = c.createStatement()) {
                s.execute(sql);
            }
            return id > 0 ? MariaDb.insert(c, id) : 0;
        };
    }

    private static long connectionId(Connection c) throws SQLException {
        try (var s = c.createStatement();
                var r = s.executeQuery("SELECT CONNECTION_ID()")) {
            r.next();
            return r.getLong(1);
        }
    }

    /** A procedure that commits inside: when work then returns, everything is committed, and told so. */
    @ParameterizedTest
    @EnumSource(Driver.class)
    void aProcedureThatCommitsInsideThenWorkReturnsIsToldCommitted(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            long[] ids = {Db.newId(), Db.newId(), Db.newId()};
            assertThat(callingWork(gate, "db_bulkhead_commit", ids, false)).isEqualTo("returned");
            assertThat(rows(ids)).containsExactly(1, 1, 1);
            assertAllBack(gate, pool);
        }
    }

    /** The same procedure, then work fails: part of it took effect, so the caller is told the outcome is unknown. */
    @ParameterizedTest
    @EnumSource(Driver.class)
    void aProcedureThatCommitsInsideThenWorkFailsIsToldOutcomeUnknown(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            long[] ids = {Db.newId(), Db.newId(), Db.newId()};
            assertThatThrownBy(() -> callingWork(gate, "db_bulkhead_commit", ids, true))
                    .isInstanceOf(CommitOutcomeUnknownException.class)
                    .hasMessageContaining("procedure that committed inside")
                    .hasRootCauseMessage("work failed after the procedure");
            assertThat(rows(ids))
                    .as("before the procedure's COMMIT: committed; after: rolled back")
                    .containsExactly(1, 1, 0);
            assertAllBack(gate, pool);
        }
    }

    /** A procedure that rolls back inside: committing the rest would commit part of the work; nothing is. */
    @ParameterizedTest
    @EnumSource(Driver.class)
    void aProcedureThatRollsBackInsideIsToldRolledBackAndNothingCommits(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            long[] ids = {Db.newId(), Db.newId(), Db.newId()};
            assertThatThrownBy(() -> callingWork(gate, "db_bulkhead_rollback", ids, false))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("nothing was committed")
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("40000"));
            assertThat(rows(ids)).containsExactly(0, 0, 0);
            assertAllBack(gate, pool);
        }
    }

    @ParameterizedTest
    @EnumSource(Driver.class)
    void aPlainProcedureCommitsWithTheTransactionOrRollsBackWithIt(Driver driver) throws Exception {
        try (HikariDataSource pool = MariaDb.pool(driver, 1)) {
            var gate = gate(pool);
            long[] committed = {Db.newId(), Db.newId(), Db.newId()};
            assertThat(callingWork(gate, "db_bulkhead_plain", committed, false)).isEqualTo("returned");
            assertThat(rows(committed)).containsExactly(1, 1, 1);
            long[] failed = {Db.newId(), Db.newId(), Db.newId()};
            assertThatThrownBy(() -> callingWork(gate, "db_bulkhead_plain", failed, true))
                    .isInstanceOf(IllegalStateException.class);
            assertThat(rows(failed)).containsExactly(0, 0, 0);
            assertAllBack(gate, pool);
        }
    }
}
