package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.dbbulkhead.testkit.NoopConnection;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReader;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The generated wrappers against their interfaces, method by method, without a database: each of them declares
 * every method of its interface (none falls through to a default method or escapes the guard); while the transaction
 * is open every call reaches the driver's object with the same arguments, every result set comes back guarded and
 * {@code getConnection()} / {@code getStatement()} lead back to the guard; SQL that a statement sends is checked for
 * transaction control; once the transaction has ended every call but {@code close}, {@code isClosed},
 * {@code unwrap}, {@code isWrapperFor} (and the driver's version constants) fails with SQLState 08003 and reaches
 * nothing. (The same rules on the real driver: {@code SideDoorsTest}, {@code GuardRailsTest}.)
 */
@Tag("no-db")
class GuardedJdbcCoverageTest {
    private static final Set<String> ALWAYS_ALLOWED = Set.of(
            "close", "free", "isClosed", "unwrap", "isWrapperFor", "getDriverMajorVersion", "getDriverMinorVersion");

    /** The driver's side: records each call and answers a default value (a stub result set for result sets). */
    private static final class Driver {
        final List<String> calls = new ArrayList<>();

        <T> T stub(Class<T> type) {
            return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
                if (m.getDeclaringClass() == Object.class) {
                    return m.getName().equals("toString")
                            ? "driver " + type.getSimpleName()
                            : m.getName().equals("hashCode") ? System.identityHashCode(proxy) : proxy == args[0];
                }
                calls.add(m.getName() + (args == null ? 0 : args.length));
                Class<?> r = m.getReturnType();
                if (r == ResultSet.class) {
                    return stub(ResultSet.class);
                }
                if (r == Statement.class
                        || r == Array.class
                        || r == Connection.class
                        || r == PreparedStatement.class
                        || r == CallableStatement.class
                        || r == DatabaseMetaData.class) {
                    return stub(r);
                }
                return defaultValue(r);
            }));
        }
    }

    private static Object defaultValue(Class<?> type) {
        if (!type.isPrimitive()) {
            return null;
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == void.class) {
            return null;
        }
        if (type == char.class) {
            return (char) 0;
        }
        return switch (type.getName()) {
            case "long" -> 0L;
            case "double" -> 0d;
            case "float" -> 0f;
            case "short" -> (short) 0;
            case "byte" -> (byte) 0;
            default -> 0;
        };
    }

    private static Object[] arguments(Method m) {
        Class<?>[] types = m.getParameterTypes();
        var args = new Object[types.length];
        for (int i = 0; i < types.length; i++) {
            args[i] = types[i] == String.class
                    ? "SELECT 1"
                    : types[i] == Class.class ? Object.class : defaultValue(types[i]);
        }
        return args;
    }

    private record Kind(Class<?> type, Class<?> wrapper, BiFunction<GuardedConnection, Driver, Object> make) {}

    private static Kind kind(String name) {
        return switch (name) {
            case "Statement" ->
                new Kind(
                        Statement.class,
                        GuardedStatement.class,
                        (c, d) -> new GuardedStatement(c, d.stub(Statement.class)));
            case "PreparedStatement" ->
                new Kind(
                        PreparedStatement.class,
                        GuardedPreparedStatement.class,
                        (c, d) -> new GuardedPreparedStatement(c, d.stub(PreparedStatement.class)));
            case "CallableStatement" ->
                new Kind(
                        CallableStatement.class,
                        GuardedCallableStatement.class,
                        (c, d) -> new GuardedCallableStatement(c, d.stub(CallableStatement.class)));
            case "ResultSet" ->
                new Kind(
                        ResultSet.class,
                        GuardedResultSet.class,
                        (c, d) -> new GuardedResultSet(c, d.stub(ResultSet.class), null));
            case "Array" ->
                new Kind(Array.class, GuardedArray.class, (c, d) -> new GuardedArray(c, d.stub(Array.class)));
            default ->
                new Kind(
                        DatabaseMetaData.class,
                        GuardedMetaData.class,
                        (c, d) -> new GuardedMetaData(c, d.stub(DatabaseMetaData.class)));
        };
    }

    private static List<Method> methodsOf(Class<?> type) {
        return java.util.Arrays.stream(type.getMethods())
                .filter(m -> !Modifier.isStatic(m.getModifiers()))
                .toList();
    }

    private static Object invoke(Object target, Method m) throws Throwable {
        try {
            return m.invoke(target, arguments(m));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {"Statement", "PreparedStatement", "CallableStatement", "ResultSet", "DatabaseMetaData", "Array"})
    void everyMethodIsDeclaredByTheWrapperAndReachesTheDriverWhileOpen(String name) throws Throwable {
        var kind = kind(name);
        var connection = new GuardedConnection(new NoopConnection(), new Dialect.Postgres());
        for (Method m : methodsOf(kind.type())) {
            Method declared = kind.wrapper().getMethod(m.getName(), m.getParameterTypes());
            assertThat(declared.getDeclaringClass().getSimpleName())
                    .as("%s is declared by a wrapper", m)
                    .startsWith("Guarded");
            var driver = new Driver();
            Object wrapper = kind.make().apply(connection, driver);
            if (m.getName().equals("unwrap") || m.getName().equals("isWrapperFor")) {
                continue; // answered by the wrapper itself for Object.class
            }
            Object result;
            try {
                result = invoke(wrapper, m);
            } catch (SQLException e) {
                if (m.getParameterTypes().length > 0
                        && m.getParameterTypes()[0] == String.class
                        && (m.getName().startsWith("execute") || m.getName().equals("addBatch"))) {
                    fail("%s refused plain SQL: %s", m, e);
                }
                throw e;
            }
            if (m.getName().equals("getConnection") && m.getParameterCount() == 0) {
                assertThat(result).as("%s leads back to the guard", m).isSameAs(connection);
                assertThat(driver.calls).isEmpty();
                continue;
            }
            assertThat(driver.calls)
                    .as("%s reaches the driver once", m)
                    .containsExactly(m.getName() + m.getParameterCount());
            if (m.getReturnType() == ResultSet.class) {
                assertThat(result).as("%s hands out a guarded result set", m).isInstanceOf(GuardedResultSet.class);
            }
            if (m.getReturnType() == Array.class) {
                assertThat(result).as("%s hands out a guarded array", m).isInstanceOf(GuardedArray.class);
            }
            if (m.getName().equals("getStatement")) {
                assertThat(result).as("%s hands out a guarded statement", m).isInstanceOf(GuardedStatement.class);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"Statement", "PreparedStatement", "CallableStatement"})
    void everyMethodThatSendsSqlTextRefusesTransactionControl(String name) throws Throwable {
        var kind = kind(name);
        int checked = 0;
        for (Method m : methodsOf(kind.type())) {
            if (m.getParameterCount() == 0
                    || m.getParameterTypes()[0] != String.class
                    || !(m.getName().startsWith("execute") || m.getName().equals("addBatch"))) {
                continue;
            }
            var driver = new Driver();
            var connection = new GuardedConnection(new NoopConnection(), new Dialect.Postgres());
            Object wrapper = kind.make().apply(connection, driver);
            Object[] args = arguments(m);
            args[0] = "COMMIT";
            try {
                m.invoke(wrapper, args);
                fail("%s sent COMMIT", m);
            } catch (InvocationTargetException e) {
                assertThat(e.getCause()).isInstanceOf(SQLException.class);
                assertThat(((SQLException) e.getCause()).getSQLState()).isEqualTo("25000");
            }
            assertThat(driver.calls).as("%s reached the driver", m).isEmpty();
            checked++;
        }
        assertThat(checked)
                .as("execute and addBatch variants")
                .isGreaterThanOrEqualTo(name.equals("Statement") ? 10 : 0);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {"Statement", "PreparedStatement", "CallableStatement", "ResultSet", "DatabaseMetaData", "Array"})
    void onceTheTransactionEndedEveryCallFailsWithoutReachingTheDriver(String name) throws Throwable {
        var kind = kind(name);
        var connection = new GuardedConnection(new NoopConnection(), new Dialect.Postgres());
        var driver = new Driver();
        Object wrapper = kind.make().apply(connection, driver);
        connection.expire();
        for (Method m : methodsOf(kind.type())) {
            if (ALWAYS_ALLOWED.contains(m.getName())) {
                continue;
            }
            try {
                invoke(wrapper, m);
                fail("%s worked after the transaction ended", m);
            } catch (SQLException e) {
                assertThat(e.getSQLState()).as("%s", m).isEqualTo("08003");
            }
        }
        assertThat(driver.calls).isEmpty();
        if (wrapper instanceof java.sql.Wrapper w) {
            assertThat(w.isWrapperFor(kind.type())).isTrue();
        }
        if (AutoCloseable.class.isAssignableFrom(kind.type())) {
            invoke(wrapper, kind.type().getMethod("close"));
            assertThat(driver.calls).as("close after the end does nothing").isEmpty();
            assertThat(invoke(wrapper, kind.type().getMethod("isClosed"))).isEqualTo(true);
        }
    }

    /** The JDBC objects that work is handed, and how each is wrapped around the driver's; the connection first. */
    private static final Map<Class<?>, BiFunction<GuardedConnection, Driver, Object>> HANDED_OUT = Map.of(
            Statement.class,
            kind("Statement").make(),
            PreparedStatement.class,
            kind("PreparedStatement").make(),
            CallableStatement.class,
            kind("CallableStatement").make(),
            ResultSet.class,
            kind("ResultSet").make(),
            DatabaseMetaData.class,
            kind("DatabaseMetaData").make(),
            Array.class,
            kind("Array").make());

    /** Interfaces with such a getter that no JDBC object handed to work returns, and why. */
    private static final Map<Class<?>, String> NOT_HANDED_OUT = Map.of(
            java.sql.Driver.class, "the driver itself: no connection, statement or result set returns one",
            java.sql.ConnectionBuilder.class, "built by a DataSource, which work never gets");

    private static boolean reachesAConnection(Class<?> type) {
        return Connection.class.isAssignableFrom(type)
                || Statement.class.isAssignableFrom(type)
                || ResultSet.class.isAssignableFrom(type);
    }

    /** Every public interface of {@code java.sql} in this JDK, read from the module itself. */
    private static List<Class<?>> jdbcInterfaces() throws Exception {
        var types = new ArrayList<Class<?>>();
        try (ModuleReader reader =
                ModuleFinder.ofSystem().find("java.sql").orElseThrow().open()) {
            for (String name : reader.list()
                    .filter(n -> n.startsWith("java/sql/")
                            && n.endsWith(".class")
                            && n.indexOf('/', "java/sql/".length()) < 0
                            && !n.contains("$"))
                    .toList()) {
                Class<?> type = Class.forName(name.replace('/', '.').replace(".class", ""));
                if (type.isInterface() && Modifier.isPublic(type.getModifiers())) {
                    types.add(type);
                }
            }
        }
        return types;
    }

    /**
     * By reflection over {@code java.sql}, so that a getter a later JDK adds fails here: every interface with a method
     * that returns a connection, a statement or a result set is one the guard wraps (or cannot be reached from one),
     * and each such method of each wrapper, on a driver that answers with its own objects, hands out an object whose
     * way back ({@code getConnection()}, {@code getStatement().getConnection()}) is the guarded connection.
     */
    @Test
    void everyGetterThatReachesAConnectionLeadsBackToTheGuard() throws Throwable {
        var reaching = new TreeMap<String, Class<?>>();
        var getters = new TreeSet<String>();
        for (Class<?> type : jdbcInterfaces()) {
            for (Method m : type.getMethods()) {
                if (!Modifier.isStatic(m.getModifiers()) && reachesAConnection(m.getReturnType())) {
                    reaching.put(type.getName(), type);
                    getters.add(type.getSimpleName() + "." + m.getName());
                }
            }
        }
        assertThat(getters)
                .as("the getters found")
                .contains(
                        "Array.getResultSet",
                        "ResultSet.getStatement",
                        "Statement.getConnection",
                        "DatabaseMetaData.getConnection",
                        "Connection.createStatement");
        for (Class<?> type : reaching.values()) {
            if (type == Connection.class || NOT_HANDED_OUT.containsKey(type)) {
                continue;
            }
            assertThat(HANDED_OUT)
                    .as("%s reaches a connection: the guard must wrap it", type.getName())
                    .containsKey(type);
        }
        var driver = new Driver();
        var connection = new GuardedConnection(driver.stub(Connection.class), new Dialect.Postgres());
        int checked = leadsBack(connection, Connection.class, connection);
        for (var handedOut : HANDED_OUT.entrySet()) {
            checked += leadsBack(handedOut.getValue().apply(connection, driver), handedOut.getKey(), connection);
        }
        assertThat(checked).as("getters checked (58 on JDK 25)").isGreaterThanOrEqualTo(50);
    }

    private static int leadsBack(Object wrapper, Class<?> type, GuardedConnection guard) throws Throwable {
        int checked = 0;
        for (Method m : methodsOf(type)) {
            if (!reachesAConnection(m.getReturnType())) {
                continue;
            }
            Object result = invoke(wrapper, m);
            Connection back = result instanceof Connection c
                    ? c
                    : result instanceof Statement s
                            ? s.getConnection()
                            : ((ResultSet) result).getStatement().getConnection();
            assertThat(back)
                    .as("%s.%s leads back to the guard", type.getSimpleName(), m)
                    .isSameAs(guard);
            checked++;
        }
        return checked;
    }
}
