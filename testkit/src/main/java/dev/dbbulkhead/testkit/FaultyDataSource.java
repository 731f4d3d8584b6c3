package dev.dbbulkhead.testkit;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Wraps a real data source (a pool over the real PostgreSQL) and injects faults on purpose: exceptions at
 * {@code getConnection}, {@code setAutoCommit}, {@code commit} (before or after the real commit), {@code rollback}
 * and {@code close} (after the real close, so the pool never loses a connection), plus hooks that run at those
 * points (to observe permits, or to block on a latch). Faults fire with a probability from a seeded
 * {@link Random}, so a run is reproducible from its seed.
 *
 * <p>Thread-safe.
 */
public final class FaultyDataSource implements DataSource {
    /** Where a fault can be injected. */
    public enum Point {
        GET_CONNECTION,
        SET_AUTO_COMMIT,
        /** Throws instead of committing: the server rolls back when the connection is cleaned. */
        COMMIT,
        /** Commits for real, then throws: a lost acknowledgement. */
        COMMIT_AFTER,
        ROLLBACK,
        /** Closes for real (the connection goes back to the pool), then throws. */
        CLOSE
    }

    private final DataSource real;
    private final Random random;
    private final Map<Point, Double> probabilities = new EnumMap<>(Point.class);
    private final Map<Point, Consumer<Connection>> hooks = new EnumMap<>(Point.class);
    private final Map<Point, AtomicInteger> injected = new EnumMap<>(Point.class);
    private final Map<Point, Supplier<? extends Throwable>> faults = new EnumMap<>(Point.class);
    private final AtomicInteger open = new AtomicInteger();

    public FaultyDataSource(DataSource real, long seed) {
        this.real = real;
        this.random = new Random(seed);
        for (Point p : Point.values()) {
            injected.put(p, new AtomicInteger());
        }
    }

    public FaultyDataSource(DataSource real) {
        this(real, 0);
    }

    /** Every call at {@code point} fails. */
    public synchronized FaultyDataSource fail(Point point) {
        return fail(point, 1.0);
    }

    /** A call at {@code point} fails with {@code probability} (0 turns the fault off). */
    public synchronized FaultyDataSource fail(Point point, double probability) {
        probabilities.put(point, probability);
        return this;
    }

    /**
     * Every call at {@code point} fails with what {@code fault} supplies (an {@link Error}, a runtime exception)
     * instead of the default {@code SQLException} with SQLState 08006; same places as {@link #fail(Point)}.
     */
    public synchronized FaultyDataSource fail(Point point, Supplier<? extends Throwable> fault) {
        faults.put(point, fault);
        return fail(point, 1.0);
    }

    /** Runs {@code hook} on the real connection each time a call reaches {@code point} (before any fault). */
    public synchronized FaultyDataSource onCall(Point point, Consumer<Connection> hook) {
        hooks.put(point, hook);
        return this;
    }

    private AtomicInteger counter(Point point) {
        return Objects.requireNonNull(injected.get(point), "every point has a counter");
    }

    /** How many faults were injected at {@code point}. */
    public int injected(Point point) {
        return counter(point).get();
    }

    /** Connections handed out and not yet closed through this wrapper. */
    public int openConnections() {
        return open.get();
    }

    private boolean fires(Point point) {
        double p;
        synchronized (this) {
            p = probabilities.getOrDefault(point, 0.0);
            if (p <= 0 || (p < 1 && random.nextDouble() >= p)) {
                p = 0;
            }
        }
        if (p > 0) {
            counter(point).incrementAndGet();
            return true;
        }
        return false;
    }

    private void hook(Point point, @Nullable Connection connection) {
        Consumer<Connection> hook;
        synchronized (this) {
            hook = hooks.get(point);
        }
        if (hook != null) {
            hook.accept(connection);
        }
    }

    /** Throws {@code t} whatever its type: an injected fault may be a checked exception nobody declares. */
    @SuppressWarnings({"unchecked", "TypeParameterUnusedInFormals"}) // the point: T is whatever the caller needs
    public static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }

    private Throwable injectedFault(Point point) {
        Supplier<? extends Throwable> fault;
        synchronized (this) {
            fault = faults.get(point);
        }
        // 08006: connection failure, what a broken network looks like to the driver.
        return fault != null ? fault.get() : new SQLException("injected fault at " + point, "08006");
    }

    @Override
    public @Nullable Connection getConnection() throws SQLException {
        hook(Point.GET_CONNECTION, null);
        if (fires(Point.GET_CONNECTION)) {
            throw FaultyDataSource.<SQLException>sneaky(injectedFault(Point.GET_CONNECTION));
        }
        Connection connection = real.getConnection();
        if (connection == null) {
            return null;
        }
        open.incrementAndGet();
        return (Connection) Proxy.newProxyInstance(
                Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, new Handler(connection));
    }

    private final class Handler implements InvocationHandler {
        private final Connection connection;
        private boolean closed;

        Handler(Connection connection) {
            this.connection = connection;
        }

        @Override
        public @Nullable Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            String name = method.getName();
            int arity = args == null ? 0 : args.length;
            if (name.equals("setAutoCommit")) {
                hook(Point.SET_AUTO_COMMIT, connection);
                if (fires(Point.SET_AUTO_COMMIT)) {
                    throw injectedFault(Point.SET_AUTO_COMMIT);
                }
            } else if (name.equals("commit")) {
                hook(Point.COMMIT, connection);
                if (fires(Point.COMMIT)) {
                    throw injectedFault(Point.COMMIT);
                }
                if (fires(Point.COMMIT_AFTER)) {
                    connection.commit();
                    throw injectedFault(Point.COMMIT_AFTER);
                }
            } else if (name.equals("rollback") && arity == 0) {
                hook(Point.ROLLBACK, connection);
                if (fires(Point.ROLLBACK)) {
                    throw injectedFault(Point.ROLLBACK);
                }
            } else if (name.equals("close")) {
                hook(Point.CLOSE, connection);
                boolean wasOpen = !closed;
                closed = true;
                try {
                    connection.close();
                } finally {
                    // HikariCP's close() can throw (a rollback on a killed backend) and still recycle the
                    // connection: it was handed back either way.
                    if (wasOpen) {
                        open.decrementAndGet();
                    }
                }
                if (fires(Point.CLOSE)) {
                    throw injectedFault(Point.CLOSE);
                }
                return null;
            }
            try {
                return method.invoke(connection, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("FaultyDataSource hands out pool connections only");
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return real.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        real.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        real.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return real.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return real.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        return real.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || real.isWrapperFor(iface);
    }
}
