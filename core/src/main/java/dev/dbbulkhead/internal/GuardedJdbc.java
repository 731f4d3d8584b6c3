package dev.dbbulkhead.internal;

import java.sql.CallableStatement;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.Statement;

/**
 * The statements, result sets and metadata handed out inside {@code work}, so that the guard has no side door:
 * their {@code getConnection()} (and a result set's {@code getStatement()}) lead back to the
 * {@link GuardedConnection}, never to the pool's connection; SQL text they send ({@code execute*}, {@code addBatch})
 * is checked for transaction control ({@link TransactionControl}); every result set they return, also as an object
 * (a refcursor), is guarded; and they expire with the transaction ({@code close()} then does nothing and
 * {@code isClosed()} is true, every other call fails with SQLState 08003). {@code unwrap} reaches the driver's
 * object, as on the connection.
 *
 * <p>The wrappers ({@code GuardedStatement}, {@code GuardedPreparedStatement}, {@code GuardedCallableStatement},
 * {@code GuardedResultSet}, {@code GuardedMetaData}) are concrete classes generated at build time from the
 * {@code java.sql} interfaces by {@code core/src/build/GuardedJdbcGenerator.java}: one field load and one check per
 * call, no reflection, every method of every interface covered ({@code GuardedJdbcCoverageTest}).
 */
final class GuardedJdbc {
    private GuardedJdbc() {}

    /** The guarded form of {@code raw}, of the most specific kind it is. */
    @SuppressWarnings("unchecked")
    static <S extends Statement> S statement(GuardedConnection connection, S raw) {
        if (raw == null) {
            return null;
        }
        Statement guarded = raw instanceof CallableStatement c ? new GuardedCallableStatement(connection, c)
                : raw instanceof PreparedStatement p ? new GuardedPreparedStatement(connection, p)
                : new GuardedStatement(connection, raw);
        return (S) guarded;
    }

    static DatabaseMetaData metaData(GuardedConnection connection, DatabaseMetaData raw) {
        return raw == null ? null : new GuardedMetaData(connection, raw);
    }
}
