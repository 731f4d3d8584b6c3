import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Array;
import java.sql.CallableStatement;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Writes the guard's JDBC wrappers ({@code GuardedStatement}, {@code GuardedPreparedStatement},
 * {@code GuardedCallableStatement}, {@code GuardedResultSet}, {@code GuardedMetaData}, {@code GuardedArray}) from the
 * {@code java.sql} interfaces, with the rules of {@link GuardedJdbc}: every method checks that the transaction is
 * still open, except {@code close}, {@code isClosed}, {@code unwrap} and {@code isWrapperFor}; SQL text that a
 * statement sends is checked by the connection ({@code GuardedConnection.check}); {@code getConnection()} and a
 * result set's {@code getStatement()} lead back to the guard; every result set and array handed out is guarded, and
 * a guarded array passed back to the driver is unwrapped first. Concrete classes, as HikariCP's {@code ProxyStatement} and
 * {@code ProxyResultSet}: one field load and one check per call, no reflection.
 *
 * <p>The core's build runs it (generate-sources) into {@code target/generated-sources/guarded-jdbc}; by hand:
 * <pre>java core/src/build/GuardedJdbcGenerator.java /tmp/out</pre>
 * {@code GuardedJdbcCoverageTest} fails if a wrapper misses a method of its interface.
 */
final class GuardedJdbcGenerator {
    /** One wrapper: its name, the interface it implements, the class it extends (or null), what it adds. */
    record Wrapper(String name, Class<?> type, String parent, Class<?> parentType) {}

    static final List<Wrapper> WRAPPERS = List.of(
            new Wrapper("GuardedStatement", Statement.class, null, null),
            new Wrapper("GuardedPreparedStatement", PreparedStatement.class, "GuardedStatement", Statement.class),
            new Wrapper(
                    "GuardedCallableStatement",
                    CallableStatement.class,
                    "GuardedPreparedStatement",
                    PreparedStatement.class),
            new Wrapper("GuardedResultSet", ResultSet.class, null, null),
            new Wrapper("GuardedMetaData", DatabaseMetaData.class, null, null),
            new Wrapper("GuardedArray", Array.class, null, null));

    private GuardedJdbcGenerator() {}

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]).resolve("dev/dbbulkhead/internal");
        Files.createDirectories(dir);
        for (var w : WRAPPERS) {
            Files.writeString(dir.resolve(w.name() + ".java"), source(w));
        }
    }

    /** The methods of {@code type} a wrapper must declare: all of its own and inherited ones but those of its parent. */
    static List<Method> methods(Wrapper w) {
        var seen = new TreeSet<String>();
        return Arrays.stream(w.type().getMethods())
                .filter(m -> !Modifier.isStatic(m.getModifiers()))
                .filter(m -> w.parentType() == null || !declaredBy(w.parentType(), m))
                .sorted(Comparator.comparing(GuardedJdbcGenerator::signature))
                .filter(m -> seen.add(signature(m)))
                .toList();
    }

    private static boolean declaredBy(Class<?> type, Method m) {
        try {
            type.getMethod(m.getName(), m.getParameterTypes());
            return true;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    static String signature(Method m) {
        return m.getName() + Arrays.toString(m.getParameterTypes());
    }

    static String source(Wrapper w) {
        var imports = new TreeSet<String>();
        imports.add("java.sql." + w.type().getSimpleName());
        String self = w.type().getSimpleName();
        var members = new StringBuilder();
        if (w.parent() == null) {
            members.append("    final GuardedConnection connection;\n");
            members.append("    private final ").append(self).append(" delegate;\n");
            if (w.type() == ResultSet.class) {
                imports.add("java.sql.Statement");
                members.append(
                                "    /** The guarded statement that produced it; null: the driver's, wrapped on demand. */\n")
                        .append("    private final Statement statement;\n\n")
                        .append(
                                "    GuardedResultSet(GuardedConnection connection, ResultSet delegate, Statement statement) {\n")
                        .append("        this.connection = connection;\n        this.delegate = delegate;\n")
                        .append("        this.statement = statement;\n    }\n");
            } else {
                members.append("\n    ")
                        .append(w.name())
                        .append("(GuardedConnection connection, ")
                        .append(self)
                        .append(" delegate) {\n")
                        .append("        this.connection = connection;\n        this.delegate = delegate;\n    }\n");
            }
            imports.add("java.sql.ResultSet");
            imports.add("java.sql.Array");
            String owner = w.type() == Statement.class ? "this" : "null";
            members.append("\n    /** Every result set handed out is guarded too. */\n")
                    .append("    final ResultSet guard(ResultSet rs) {\n")
                    .append("        return rs == null ? null : new GuardedResultSet(connection, rs, ")
                    .append(owner)
                    .append(");\n    }\n")
                    .append(
                            "\n    /** Every array handed out is guarded too: its result sets lead back to the guard. */\n")
                    .append("    final Array guard(Array array) {\n")
                    .append("        return GuardedJdbc.array(connection, array);\n    }\n")
                    .append(
                            "\n    /** A result set or an array returned as an object (a refcursor, say) is guarded too. */\n")
                    .append("    final Object guard(Object value) {\n")
                    .append(
                            "        return value instanceof ResultSet rs ? guard(rs) : value instanceof Array a ? guard(a) : value;\n    }\n")
                    .append("\n    @Override\n    public String toString() {\n");
            if (w.type() == Array.class) {
                // The driver's text of the array (PostgreSQL's literal), which code may rely on.
                members.append("        return connection.isExpired() ? \"Guarded[expired]\" : delegate.toString();\n");
            } else {
                members.append(
                        "        return \"Guarded[\" + (connection.isExpired() ? \"expired\" : delegate) + \"]\";\n");
            }
            members.append("    }\n");
            if (w.type() == Array.class) {
                members.append("\n    /** The driver's array, for the driver's own setters. */\n")
                        .append("    Array delegate() {\n        return delegate;\n    }\n");
            }
        } else {
            members.append("    private final ")
                    .append(self)
                    .append(" delegate;\n\n")
                    .append("    ")
                    .append(w.name())
                    .append("(GuardedConnection connection, ")
                    .append(self)
                    .append(" delegate) {\n")
                    .append("        super(connection, delegate);\n        this.delegate = delegate;\n    }\n");
        }
        for (Method m : methods(w)) {
            method(w, m, members, imports);
        }
        var out = new StringBuilder("package dev.dbbulkhead.internal;\n\n");
        for (String i : imports) {
            out.append("import ").append(i).append(";\n");
        }
        out.append("\n").append(header(w));
        out.append("class ").append(w.name());
        if (w.parent() != null) {
            out.append(" extends ").append(w.parent());
        }
        out.append(" implements ").append(self).append(" {\n").append(members).append("}\n");
        return out.toString();
    }

    private static String header(Wrapper w) {
        String what = switch (w.type().getSimpleName()) {
            case "Statement" -> "statement";
            case "PreparedStatement" -> "prepared statement";
            case "CallableStatement" -> "callable statement";
            case "ResultSet" -> "result set";
            case "Array" -> "array";
            default -> "database metadata";
        };
        String article = what.startsWith("a") ? "An " : "A ";
        return "/**\n * " + article + what + " handed out inside {@code work}, guarded as {@link GuardedJdbc} says. "
                + "Generated at build time by\n * core/src/build/GuardedJdbcGenerator.java: change the generator, not this file.\n */\n";
    }

    private static void method(Wrapper w, Method m, StringBuilder out, TreeSet<String> imports) {
        String name = m.getName();
        Type[] params = m.getGenericParameterTypes();
        var names = new String[params.length];
        for (int i = 0; i < params.length; i++) {
            names[i] = paramName(w, m, i);
        }
        var decl = new StringBuilder();
        out.append("\n");
        if (m.isAnnotationPresent(Deprecated.class)) {
            out.append("    @Deprecated\n");
        }
        boolean unchecked = m.getTypeParameters().length > 0 && !name.equals("unwrap");
        if (unchecked) {
            out.append("    @SuppressWarnings(\"unchecked\")\n");
        }
        out.append("    @Override\n    public ");
        if (m.getTypeParameters().length > 0) {
            out.append("<")
                    .append(String.join(
                            ", ",
                            Arrays.stream(m.getTypeParameters())
                                    .map(TypeVariable::getName)
                                    .toList()))
                    .append("> ");
        }
        out.append(typeName(m.getGenericReturnType(), imports))
                .append(" ")
                .append(name)
                .append("(");
        for (int i = 0; i < params.length; i++) {
            decl.append(i > 0 ? ", " : "")
                    .append(typeName(params[i], imports))
                    .append(" ")
                    .append(names[i]);
        }
        out.append(decl).append(")");
        if (m.getExceptionTypes().length > 0) {
            out.append(" throws ")
                    .append(String.join(
                            ", ",
                            Arrays.stream(m.getExceptionTypes())
                                    .map(e -> typeName(e, imports))
                                    .toList()));
        }
        out.append(" {\n");
        var passed = new String[names.length];
        for (int i = 0; i < names.length; i++) {
            Class<?> t = m.getParameterTypes()[i];
            passed[i] = t == Array.class || t == Object.class ? "GuardedJdbc.unguard(" + names[i] + ")" : names[i];
        }
        String call = "delegate." + name + "(" + String.join(", ", passed) + ")";
        Class<?> returns = m.getReturnType();
        String ret = returns == void.class ? "" : "return ";
        switch (name + "/" + params.length) {
            case "unwrap/1" ->
                out.append("        return ")
                        .append(names[0])
                        .append(".isInstance(this) ? ")
                        .append(names[0])
                        .append(".cast(this) : ")
                        .append(call)
                        .append(";\n");
            case "isWrapperFor/1" ->
                out.append("        return ")
                        .append(names[0])
                        .append(".isInstance(this) || ")
                        .append(call)
                        .append(";\n");
            case "close/0", "free/0" ->
                out.append("        if (!connection.isExpired()) {\n            ")
                        .append(call)
                        .append(";\n        }\n");
            case "isClosed/0" ->
                out.append("        return connection.isExpired() || ")
                        .append(call)
                        .append(";\n");
            default -> {
                if (Arrays.asList(m.getExceptionTypes()).contains(java.sql.SQLException.class)) {
                    out.append("        connection.open();\n"); // else a constant of the driver's: harmless
                }
                if (name.equals("getConnection") && params.length == 0) {
                    out.append("        return connection;\n");
                } else if (name.equals("getStatement") && w.type() == ResultSet.class) {
                    out.append("        return statement != null ? statement : GuardedJdbc.statement(connection, ")
                            .append(call)
                            .append(");\n");
                } else {
                    if (params.length > 0
                            && m.getParameterTypes()[0] == String.class
                            && (name.startsWith("execute") || name.equals("addBatch"))) {
                        out.append("        connection.check(").append(names[0]).append(");\n");
                    }
                    if (name.startsWith("execute") && w.type() != ResultSet.class) {
                        // A failure by which the server rolled back the whole transaction is noted on the way up.
                        String value = returns == ResultSet.class ? "guard(" + call + ")" : call;
                        out.append("        try {\n            ")
                                .append(ret)
                                .append(value)
                                .append(";\n")
                                .append("        } catch (SQLException e) {\n            throw connection.failed(e);\n")
                                .append("        }\n");
                    } else if (returns == ResultSet.class || returns == Array.class) {
                        out.append("        return guard(").append(call).append(");\n");
                    } else if (returns == Object.class && unchecked) {
                        out.append("        return (")
                                .append(typeName(m.getGenericReturnType(), imports))
                                .append(") guard(")
                                .append(call)
                                .append(");\n");
                    } else if (returns == Object.class) {
                        out.append("        return guard(").append(call).append(");\n");
                    } else {
                        out.append("        ").append(ret).append(call).append(";\n");
                    }
                }
            }
        }
        out.append("    }\n");
    }

    private static final Map<String, String> FIRST_PARAMETER = Map.of(
            "ResultSet/int",
            "columnIndex",
            "ResultSet/String",
            "columnLabel",
            "CallableStatement/int",
            "parameterIndex",
            "CallableStatement/String",
            "parameterName",
            "PreparedStatement/int",
            "parameterIndex");

    private static String paramName(Wrapper w, Method m, int i) {
        Class<?> t = m.getParameterTypes()[i];
        if (i == 0) {
            if (m.getName().equals("unwrap") || m.getName().equals("isWrapperFor")) {
                return "iface";
            }
            if (t == String.class
                    && (m.getName().startsWith("execute") || m.getName().equals("addBatch"))) {
                return "sql";
            }
            String n = FIRST_PARAMETER.get(w.type().getSimpleName() + "/" + t.getSimpleName());
            if (n != null
                    && (m.getName().startsWith("get")
                            || m.getName().startsWith("set")
                            || m.getName().startsWith("update")
                            || m.getName().startsWith("register")
                            || m.getName().equals("wasNull")
                            || m.getName().equals("findColumn"))) {
                return n;
            }
        }
        return "arg" + i;
    }

    private static String typeName(Type type, TreeSet<String> imports) {
        if (type instanceof Class<?> c) {
            if (c.isArray()) {
                return typeName(c.getComponentType(), imports) + "[]";
            }
            if (c.isPrimitive()) {
                return c.getName();
            }
            if (c.getEnclosingClass() == null
                    && !c.getPackageName().equals("java.lang")
                    && !c.getPackageName().equals("dev.dbbulkhead.internal")) {
                imports.add(c.getName());
            }
            return c.getSimpleName();
        }
        String name = type.getTypeName();
        for (String part : name.split("[<>, ?\\[\\]]+")) {
            if (part.contains(".")) {
                try {
                    Class<?> c = Class.forName(part);
                    typeName(c, imports);
                    name = name.replace(part, c.getSimpleName());
                } catch (ClassNotFoundException e) {
                    throw new IllegalStateException(part, e);
                }
            }
        }
        return name;
    }
}
