package dev.dbbulkhead.tools.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** A failure that is the server's is told apart from the SQL's, on the real server. */
class ServerLimitsTest {
    @Test
    void aMissingDatabaseIsTheServersAndASyntaxErrorIsNot() throws Exception {
        TestDatabase db = TestDatabase.get();
        String url = db.jdbcUrl().replaceFirst("(//[^/]+/)[^?]*", "$1db_bulkhead_no_such_database");
        var missing = catchSql(() -> DriverManager.getConnection(url, db.user(), db.password()));
        assertThat(missing.getSQLState()).isEqualTo("3D000");
        assertThat(ServerLimits.isServers(missing)).isTrue();
        assertThat(ServerLimits.serverFailure(missing)).startsWith("the server refused (not the SQL given): ");
        try (Connection c = db.connect()) {
            var syntax = catchSql(() -> {
                try (var s = c.createStatement()) {
                    s.execute("SELEC 1");
                }
            });
            assertThat(ServerLimits.isServers(syntax)).as(syntax.getSQLState()).isFalse();
            int[] free = ServerLimits.freeConnections(c);
            assertThat(free[2]).as("this connection is open").isPositive();
            assertThat(free[0]).isLessThan(free[1]);
        }
    }

    @Test
    void tooManyConnectionsAreRefusedWithBothNumbers() {
        assertThatThrownBy(() -> ServerLimits.checkFreeConnections(TestDatabase.get(), "--pool", 1_000_000))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("--pool=1000000 is more connections than the server has free: ")
                .hasMessageContaining("max_connections ");
    }

    private static SQLException catchSql(Attempt attempt) {
        try {
            attempt.run();
        } catch (SQLException e) {
            return e;
        }
        throw new AssertionError("no SQLException");
    }

    @FunctionalInterface
    private interface Attempt {
        void run() throws SQLException;
    }
}
