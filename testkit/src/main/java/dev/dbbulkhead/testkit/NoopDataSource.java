package dev.dbbulkhead.testkit;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Hands out one {@link NoopConnection} per thread, reopened each time, like a pool with no contention and no
 * database. Its pool size is unknown to the barrier. Thread-safe.
 */
public final class NoopDataSource implements DataSource {
    private final ThreadLocal<NoopConnection> connections = ThreadLocal.withInitial(NoopConnection::new);

    @Override
    public Connection getConnection() {
        NoopConnection c = connections.get();
        c.reopen();
        return c;
    }

    @Override
    public Connection getConnection(String username, String password) {
        return getConnection();
    }

    @Override
    public @Nullable PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }
}
