package dev.dbbulkhead.internal;

import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.Statement;

/**
 * The statements, result sets, arrays and metadata handed out inside {@code work}, so that the guard has no side
 * door: their {@code getConnection()} (and a result set's {@code getStatement()}, which an array's
 * {@code getResultSet()} also leads to) lead back to the {@link GuardedConnection}, never to the pool's connection;
 * SQL text they send ({@code execute*}, {@code addBatch}) is checked ({@link GuardedConnection#check}); every result
 * set and array they return, also as an object (a refcursor, an array column read with {@code getObject}), is
 * guarded, and a guarded array given back to the driver ({@code setArray}, {@code setObject}, {@code updateArray})
 * reaches it as the driver's own; and they expire with the transaction ({@code close()} then does nothing and
 * {@code isClosed()} is true, every other call fails with SQLState 08003). {@code unwrap} reaches the driver's
 * object, as on the connection. The other JDBC objects ({@code Blob}, {@code Clob}, {@code SQLXML}, {@code Struct},
 * {@code Ref}) have no getter that returns a connection, a statement or a result set
 * ({@code GuardedJdbcCoverageTest} checks this over every interface of {@code java.sql}).
 *
 * <p>The wrappers ({@code GuardedStatement}, {@code GuardedPreparedStatement}, {@code GuardedCallableStatement},
 * {@code GuardedResultSet}, {@code GuardedMetaData}, {@code GuardedArray}) are concrete classes generated at build time
 * from the {@code java.sql} interfaces by {@code core/src/build/GuardedJdbcGenerator.java}: one field load and one
 * check per call, no reflection, every method of every interface covered ({@code GuardedJdbcCoverageTest}).
 */
final class GuardedJdbc {
    private GuardedJdbc() {}

    /** The guarded form of {@code raw}, of the most specific kind it is; a driver's null stays null. */
    @SuppressWarnings({"unchecked", "NullAway"}) // a driver returning null gets null back, not a guard around nothing
    static <S extends Statement> S statement(GuardedConnection connection, S raw) {
        if (raw == null) {
            return null;
        }
        Statement guarded = raw instanceof CallableStatement c
                ? new GuardedCallableStatement(connection, c)
                : raw instanceof PreparedStatement p
                        ? new GuardedPreparedStatement(connection, p)
                        : new GuardedStatement(connection, raw);
        return (S) guarded;
    }

    @SuppressWarnings("NullAway") // as above
    static DatabaseMetaData metaData(GuardedConnection connection, DatabaseMetaData raw) {
        return raw == null ? null : new GuardedMetaData(connection, raw);
    }

    static Array array(GuardedConnection connection, Array raw) {
        return raw == null || raw instanceof GuardedArray ? raw : new GuardedArray(connection, raw);
    }

    /** What the driver is given for an array or an object parameter: its own array, never the guard's. */
    static Object unguard(Object value) {
        return value instanceof GuardedArray guarded ? guarded.delegate() : value;
    }

    static Array unguard(Array value) {
        return value instanceof GuardedArray guarded ? guarded.delegate() : value;
    }
}
