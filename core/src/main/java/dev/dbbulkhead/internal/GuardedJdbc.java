package dev.dbbulkhead.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

/**
 * The statements, result sets and metadata handed out inside {@code work}, so that the guard has no side door:
 * their {@code getConnection()} (and a result set's {@code getStatement()}) lead back to the
 * {@link GuardedConnection}, never to the pool's connection; SQL text they send is checked for transaction control
 * ({@link TransactionControl}); and they expire with the transaction ({@code close()} then does nothing and
 * {@code isClosed()} is true, every other call fails with SQLState 08003). {@code unwrap} reaches the driver's
 * object, as on the connection.
 */
final class GuardedJdbc implements InvocationHandler {
    private final GuardedConnection connection;
    private final Object delegate;
    /** For a result set: the guarded statement that produced it ({@code null}: wrap the driver's on demand). */
    private final Statement statement;

    private GuardedJdbc(GuardedConnection connection, Object delegate, Statement statement) {
        this.connection = connection;
        this.delegate = delegate;
        this.statement = statement;
    }

    static <S extends Statement> S statement(GuardedConnection connection, S raw) {
        if (raw == null) {
            return null;
        }
        Class<?> type = raw instanceof CallableStatement ? CallableStatement.class
                : raw instanceof PreparedStatement ? PreparedStatement.class : Statement.class;
        @SuppressWarnings("unchecked")
        S guarded = (S) proxy(type, new GuardedJdbc(connection, raw, null));
        return guarded;
    }

    static DatabaseMetaData metaData(GuardedConnection connection, DatabaseMetaData raw) {
        return raw == null ? null : (DatabaseMetaData) proxy(DatabaseMetaData.class,
                new GuardedJdbc(connection, raw, null));
    }

    private static Object proxy(Class<?> type, GuardedJdbc handler) {
        return Proxy.newProxyInstance(GuardedJdbc.class.getClassLoader(), new Class<?>[] {type}, handler);
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
        String name = method.getName();
        if (method.getDeclaringClass() == Object.class) {
            return switch (name) {
                case "equals" -> proxy == args[0];
                case "hashCode" -> System.identityHashCode(proxy);
                default -> "Guarded[" + (connection.isExpired() ? "expired" : delegate) + "]";
            };
        }
        switch (name) {
            case "unwrap" -> {
                Class<?> iface = (Class<?>) args[0];
                return iface.isInstance(proxy) ? proxy : call(method, args);
            }
            case "isWrapperFor" -> {
                return ((Class<?>) args[0]).isInstance(proxy) || (boolean) call(method, args);
            }
            case "close" -> {
                return connection.isExpired() ? null : call(method, args);
            }
            case "isClosed" -> {
                return connection.isExpired() || (boolean) call(method, args);
            }
            default -> { }
        }
        connection.open();
        if (name.equals("getConnection") && method.getParameterCount() == 0) {
            return connection;
        }
        if (name.equals("getStatement") && delegate instanceof ResultSet) {
            return statement != null ? statement : statement(connection, (Statement) call(method, args));
        }
        if (args != null && args.length > 0 && args[0] instanceof String sql && sendsSql(name)) {
            TransactionControl.check(sql);
        }
        Object result = call(method, args);
        if (result instanceof ResultSet rs) {
            Statement owner = delegate instanceof Statement ? (Statement) proxy : null;
            return proxy(ResultSet.class, new GuardedJdbc(connection, rs, owner));
        }
        return result;
    }

    private static boolean sendsSql(String method) {
        return method.startsWith("execute") || method.equals("addBatch");
    }

    private Object call(Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(delegate, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
