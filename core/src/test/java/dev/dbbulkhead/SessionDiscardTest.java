package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What the guard cannot read in the text (a {@code DO} block, a {@code CALL}, {@code set_config} with a bound
 * scope): the transaction runs and is told as it ended, and a connection whose session it changed is discarded
 * instead of going back to the pool, so that the next caller, on a pool of one, gets a fresh session; one that
 * changed nothing is kept once its call site is known. On a plain connection only: behind PgBouncer's transaction
 * pooling the session after the transaction may be another server's.
 */
@Tag("session-state")
class SessionDiscardTest {
    private static final String INIT = "SET application_name = 'db-bulkhead-init'";

    private HikariDataSource pool;
    private DbBulkhead gate;
    private final AtomicInteger discarded = new AtomicInteger();

    @BeforeAll
    static void procedures() throws Exception {
        Db.execute("CREATE OR REPLACE PROCEDURE session_lock(k bigint) LANGUAGE plpgsql "
                + "AS $$BEGIN PERFORM pg_advisory_lock(k); END$$");
        Db.execute("CREATE OR REPLACE PROCEDURE session_nothing() LANGUAGE plpgsql AS $$BEGIN PERFORM 1; END$$");
        Db.execute("CREATE OR REPLACE PROCEDURE session_dynamic(s text) LANGUAGE plpgsql AS $$BEGIN EXECUTE s; END$$");
    }

    @BeforeEach
    void barrier() {
        HikariConfig config = Db.server().config(1, Duration.ofSeconds(5));
        config.setConnectionInitSql(INIT);
        pool = new HikariDataSource(config);
        gate = DbBulkhead.builder(pool)
                .listener(new BulkheadListener() {
                    @Override
                    public void onSessionDiscarded(Workload workload) {
                        discarded.incrementAndGet();
                    }
                })
                .workload("w", 1, 0)
                .build();
    }

    @AfterEach
    void close() {
        assertThat(gate.workloads().getFirst().available())
                .as("every permit back")
                .isEqualTo(1);
        assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                .as("every connection back")
                .isZero();
        pool.close();
    }

    /** One call site for every text: the same lambda class, whatever it sends. */
    private int run(String sql, long id) throws Exception {
        return gate.transaction(Duration.ZERO, c -> {
            Db.insert(c, id);
            try (var s = c.createStatement()) {
                s.execute(sql);
            }
            return Db.count(c, "SELECT pg_backend_pid()");
        });
    }

    private String session() throws Exception {
        return gate.transaction(
                Duration.ZERO,
                c -> Db.text(
                        c,
                        "SELECT pg_backend_pid() || '|' "
                                + "|| current_setting('statement_timeout') || '|' || current_setting('search_path') || '|' "
                                + "|| current_setting('application_name')"));
    }

    @Test
    void aDoBlockThatChangesTheSessionIsToldCommittedAndItsConnectionIsDiscarded() throws Exception {
        String before = session();
        long id = Db.newId();
        int backend;
        try (var logs = new Logs(Level.WARNING)) {
            backend = run("DO $$BEGIN EXECUTE 'SET statement_timeout = 1'; END$$", id);
            run("DO $$BEGIN EXECUTE 'SET statement_timeout = 2'; END$$", Db.newId());
            assertThat(logs.messages())
                    .as("once per call site")
                    .hasSize(1)
                    .first()
                    .asString()
                    .contains("sent DO")
                    .contains("discarded")
                    .contains(SessionDiscardTest.class.getName());
        }
        assertThat(Db.rows(id)).as("told committed: committed").isEqualTo(1);
        String after = session();
        assertThat(after)
                .as("a fresh session, as the pool makes them")
                .doesNotStartWith(backend + "|")
                .endsWith(before.substring(before.indexOf('|')));
        assertThat(discarded).hasValue(2);
    }

    @Test
    void aCallSiteKnownToRiskTheSessionKeepsItsConnectionWhenNothingChanged() throws Exception {
        int first = run("DO $$BEGIN EXECUTE 'SELECT 1'; END$$", Db.newId());
        assertThat(discarded)
                .as("the first one from a call site: not read before, discarded")
                .hasValue(1);
        int second = run("DO $$BEGIN EXECUTE 'SELECT 1'; END$$", Db.newId());
        int third = run("CALL session_nothing()", Db.newId());
        assertThat(second).as("a new session after the discard").isNotEqualTo(first);
        assertThat(third).as("unchanged: kept").isEqualTo(second);
        assertThat(discarded).hasValue(1);
        int fourth = run("DO $$BEGIN EXECUTE 'SET search_path = pg_catalog'; END$$", Db.newId());
        assertThat(fourth).isEqualTo(third);
        assertThat(discarded).as("changed: discarded").hasValue(2);
        assertThat(session()).doesNotStartWith(fourth + "|").doesNotContain("|pg_catalog|");
    }

    @Test
    void aDoBlockWhoseTextShowsNoSessionChangeIsNotARisk() throws Exception {
        int first = run("DO $$DECLARE n int; BEGIN SELECT count(*) INTO n FROM pg_class; PERFORM n; END$$", Db.newId());
        int second = run("DO $$BEGIN PERFORM 1; END$$", Db.newId());
        assertThat(second).as("kept: nothing to compare").isEqualTo(first);
        assertThat(discarded).hasValue(0);
        assertThatThrownBy(() -> run("DO $$BEGIN PERFORM set_config('search_path', 'x', false); END$$", Db.newId()))
                .as("what the body shows is refused as in plain SQL")
                .hasMessageContaining("set_config(..., true)");
    }

    /**
     * {@code SET LOCAL search_path TO pg_temp} makes an unqualified {@code CREATE TABLE} temporary: told committed
     * (it did), and no later caller writes into it (its rows would vanish with the connection).
     */
    @Test
    void aTableMadeTemporaryBySearchPathNeverReachesTheNextCaller() throws Exception {
        for (int round = 0; round < 3; round++) {
            long id = Db.newId();
            run("SET LOCAL search_path TO pg_temp, public; CREATE TABLE IF NOT EXISTS orders_here (id int)", id);
            assertThat(Db.rows(id)).as("told committed: committed").isEqualTo(1);
            String temporary = gate.transaction(
                    Duration.ZERO,
                    c -> Db.text(
                            c,
                            "SELECT (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema())"
                                    + " || '|' || (SELECT count(*) FROM pg_proc WHERE pronamespace = pg_my_temp_schema())"));
            assertThat(temporary)
                    .as("round %d: the next caller's temporary schema", round)
                    .isEqualTo("0|0");
        }
        assertThat(discarded).as("every one changed the session").hasValue(3);
    }

    /**
     * A {@code CALL} of a PL/pgSQL procedure whose body shows no session change is read as a {@code DO} block is (one
     * catalog query) and costs no session check; one whose body runs dynamic SQL is compared, and discarded when the
     * session changed.
     */
    @Test
    void aProcedureIsReadLikeADoBlock() throws Exception {
        int first = run("CALL session_nothing()", Db.newId());
        int second = run("call " + TestDatabase.SCHEMA + " . \"session_nothing\" ( )", Db.newId());
        assertThat(second).as("kept: nothing to compare").isEqualTo(first);
        assertThat(discarded).hasValue(0);
        run("CALL session_dynamic('SELECT 1')", Db.newId());
        assertThat(discarded)
                .as("dynamic SQL: a risk, the first from its call site discarded unread")
                .hasValue(1);
        int kept = run("CALL session_dynamic('SELECT 1')", Db.newId());
        int changed = run("CALL session_dynamic('SET statement_timeout = 7')", Db.newId());
        assertThat(changed).isEqualTo(kept);
        assertThat(discarded).as("changed: discarded").hasValue(2);
        assertThat(session()).doesNotStartWith(changed + "|").doesNotContain("|7ms|");
    }

    @Test
    void aProcedureTakingASessionLockLeavesNoLockBehind() throws Exception {
        run("CALL session_lock(4246)", Db.newId());
        assertThat(discarded).hasValue(1);
        try (Connection other = Db.server().connect()) {
            // The pool closes a discarded connection on its own thread: the lock goes with the backend.
            await().atMost(Duration.ofSeconds(10))
                    .until(() ->
                            Db.text(other, "SELECT pg_try_advisory_lock(4246)").equals("t"));
            Db.text(other, "SELECT pg_advisory_unlock(4246)");
        }
    }

    @Test
    void aBoundScopeForSetConfigIsARiskAndAChangedSessionIsDiscarded() throws Exception {
        String before = session();
        long id = Db.newId();
        String inside = gate.transaction(Duration.ZERO, c -> {
            Db.insert(c, id);
            try (var p = c.prepareStatement("SELECT set_config('search_path', ?, ?)")) {
                p.setString(1, "pg_catalog");
                p.setBoolean(2, false);
                try (var r = p.executeQuery()) {
                    r.next();
                    return r.getString(1);
                }
            }
        });
        assertThat(inside).isEqualTo("pg_catalog");
        assertThat(Db.rows(id)).isEqualTo(1);
        assertThat(discarded).hasValue(1);
        String after = session();
        assertThat(after.substring(after.indexOf('|'))).isEqualTo(before.substring(before.indexOf('|')));
    }

    @Test
    void theInitSqlOfThePoolHoldsAcrossManyTransactions() throws Exception {
        for (int i = 0; i < 20; i++) {
            String name =
                    gate.transaction(Duration.ZERO, c -> Db.text(c, "SELECT current_setting('application_name')"));
            assertThat(name).isEqualTo("db-bulkhead-init");
        }
        assertThat(discarded).hasValue(0);
    }
}
