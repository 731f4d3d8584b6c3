package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.logging.Level;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A database whose rules db-bulkhead does not know (H2, in memory): admission, permits, the owned transaction and the
 * JDBC-level guard work as on PostgreSQL, transaction-control SQL is still refused, its own SQL (a {@code SET}, which
 * means something else on each database) is not; and the barrier says once, in one line, which promises it cannot
 * keep there. And on MariaDB, that line names what MySQL's rules leave out.
 */
class OtherDatabasesTest {
    private static HikariDataSource h2() {
        var config = new HikariConfig();
        config.setJdbcUrl("jdbc:h2:mem:other_" + Db.newId() + ";DB_CLOSE_DELAY=-1");
        config.setMaximumPoolSize(1);
        return new HikariDataSource(config);
    }

    @Test
    @Tag("no-db")
    void onH2TheGuardAndTheTransactionWorkAndTheUnkeptPromisesAreSaidOnce() throws Exception {
        try (HikariDataSource pool = h2();
                var logs = new Logs(Level.WARNING)) {
            var gate = new DbBulkhead(pool, 1, 0);
            gate.transaction(Duration.ofSeconds(5), c -> Db.update(c, "CREATE TABLE t (id INT PRIMARY KEY)"));
            int inserted = gate.transaction(Duration.ofSeconds(5), c -> {
                Db.update(c, "SET LOCK_TIMEOUT 1000"); // H2's own SET: not the guard's to judge
                return Db.update(c, "INSERT INTO t VALUES (1)");
            });
            assertThat(inserted).isOne();
            assertThatThrownBy(() -> gate.transaction(Duration.ofSeconds(5), c -> {
                        Db.update(c, "INSERT INTO t VALUES (2)");
                        return Db.update(c, "COMMIT");
                    }))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("db-bulkhead owns this transaction");
            assertThatThrownBy(() -> gate.transaction(Duration.ofSeconds(5), c -> {
                        Db.update(c, "INSERT INTO t VALUES (3)");
                        throw new IllegalStateException("work failed");
                    }))
                    .hasMessage("work failed");
            int rows = gate.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT count(*) FROM t"));
            assertThat(rows).as("only the committed insert").isOne();
            assertThat(gate.available()).isEqualTo(1);
            assertThat(logs.messages())
                    .filteredOn(m -> m.startsWith("db-bulkhead on H2"))
                    .hasSize(1)
                    .first()
                    .asString()
                    .contains("rules db-bulkhead does not know")
                    .contains("deadlines");
        }
    }

    @Test
    void onMariaDbTheLineNamesWhatMySqlsRulesLeaveOut() throws Exception {
        try (HikariDataSource pool = MariaDb.pool(MariaDb.Driver.MARIADB, 1);
                var logs = new Logs(Level.WARNING)) {
            var gate = new DbBulkhead(pool, 1, 0);
            for (int i = 0; i < 3; i++) {
                gate.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1"));
            }
            assertThat(logs.messages())
                    .filteredOn(m -> m.startsWith("db-bulkhead on "))
                    .hasSize(1)
                    .first()
                    .asString()
                    .contains("MySQL rules")
                    .contains("CALL");
        }
    }
}
