package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.PGConnection;

/**
 * The guarded connection has no side doors: everything it hands out leads back to it and expires with the
 * transaction, transaction control sent as SQL is refused, and session settings that would outlive the transaction
 * on the pooled connection are refused. On the real PostgreSQL, with the row written before the refusal checked.
 */
class SideDoorsTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(2);

    @Test
    void statementsMetadataAndResultSetsLeadBackToTheGuardedConnection() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        var seen = new ArrayList<Connection>();
        var kept = new AtomicReference<Statement>();
        gate.transaction(Duration.ZERO, c -> {
            Statement s = c.createStatement();
            PreparedStatement p = c.prepareStatement("SELECT ?::int");
            CallableStatement call = c.prepareCall("SELECT 1");
            seen.add(s.getConnection());
            seen.add(p.getConnection());
            seen.add(call.getConnection());
            seen.add(c.getMetaData().getConnection());
            try (ResultSet r = s.executeQuery("SELECT 1")) {
                seen.add(r.getStatement().getConnection());
                assertThat(r.getStatement()).isSameAs(s);
            }
            try (ResultSet tables = c.getMetaData().getTables(null, null, "bulkhead_items", null)) {
                seen.add(tables.getStatement().getConnection());
            }
            p.setInt(1, 7);
            try (ResultSet r = p.executeQuery()) {
                r.next();
                assertThat(r.getInt(1)).isEqualTo(7);
                seen.add(r.getStatement().getConnection());
            }
            kept.set(s);
            return null;
        });
        assertThat(seen)
                .hasSize(7)
                .allSatisfy(connection -> assertThat(connection).isSameAs(seen.get(0)));
        assertThatThrownBy(() -> seen.get(0).commit()).hasMessageContaining("transaction that has finished");
        assertThatThrownBy(() -> kept.get().executeQuery("SELECT 1"))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("transaction that has finished")
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("08003"));
        assertThat(kept.get().isClosed()).isTrue();
        kept.get().close(); // closing an expired statement is harmless
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "COMMIT",
                "commit work",
                "END",
                "end transaction",
                "ABORT",
                "ROLLBACK",
                "rollback work",
                "BEGIN",
                "START TRANSACTION",
                "PREPARE TRANSACTION 'tx1'",
                "SELECT 1; COMMIT",
                "/* a comment */ COMMIT",
                "-- a comment\nCOMMIT AND CHAIN",
                "SELECT ';'; ROLLBACK",
                "  (COMMIT)"
            })
    void transactionControlSentAsSqlIsRefusedAndTheWorkRollsBack(String sql) throws Exception {
        var gate = POOL.bulkhead(1, 0);
        for (int how = 0; how < 3; how++) {
            long id = Db.newId();
            int way = how;
            assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                        Db.insert(c, id);
                        Db.send(c, sql, way);
                        return null;
                    }))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("db-bulkhead owns this transaction")
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25000"));
            assertThat(Db.rows(id)).as("%s via %d: nothing committed", sql, way).isZero();
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "SELECT 'COMMIT'",
                "SELECT 1 -- COMMIT",
                "SELECT $$ROLLBACK$$",
                "SELECT $tag$; COMMIT; $tag$",
                "SELECT 1 /* ; COMMIT */",
                "SELECT E'it\\'s; COMMIT'",
                "SELECT \"commit\" FROM (SELECT 1 AS \"commit\") t",
                "SAVEPOINT s1; ROLLBACK TO SAVEPOINT s1",
                "SAVEPOINT s2; ROLLBACK WORK TO s2",
                "SELECT 1 AS begin_at",
                // The session's words too (SessionStateContractTest refuses them as statements).
                "SELECT 'SET search_path TO nowhere; RESET ALL'",
                "SELECT 1 /* LISTEN x; DISCARD ALL */",
                "-- SET ROLE other\nSELECT 1",
                "SELECT $$SELECT pg_advisory_lock(1)$$",
                "SELECT 1 AS set_config",
                "SELECT set_config FROM (SELECT 1 AS set_config) t",
                "SELECT \"set_config\" FROM (SELECT 1 AS set_config) t",
                "SELECT 1 AS pg_advisory_lock",
                "SELECT 'x' AS \"CREATE TEMP TABLE t\""
            })
    void savepointsAndWordsInsideLiteralsAndCommentsAreAllowed(String sql) throws Exception {
        var gate = POOL.bulkhead(1, 0);
        long id = Db.newId();
        gate.transaction(Duration.ZERO, c -> {
            Db.insert(c, id);
            try (var s = c.createStatement()) {
                s.execute(sql);
            }
            return null;
        });
        assertThat(Db.rows(id)).isEqualTo(1);
    }

    interface Setter {
        void call(Connection c) throws SQLException;
    }

    static Map<String, Setter> setters() {
        return Map.of(
                "setReadOnly", c -> c.setReadOnly(true),
                "setTransactionIsolation", c -> c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE),
                "setCatalog", c -> c.setCatalog("other"),
                "setSchema", c -> c.setSchema("pg_catalog"),
                "setNetworkTimeout", c -> c.setNetworkTimeout(Runnable::run, 10),
                "setHoldability", c -> c.setHoldability(ResultSet.CLOSE_CURSORS_AT_COMMIT),
                "setTypeMap", c -> c.setTypeMap(Map.of()),
                "setClientInfo", c -> c.setClientInfo("ApplicationName", "hijacked"),
                "setClientInfo(Properties)", c -> c.setClientInfo(new Properties()),
                "abort", c -> c.abort(Runnable::run));
    }

    @Test
    void sessionStateSettersAndAbortAreRefusedAndTheSessionIsUnchanged() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String before = sessionState(gate);
        List<String> refused = new ArrayList<>();
        for (var setter : setters().entrySet()) {
            long id = Db.newId();
            assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                        Db.insert(c, id);
                        setter.getValue().call(c);
                        return null;
                    }))
                    .as(setter.getKey())
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("25000"))
                    .satisfies(e -> refused.add(setter.getKey()));
            assertThat(Db.rows(id)).as(setter.getKey()).isZero();
        }
        assertThat(refused).hasSize(10);
        assertThat(sessionState(gate))
                .as("what the next transaction on the pooled connection sees")
                .isEqualTo(before);
    }

    private static String sessionState(DbBulkhead gate) throws Exception {
        return gate.transaction(Duration.ZERO, c -> {
            try (var s = c.createStatement();
                    var r = s.executeQuery(
                            "SELECT current_setting('search_path') || '/' "
                                    + "|| current_setting('transaction_isolation') || '/' || current_setting('application_name')")) {
                r.next();
                return r.getString(1) + "/" + c.isReadOnly() + "/" + c.getHoldability();
            }
        });
    }

    @Test
    void unwrappingReachesTheDriverForCopyAndTheRowsCommitWithTheTransaction() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        long first = Db.newId();
        long second = Db.newId();
        long copied = gate.transaction(Duration.ZERO, c -> {
            assertThat(c.isWrapperFor(PGConnection.class)).isTrue();
            var copy = c.unwrap(PGConnection.class).getCopyAPI();
            try {
                return copy.copyIn(
                        "COPY bulkhead_items (id, note) FROM STDIN",
                        new StringReader(first + "\tcopied\n" + second + "\tcopied\n"));
            } catch (java.io.IOException e) {
                throw new SQLException(e);
            }
        });
        assertThat(copied).isEqualTo(2);
        assertThat(Db.rows(first) + Db.rows(second)).isEqualTo(2);
    }

    @Test
    void anArraysResultSetLeadsBackToTheGuardNotToTheDriversConnection() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        long id = Db.newId();
        var reached = new ArrayList<Connection>();
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    Db.insert(c, id);
                    reached.add(c);
                    try (var s = c.createStatement();
                            var r = s.executeQuery("SELECT ARRAY[1, 2, 3], ARRAY['a', 'b']")) {
                        r.next();
                        Array numbers = r.getArray(1);
                        assertThat(numbers.toString())
                                .as("the driver's text of the array")
                                .isEqualTo("{1,2,3}");
                        reached.add(numbers.getResultSet().getStatement().getConnection());
                        reached.add(((Array) r.getObject(2))
                                .getResultSet(1, 1)
                                .getStatement()
                                .getConnection());
                        reached.add(c.createArrayOf("int4", new Integer[] {1})
                                .getResultSet()
                                .getStatement()
                                .getConnection());
                        reached.getLast().commit();
                    }
                    return null;
                }))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("db-bulkhead owns this transaction");
        assertThat(reached)
                .as("the connection work got, and what each array led back to")
                .hasSize(4)
                .allSatisfy(connection -> assertThat(connection).isSameAs(reached.getFirst()));
        assertThat(Db.rows(id))
                .as("the commit was refused: told failed, nothing committed")
                .isZero();
    }

    @Test
    void aGuardedArrayGivenBackToTheDriverIsTheDriversOwn() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        String sums = gate.transaction(Duration.ZERO, c -> {
            Array created = c.createArrayOf("int4", new Integer[] {1, 2, 3});
            Array read;
            try (var s = c.createStatement();
                    var r = s.executeQuery("SELECT ARRAY[10, 20]")) {
                r.next();
                read = r.getArray(1);
            }
            try (var p = c.prepareStatement("SELECT (SELECT sum(x) FROM unnest(?::int[]) x) || '/' "
                    + "|| (SELECT sum(x) FROM unnest(?::int[]) x)")) {
                p.setArray(1, created);
                p.setObject(2, read);
                try (var r = p.executeQuery()) {
                    r.next();
                    return r.getString(1);
                }
            }
        });
        assertThat(sums).isEqualTo("6/30");
    }
}
