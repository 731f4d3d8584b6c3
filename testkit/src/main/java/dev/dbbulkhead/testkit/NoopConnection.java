package dev.dbbulkhead.testkit;

import java.lang.reflect.Proxy;
import java.sql.Array;
import java.sql.Blob;
import java.sql.CallableStatement;
import java.sql.Clob;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.NClob;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLWarning;
import java.sql.SQLXML;
import java.sql.Savepoint;
import java.sql.Statement;
import java.sql.Struct;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * A connection that does nothing, so that a benchmark measures the barrier's own path and the permit and failure-path
 * tests run in milliseconds without a database (wrap it in {@link FaultyDataSource} to inject faults): auto-commit,
 * commit, rollback and close are field writes. Anything a transaction would not call throws
 * {@link SQLFeatureNotSupportedException}.
 */
public final class NoopConnection implements Connection {
    private boolean autoCommit = true;
    private boolean closed;

    void reopen() {
        closed = false;
    }

    // What a transaction calls.
    @Override
    public void setAutoCommit(boolean autoCommit) {
        this.autoCommit = autoCommit;
    }

    @Override
    public boolean getAutoCommit() {
        return autoCommit;
    }

    @Override
    public void commit() {}

    @Override
    public void rollback() {}

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public boolean isReadOnly() {
        return false;
    }

    @Override
    public int getTransactionIsolation() {
        return TRANSACTION_READ_COMMITTED;
    }

    private static SQLException unused() {
        return new SQLFeatureNotSupportedException("NoopConnection has no database behind it");
    }

    // Everything else.
    @Override
    public Statement createStatement() throws SQLException {
        throw unused();
    }

    @Override
    public PreparedStatement prepareStatement(String sql) throws SQLException {
        throw unused();
    }

    @Override
    public CallableStatement prepareCall(String sql) throws SQLException {
        throw unused();
    }

    @Override
    public String nativeSQL(String sql) throws SQLException {
        throw unused();
    }

    /**
     * Names a database of no known kind, as a barrier asks on its first connection (then it logs once which promises
     * such a database does not get); anything else it is asked throws.
     */
    @Override
    public DatabaseMetaData getMetaData() {
        return (DatabaseMetaData) Proxy.newProxyInstance(
                DatabaseMetaData.class.getClassLoader(),
                new Class<?>[] {DatabaseMetaData.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getDatabaseProductName", "getDriverName" -> "NoopConnection";
                    case "getDatabaseProductVersion", "getDriverVersion" -> "0";
                    case "getConnection" -> this;
                    default -> throw unused();
                });
    }

    @Override
    public void setReadOnly(boolean readOnly) throws SQLException {
        throw unused();
    }

    @Override
    public void setCatalog(String catalog) throws SQLException {
        throw unused();
    }

    @Override
    public String getCatalog() throws SQLException {
        throw unused();
    }

    @Override
    public void setTransactionIsolation(int level) throws SQLException {
        throw unused();
    }

    @Override
    public @Nullable SQLWarning getWarnings() {
        return null;
    }

    @Override
    public void clearWarnings() {}

    @Override
    public Statement createStatement(int a, int b) throws SQLException {
        throw unused();
    }

    @Override
    public PreparedStatement prepareStatement(String s, int a, int b) throws SQLException {
        throw unused();
    }

    @Override
    public CallableStatement prepareCall(String s, int a, int b) throws SQLException {
        throw unused();
    }

    @Override
    public Map<String, Class<?>> getTypeMap() throws SQLException {
        throw unused();
    }

    @Override
    public void setTypeMap(Map<String, Class<?>> map) throws SQLException {
        throw unused();
    }

    @Override
    public void setHoldability(int holdability) throws SQLException {
        throw unused();
    }

    @Override
    public int getHoldability() throws SQLException {
        throw unused();
    }

    @Override
    public Savepoint setSavepoint() throws SQLException {
        throw unused();
    }

    @Override
    public Savepoint setSavepoint(String name) throws SQLException {
        throw unused();
    }

    @Override
    public void rollback(Savepoint savepoint) throws SQLException {
        throw unused();
    }

    @Override
    public void releaseSavepoint(Savepoint savepoint) throws SQLException {
        throw unused();
    }

    @Override
    public Statement createStatement(int a, int b, int c) throws SQLException {
        throw unused();
    }

    @Override
    public PreparedStatement prepareStatement(String s, int a, int b, int c) throws SQLException {
        throw unused();
    }

    @Override
    public CallableStatement prepareCall(String s, int a, int b, int c) throws SQLException {
        throw unused();
    }

    @Override
    public PreparedStatement prepareStatement(String s, int a) throws SQLException {
        throw unused();
    }

    @Override
    public PreparedStatement prepareStatement(String s, int[] a) throws SQLException {
        throw unused();
    }

    @Override
    public PreparedStatement prepareStatement(String s, String[] a) throws SQLException {
        throw unused();
    }

    @Override
    public Clob createClob() throws SQLException {
        throw unused();
    }

    @Override
    public Blob createBlob() throws SQLException {
        throw unused();
    }

    @Override
    public NClob createNClob() throws SQLException {
        throw unused();
    }

    @Override
    public SQLXML createSQLXML() throws SQLException {
        throw unused();
    }

    @Override
    public boolean isValid(int timeout) {
        return !closed;
    }

    @Override
    public void setClientInfo(String name, String value) {}

    @Override
    public void setClientInfo(Properties properties) {}

    @Override
    public @Nullable String getClientInfo(String name) {
        return null;
    }

    @Override
    public Properties getClientInfo() {
        return new Properties();
    }

    @Override
    public Array createArrayOf(String t, Object[] e) throws SQLException {
        throw unused();
    }

    @Override
    public Struct createStruct(String t, Object[] a) throws SQLException {
        throw unused();
    }

    @Override
    public void setSchema(String schema) throws SQLException {
        throw unused();
    }

    @Override
    public String getSchema() throws SQLException {
        throw unused();
    }

    @Override
    public void abort(Executor executor) throws SQLException {
        throw unused();
    }

    @Override
    public void setNetworkTimeout(Executor e, int ms) throws SQLException {
        throw unused();
    }

    @Override
    public int getNetworkTimeout() throws SQLException {
        throw unused();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        throw unused();
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }
}
