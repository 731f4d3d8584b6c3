package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Which failures mean that MySQL rolled back the whole transaction: a deadlock always, a lock wait timeout only where
 * the server rolls back on it ({@code innodb_rollback_on_timeout}, a server setting, off on the CI server, so the
 * MariaDB suite shows the deadlock on the server and this test the timeout's rule).
 */
@Tag("no-db")
class DialectTest {
    private static final SQLException DEADLOCK = new SQLTransactionRollbackException("Deadlock found", "40001", 1213);
    private static final SQLException LOCK_WAIT = new SQLException("Lock wait timeout exceeded", "HY000", 1205);
    private static final SQLException DUPLICATE = new SQLException("Duplicate entry", "23000", 1062);

    @Test
    void aDeadlockAlwaysAndALockWaitTimeoutOnlyWhenTheServerRollsBackOnIt() {
        var rollsBackOnTimeout = new Dialect.MySql("MariaDB", true, true, false, true);
        var statementOnly = new Dialect.MySql("MariaDB", true, true, false, false);
        assertThat(rollsBackOnTimeout.rolledBackWhole(DEADLOCK)).isTrue();
        assertThat(statementOnly.rolledBackWhole(DEADLOCK)).isTrue();
        assertThat(rollsBackOnTimeout.rolledBackWhole(LOCK_WAIT)).isTrue();
        assertThat(statementOnly.rolledBackWhole(LOCK_WAIT))
                .as("only the statement was rolled back")
                .isFalse();
        assertThat(rollsBackOnTimeout.rolledBackWhole(DUPLICATE))
                .as("a duplicate key: the statement only")
                .isFalse();
        assertThat(statementOnly.lockTimedOut(LOCK_WAIT)).isTrue();
    }

    @Test
    void onPostgreSqlAndElsewhereNoStatementFailureIsTakenForAWholeRollback() {
        assertThat(new Dialect.Postgres().rolledBackWhole(DEADLOCK)).isFalse();
        assertThat(new Dialect.Other("H2").rolledBackWhole(DEADLOCK)).isFalse();
        assertThat(new Dialect.Postgres().statementTimedOut(new SQLException("canceled", "57014")))
                .isTrue();
    }
}
