package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.SQLClientInfoException;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Struct;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The connection handed to {@code work}: the barrier owns the transaction, so {@code commit}, {@code rollback()},
 * {@code setAutoCommit}, {@code close} and {@code abort} are refused (savepoints, and rolling back to one, stay
 * allowed), and so is transaction-control SQL ({@link TransactionControl}). Session-state setters
 * ({@code setReadOnly}, {@code setTransactionIsolation}, {@code setCatalog}, {@code setSchema},
 * {@code setNetworkTimeout}, {@code setHoldability}, {@code setTypeMap}, {@code setClientInfo}) are refused too: the
 * change would outlive the transaction on the pooled connection, and read-only and isolation belong in
 * {@code TransactionOptions}. Statements, result sets and metadata it hands out lead back to it
 * ({@link GuardedJdbc}), and every call fails once {@code transaction()} has finished with it.
 *
 * <p>Used by one thread at a time, like the JDBC connection it wraps. {@link #expire()} is a release store, seen
 * at once by the thread that ran work and by any thread the connection was handed to through a
 * happens-before edge; a thread that raced with the transaction without one may see it late. It catches
 * mistakes, it is not a security boundary.
 */
final class GuardedConnection implements Connection {
    static final String OWNED = "db-bulkhead owns this transaction: work must not call ";
    static final String EXPIRED = "this connection belonged to a db-bulkhead transaction that has finished; "
            + "do not keep the Connection (or its statements) beyond work";

    private static final VarHandle EXPIRED_FLAG;

    static {
        try {
            EXPIRED_FLAG = MethodHandles.lookup().findVarHandle(GuardedConnection.class, "expired", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Connection delegate;
    private final Dialect dialect;

    @SuppressWarnings("UnusedVariable") // through EXPIRED_FLAG
    private boolean expired;
    /**
     * The first failure by which the server rolled back the whole transaction while work may go on (InnoDB's
     * deadlock), or null: such a transaction is rolled back, never committed piecewise. Volatile, as below.
     */
    private volatile @Nullable SQLException rolledBackWhole;
    /**
     * The first statement sent that may change the session in a way its text cannot show (a {@code DO} block, a
     * {@code CALL}, ...), or null: the runner then checks the session after the transaction ({@link SessionState}).
     * Volatile: work may hand the connection to another thread, and the runner reads it once, after work.
     */
    private volatile @Nullable String sessionRisk;
    /**
     * The session's transaction ends ({@link Dialect#transactionEnds}) before the first procedure work called, or
     * null: the runner compares them with the count after work to learn whether a procedure ended the transaction.
     */
    private volatile long @Nullable [] endsBeforeProcedure;
    /**
     * The user variables work assigned (MySQL and MariaDB), or null: they outlive the transaction on the server, so
     * the runner sets them back to {@code NULL} when it ends ({@link MySqlStatements#assignedVariables}). Guarded by
     * {@code this}: work may send statements from several threads.
     */
    private @Nullable Set<String> userVariables;
    /** The lease whose kind the first statement's shape may refine ({@link Kinds#refine}), until that statement. */
    private @Nullable PermitLease refining;

    public GuardedConnection(Connection delegate, Dialect dialect) {
        this.delegate = delegate;
        this.dialect = dialect;
    }

    /** Notes a statement's failure that rolled back the whole transaction on the server; returns it to be thrown. */
    SQLException failed(SQLException failure) {
        if (rolledBackWhole == null && dialect.rolledBackWhole(failure)) {
            rolledBackWhole = failure;
        }
        return failure;
    }

    /** See {@link #endsBeforeProcedure}. */
    long @Nullable [] endsBeforeProcedure() {
        return endsBeforeProcedure;
    }

    /** The failure by which the server rolled back the whole transaction during work, or null. */
    @Nullable
    SQLException rolledBackWhole() {
        return rolledBackWhole;
    }

    /** Makes every later call fail: the transaction is over and the connection goes back to the pool. */
    public void expire() {
        // A release store: no full fence on the hot path (a volatile write costs one on x86).
        EXPIRED_FLAG.setRelease(this, true);
    }

    boolean isExpired() {
        return (boolean) EXPIRED_FLAG.getAcquire(this);
    }

    Connection open() throws SQLException {
        if (isExpired()) {
            throw new SQLException(EXPIRED, "08003");
        }
        return delegate;
    }

    private static SQLException refused(String call) {
        // 25000: invalid transaction state.
        return new SQLException(
                OWNED + call + "; it commits when work returns and rolls back when work throws", "25000");
    }

    /** The open connection, once {@code sql} is known not to end or start a transaction nor change the session. */
    private Connection checked(String sql) throws SQLException {
        Connection open = open();
        check(sql);
        return open;
    }

    /**
     * Refuses {@code sql} (SQLState 25000) when it ends or starts the transaction or changes the session beyond it;
     * notes it when it may change the session unseen ({@link TransactionControl}).
     */
    @SuppressWarnings("ReferenceEquality") // the constant itself, not any equal finding
    void check(String sql) throws SQLException {
        TransactionControl.Finding finding = dialect.inspect(sql);
        if (dialect instanceof Dialect.MySql mySql && sql != null && sql.indexOf('@') >= 0) {
            assigned(mySql.assignedVariables(sql));
        }
        if (finding != null && finding.refused()) {
            throw finding.refusal();
        }
        PermitLease lease = refining;
        if (lease != null) {
            refining = null;
            lease.firstStatement(sql, dialect instanceof Dialect.MySql);
        }
        if (finding == null) {
            return;
        }
        if (finding == TransactionControl.CALL && dialect.postgres() && SessionState.plainProcedure(delegate, sql)) {
            return; // a PL/pgSQL procedure whose body shows no session change, read as a DO block's is
        }
        if (finding == MySqlStatements.PROCEDURE) {
            if (endsBeforeProcedure == null) {
                endsBeforeProcedure = dialect.transactionEnds(delegate);
            }
            return;
        }
        if (sessionRisk == null) {
            sessionRisk = finding.command();
        }
    }

    private synchronized void assigned(Set<String> names) {
        if (!names.isEmpty()) {
            if (userVariables == null) {
                userVariables = new LinkedHashSet<>();
            }
            userVariables.addAll(names);
        }
    }

    /** Lets the first statement work sends refine {@code lease}'s kind by its shape (before it is sent). */
    void refineKind(PermitLease lease) {
        this.refining = lease;
    }

    /** The user variables work assigned, to be set back to {@code NULL}; empty if none. */
    synchronized Set<String> userVariables() {
        return userVariables == null ? Set.of() : Set.copyOf(userVariables);
    }

    /** What may have changed the session unseen (see {@link #check}), or null. */
    @Nullable
    String sessionRisk() {
        return sessionRisk;
    }

    /** A session setting that would outlive the transaction on the pooled connection. */
    private SQLException sessionState(String call, String instead) throws SQLException {
        open();
        return new SQLException(
                "db-bulkhead: work must not call " + call + ": the change would stay on the "
                        + "pooled connection after the transaction; " + instead,
                "25000");
    }

    private static final String OPTIONS = "use TransactionOptions (readOnly(), isolation(...)) instead";

    @Override
    public void commit() throws SQLException {
        open();
        throw refused("commit()");
    }

    @Override
    public void rollback() throws SQLException {
        open();
        throw refused("rollback() (throw from work to roll back; rollback(Savepoint) is allowed)");
    }

    @Override
    public void setAutoCommit(boolean autoCommit) throws SQLException {
        open();
        throw refused("setAutoCommit(" + autoCommit + ")");
    }

    @Override
    public void close() throws SQLException {
        open();
        throw refused("close() (the connection goes back to the pool when work returns)");
    }

    @Override
    public boolean isClosed() throws SQLException {
        return isExpired() || delegate.isClosed();
    }

    @Override
    public void rollback(Savepoint savepoint) throws SQLException {
        open().rollback(savepoint);
    }

    @Override
    public Savepoint setSavepoint() throws SQLException {
        return open().setSavepoint();
    }

    @Override
    public Savepoint setSavepoint(String name) throws SQLException {
        return open().setSavepoint(name);
    }

    @Override
    public void releaseSavepoint(Savepoint savepoint) throws SQLException {
        open().releaseSavepoint(savepoint);
    }

    @Override
    public boolean getAutoCommit() throws SQLException {
        return open().getAutoCommit();
    }

    @Override
    public Statement createStatement() throws SQLException {
        return GuardedJdbc.statement(this, open().createStatement());
    }

    @Override
    public PreparedStatement prepareStatement(String sql) throws SQLException {
        return GuardedJdbc.statement(this, checked(sql).prepareStatement(sql));
    }

    @Override
    public CallableStatement prepareCall(String sql) throws SQLException {
        return GuardedJdbc.statement(this, checked(sql).prepareCall(sql));
    }

    @Override
    public String nativeSQL(String sql) throws SQLException {
        return open().nativeSQL(sql);
    }

    @Override
    public DatabaseMetaData getMetaData() throws SQLException {
        return GuardedJdbc.metaData(this, open().getMetaData());
    }

    @Override
    public void setReadOnly(boolean readOnly) throws SQLException {
        throw sessionState("setReadOnly(" + readOnly + ")", OPTIONS);
    }

    @Override
    public boolean isReadOnly() throws SQLException {
        return open().isReadOnly();
    }

    @Override
    public void setCatalog(String catalog) throws SQLException {
        throw sessionState("setCatalog(" + catalog + ")", dialect.schemaAdvice());
    }

    @Override
    public String getCatalog() throws SQLException {
        return open().getCatalog();
    }

    @Override
    public void setTransactionIsolation(int level) throws SQLException {
        throw sessionState("setTransactionIsolation(" + level + ")", OPTIONS);
    }

    @Override
    public int getTransactionIsolation() throws SQLException {
        return open().getTransactionIsolation();
    }

    @Override
    public SQLWarning getWarnings() throws SQLException {
        return open().getWarnings();
    }

    @Override
    public void clearWarnings() throws SQLException {
        open().clearWarnings();
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency) throws SQLException {
        return GuardedJdbc.statement(this, open().createStatement(resultSetType, resultSetConcurrency));
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int resultSetType, int resultSetConcurrency)
            throws SQLException {
        return GuardedJdbc.statement(this, checked(sql).prepareStatement(sql, resultSetType, resultSetConcurrency));
    }

    @Override
    public CallableStatement prepareCall(String sql, int resultSetType, int resultSetConcurrency) throws SQLException {
        return GuardedJdbc.statement(this, checked(sql).prepareCall(sql, resultSetType, resultSetConcurrency));
    }

    @Override
    public Map<String, Class<?>> getTypeMap() throws SQLException {
        return open().getTypeMap();
    }

    @Override
    public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
        throw sessionState("setTypeMap(...)", "map types on the values you read instead");
    }

    @Override
    public void setHoldability(int holdability) throws SQLException {
        throw sessionState("setHoldability(" + holdability + ")", "pass the holdability to createStatement instead");
    }

    @Override
    public int getHoldability() throws SQLException {
        return open().getHoldability();
    }

    @Override
    public Statement createStatement(int resultSetType, int resultSetConcurrency, int resultSetHoldability)
            throws SQLException {
        return GuardedJdbc.statement(
                this, open().createStatement(resultSetType, resultSetConcurrency, resultSetHoldability));
    }

    @Override
    public PreparedStatement prepareStatement(
            String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        return GuardedJdbc.statement(
                this, checked(sql).prepareStatement(sql, resultSetType, resultSetConcurrency, resultSetHoldability));
    }

    @Override
    public CallableStatement prepareCall(
            String sql, int resultSetType, int resultSetConcurrency, int resultSetHoldability) throws SQLException {
        return GuardedJdbc.statement(
                this, checked(sql).prepareCall(sql, resultSetType, resultSetConcurrency, resultSetHoldability));
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int autoGeneratedKeys) throws SQLException {
        return GuardedJdbc.statement(this, checked(sql).prepareStatement(sql, autoGeneratedKeys));
    }

    @Override
    public PreparedStatement prepareStatement(String sql, int[] columnIndexes) throws SQLException {
        return GuardedJdbc.statement(this, checked(sql).prepareStatement(sql, columnIndexes));
    }

    @Override
    public PreparedStatement prepareStatement(String sql, String[] columnNames) throws SQLException {
        return GuardedJdbc.statement(this, checked(sql).prepareStatement(sql, columnNames));
    }

    @Override
    public Clob createClob() throws SQLException {
        return open().createClob();
    }

    @Override
    public Blob createBlob() throws SQLException {
        return open().createBlob();
    }

    @Override
    public NClob createNClob() throws SQLException {
        return open().createNClob();
    }

    @Override
    public SQLXML createSQLXML() throws SQLException {
        return open().createSQLXML();
    }

    @Override
    public boolean isValid(int timeout) throws SQLException {
        return open().isValid(timeout);
    }

    @Override
    public void setClientInfo(String name, String value) throws SQLClientInfoException {
        throw clientInfo();
    }

    @Override
    public void setClientInfo(Properties properties) throws SQLClientInfoException {
        throw clientInfo();
    }

    private SQLClientInfoException clientInfo() {
        return new SQLClientInfoException(
                isExpired()
                        ? EXPIRED
                        : "db-bulkhead: work must not call setClientInfo: "
                                + "the change would stay on the pooled connection after the transaction; set the "
                                + "application name on the pool instead",
                "25000",
                Map.of());
    }

    @Override
    public String getClientInfo(String name) throws SQLException {
        return open().getClientInfo(name);
    }

    @Override
    public Properties getClientInfo() throws SQLException {
        return open().getClientInfo();
    }

    @Override
    public Array createArrayOf(String typeName, Object[] elements) throws SQLException {
        return GuardedJdbc.array(this, open().createArrayOf(typeName, elements));
    }

    @Override
    public Struct createStruct(String typeName, Object[] attributes) throws SQLException {
        return open().createStruct(typeName, attributes);
    }

    @Override
    public void setSchema(String schema) throws SQLException {
        throw sessionState("setSchema(" + schema + ")", dialect.schemaAdvice());
    }

    @Override
    public String getSchema() throws SQLException {
        return open().getSchema();
    }

    @Override
    public void abort(Executor executor) throws SQLException {
        open();
        throw refused("abort() (the connection goes back to the pool when work returns)");
    }

    @Override
    public void setNetworkTimeout(Executor executor, int milliseconds) throws SQLException {
        throw sessionState("setNetworkTimeout(" + milliseconds + ")", "bound the operation with a Deadline instead");
    }

    @Override
    public int getNetworkTimeout() throws SQLException {
        return open().getNetworkTimeout();
    }

    /**
     * Unwrapping reaches the driver's connection (e.g. pgJDBC's {@code PGConnection} for the COPY API); the guard
     * rails do not follow it, and what is done with the unwrapped object is the caller's responsibility.
     */
    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        return open().unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || open().isWrapperFor(iface);
    }

    @Override
    public String toString() {
        return "GuardedConnection[" + (isExpired() ? "expired" : delegate) + "]";
    }
}
