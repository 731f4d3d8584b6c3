package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The session belongs to the pool, the transaction to the caller: on a pool of one connection, so that the next
 * caller gets the very session the first one used, work that would change the session beyond its transaction is
 * refused before it runs (SQLState 25000, nothing committed, the refusal naming the transaction-scoped spelling), and
 * the next, unrelated caller sees the session as the pool left it; what is transaction-scoped keeps working (and
 * text that only contains the words is served: {@code SideDoorsTest}). Runs
 * through PgBouncer's transaction pooling in CI as well. (What the text cannot show, a {@code DO} block or a
 * {@code CALL}: {@code SessionDiscardTest}.)
 */
class SessionStateContractTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(1);

    /** What a later caller would notice of the session, but the backend (PgBouncer may hand out another one). */
    static String session(DbBulkhead gate) throws Exception {
        return gate.transaction(
                Duration.ZERO,
                c -> Db.text(
                        c,
                        "SELECT current_setting('search_path') || '|' "
                                + "|| current_setting('statement_timeout') || '|' || current_setting('default_transaction_read_only') "
                                + "|| '|' || current_user || '|' || current_setting('application_name') || '|' "
                                + "|| (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema()) || '|' "
                                + "|| (SELECT count(*) FROM pg_proc WHERE pronamespace = pg_my_temp_schema()) || '|' "
                                + "|| (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) || '|' "
                                + "|| (SELECT count(*) FROM pg_prepared_statements WHERE from_sql) || '|' "
                                + "|| (SELECT count(*) FROM pg_cursors WHERE is_holdable) || '|' "
                                + "|| (SELECT count(*) FROM pg_listening_channels())"));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            SET search_path TO tenant_a, public                      | SET LOCAL search_path
            SET search_path TO nowhere                               | SET LOCAL search_path
            SET statement_timeout TO 1                               | SET LOCAL statement_timeout
            SET SESSION statement_timeout = 1                        | SET LOCAL statement_timeout
            SELECT set_config('statement_timeout', '1', false)       | set_config(..., true)
            SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY     | SET TRANSACTION
            SET ROLE other                                           | SET LOCAL ROLE
            SET SESSION AUTHORIZATION other                          | SET LOCAL SESSION AUTHORIZATION
            RESET application_name                                   | SET LOCAL name TO DEFAULT
            RESET ALL                                                | SET LOCAL name TO DEFAULT
            SELECT pg_advisory_lock(4243)                            | pg_advisory_xact_lock
            SELECT pg_try_advisory_lock_shared(4243)                 | pg_try_advisory_xact_lock_shared
            CREATE TEMP TABLE session_t (id int)                     | ON COMMIT DROP
            SELECT 1 AS id INTO TEMP session_t                       | ON COMMIT DROP
            DECLARE held CURSOR WITH HOLD FOR SELECT 1               | WITHOUT HOLD
            PREPARE q AS SELECT 1                                    | PreparedStatement
            LISTEN db_bulkhead_events                                | outside the pool
            DISCARD TEMP                                             | leave the session to the pool
            CREATE TABLE pg_temp.orders (id int)                     | ON COMMIT DROP
            create table "pg_temp" . orders (id int)                 | ON COMMIT DROP
            CREATE VIEW pg_temp.v AS SELECT 1                        | ON COMMIT DROP
            CREATE SEQUENCE pg_temp.s                                | ON COMMIT DROP
            CREATE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1' | schema of its own
            UPDATE pg_settings SET setting = 'tenant_b' WHERE name = 'search_path' | set_config(name, value, true)
            UPDATE ONLY pg_catalog."pg_settings" SET setting = '1' WHERE name = 'statement_timeout' | SET LOCAL
            DO $$BEGIN PERFORM set_config('search_path', 'x', false); END$$ | set_config(..., true)
            """)
    void aSessionChangeIsRefusedBeforeItRunsNothingCommitsAndTheNextCallerSeesThePoolsSession(
            String sql, String instead) throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String before = session(gate);
        for (int how = 0; how < 3; how++) {
            long id = Db.newId();
            int way = how;
            assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                        Db.insert(c, id);
                        Db.send(c, sql, way);
                        return null;
                    }))
                    .as("%s via %d", sql, way)
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("reach the next caller")
                    .hasMessageContaining(instead)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25000"));
            assertThat(Db.rows(id))
                    .as("%s via %d: told refused, nothing committed", sql, way)
                    .isZero();
            assertThat(session(gate))
                    .as("%s via %d: what the next caller sees", sql, way)
                    .isEqualTo(before);
        }
    }

    @Test
    void workThatCatchesTheRefusalCommitsWhatRanAndTheSessionIsUnchanged() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String before = session(gate);
        long id = Db.newId();
        String told = gate.transaction(Duration.ZERO, c -> {
            Db.insert(c, id);
            try {
                Db.update(c, "SET search_path TO nowhere");
                return "not refused";
            } catch (SQLException refused) {
                return refused.getSQLState();
            }
        });
        assertThat(told).isEqualTo("25000");
        assertThat(Db.rows(id)).as("told committed: the insert is there").isEqualTo(1);
        assertThat(session(gate)).isEqualTo(before);
    }

    @Test
    void anAdvisoryLockRefusedIsNotHeldForAnyoneElse() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> Db.text(c, "SELECT pg_advisory_lock(4244)")))
                .isInstanceOf(SQLException.class);
        try (Connection other = Db.server().connect()) {
            assertThat(Db.text(other, "SELECT pg_try_advisory_lock(4244)"))
                    .as("another session takes it")
                    .isEqualTo("t");
            Db.text(other, "SELECT pg_advisory_unlock(4244)");
        }
    }

    // --- What keeps working. ---

    @Test
    void transactionScopedSettingsWorkInsideAndEndWithTheTransaction() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String before = session(gate);
        String inside = gate.transaction(Duration.ZERO, c -> {
            Db.update(c, "SET LOCAL search_path TO pg_catalog, public");
            Db.update(c, "SET LOCAL statement_timeout = 4321");
            String first = Db.text(
                    c, "SELECT current_setting('search_path') || '|' " + "|| current_setting('statement_timeout')");
            Db.text(c, "SELECT set_config('lock_timeout', '1234', true)");
            return first + "|" + Db.text(c, "SELECT current_setting('lock_timeout')");
        });
        assertThat(inside).isEqualTo("pg_catalog, public|4321ms|1234ms");
        assertThat(session(gate)).isEqualTo(before);
        String lockTimeout = gate.transaction(Duration.ZERO, c -> Db.text(c, "SELECT current_setting('lock_timeout')"));
        assertThat(lockTimeout)
                .as("set_config(..., true) ended with its transaction")
                .isNotEqualTo("1234ms");
    }

    @Test
    void setTransactionAsTheFirstStatementSetsThisTransactionOnly() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String isolation = gate.transaction(Duration.ZERO, c -> {
            Db.update(c, "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
            return Db.text(c, "SELECT current_setting('transaction_isolation')");
        });
        assertThat(isolation).isEqualTo("serializable");
        String next =
                gate.transaction(Duration.ZERO, c -> Db.text(c, "SELECT current_setting('transaction_isolation')"));
        assertThat(next).isEqualTo("read committed");
    }

    @Test
    void aTransactionScopedAdvisoryLockIsReleasedAtTheEnd() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String taken = gate.transaction(Duration.ZERO, c -> Db.text(c, "SELECT pg_try_advisory_xact_lock(4245)"));
        assertThat(taken).isEqualTo("t");
        try (Connection other = Db.server().connect()) {
            assertThat(Db.text(other, "SELECT pg_try_advisory_lock(4245)")).isEqualTo("t");
            Db.text(other, "SELECT pg_advisory_unlock(4245)");
        }
    }

    @Test
    void aTemporaryTableOnCommitDropCanBeCreatedAgainByTheNextTransaction() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String before = session(gate);
        for (int round = 0; round < 3; round++) {
            int rows = gate.transaction(Duration.ZERO, c -> {
                Db.update(c, "CREATE TEMP TABLE scratch (id int) ON COMMIT DROP");
                Db.update(c, "INSERT INTO scratch VALUES (1), (2)");
                return Db.count(c, "SELECT count(*) FROM scratch");
            });
            assertThat(rows).isEqualTo(2);
        }
        assertThat(session(gate)).isEqualTo(before);
    }

    /**
     * What reaches new sessions but not this one is not a session change: {@code ALTER ROLE ... SET} (read when a
     * session starts) and a function's {@code SET} clause (in force while it runs) are served and leave the pooled
     * session as it was.
     */
    @Test
    void settingsForLaterSessionsOrForOneFunctionLeaveThisSessionAsItWas() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String before = session(gate);
        String workMem = gate.transaction(Duration.ZERO, c -> Db.text(c, "SELECT current_setting('work_mem')"));
        try {
            String inside = gate.transaction(Duration.ZERO, c -> {
                Db.update(c, "ALTER ROLE CURRENT_USER SET work_mem = '7MB'");
                Db.update(
                        c,
                        "CREATE OR REPLACE FUNCTION db_bulkhead_set_clause() RETURNS text LANGUAGE sql "
                                + "SET search_path = pg_catalog AS 'SELECT current_setting(''search_path'')'");
                return Db.text(c, "SELECT db_bulkhead_set_clause()");
            });
            assertThat(inside).as("in force while the function runs").isEqualTo("pg_catalog");
            String after = gate.transaction(Duration.ZERO, c -> Db.text(c, "SELECT current_setting('work_mem')"));
            assertThat(after)
                    .as("the role's setting is for sessions that start later")
                    .isEqualTo(workMem);
            assertThat(session(gate)).isEqualTo(before);
        } finally {
            try (Connection c = Db.server().connect()) {
                Db.update(c, "ALTER ROLE CURRENT_USER RESET work_mem");
                Db.update(c, "DROP FUNCTION IF EXISTS db_bulkhead_set_clause()");
            }
        }
    }

    @Test
    void theRefusalsNameWhatToDoInstead() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        List<String> messages = new ArrayList<>();
        for (String sql :
                List.of("SET search_path TO x", "SELECT pg_advisory_lock(1)", "CREATE TEMP TABLE t (id int)")) {
            try {
                gate.transaction(Duration.ZERO, c -> Db.update(c, sql));
            } catch (SQLException e) {
                messages.add(e.getMessage());
            }
        }
        assertThat(messages)
                .containsExactly(
                        "db-bulkhead: work must not send SET search_path as SQL: the change would stay on the pooled "
                                + "connection after the transaction and reach the next caller (the session belongs to the "
                                + "pool); use SET LOCAL search_path instead, which ends with the transaction",
                        "db-bulkhead: work must not send pg_advisory_lock(...) as SQL: the change would stay on the pooled "
                                + "connection after the transaction and reach the next caller (the session belongs to the "
                                + "pool); use pg_advisory_xact_lock(...) instead, which is released when the transaction ends",
                        "db-bulkhead: work must not send CREATE TEMP TABLE without ON COMMIT DROP as SQL: the change would "
                                + "stay on the pooled connection after the transaction and reach the next caller (the session "
                                + "belongs to the pool); add ON COMMIT DROP, which drops the table when the transaction ends");
    }
}
