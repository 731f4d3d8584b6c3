package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource.Point;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Regression, found while writing the contract suite: after {@code rollback()} failed, the cleanup restored
 * {@code setAutoCommit(true)}, which by the JDBC contract commits the open transaction, so the work that failed
 * was committed while its caller was told it failed.
 */
class FailedRollbackIsNotCommittedByRestoringAutoCommitTest {
    @Test
    void theWorkOfAFailedTransactionWhoseRollbackFailedIsNotCommitted() throws Exception {
        try (var pool = Db.pool(1)) {
            var gate = new DbBulkhead(new FaultyDataSource(pool).fail(Point.ROLLBACK), 1, 0);
            long id = Db.newId();
            assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                        Db.insert(c, id);
                        throw new SQLException("work failed after its insert");
                    }))
                    .hasMessage("work failed after its insert");
            assertThat(Db.rows(id)).isZero();
            try (var c = pool.getConnection()) {
                assertThat(c.getAutoCommit())
                        .as("the pool reset the connection")
                        .isTrue();
            }
        }
    }
}
