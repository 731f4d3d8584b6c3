package dev.dbbulkhead.tools;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import dev.dbbulkhead.testkit.Secrets;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Checks a fleet's connection budget: {@code peak instances × pool size + other clients ≤ max_connections −
 * reserved}. Exit 0 when it fits, 1 when it does not, 2 on bad input.
 */
@Command(name = "budget",
        header = "Check that a fleet fits the database's connection budget; exit 1 when it does not.",
        mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Check that a fleet fits the database's connection budget:",
            "  (instances + surge) × pool + other clients <= max_connections - reserved",
            "Exit status: 0 fits, 1 over budget, 2 bad input or unreachable database."})
public final class BudgetCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--instances", required = true, paramLabel = "N",
            description = "Instances at the autoscaling maximum.")
    int instances;

    @Option(names = "--surge", paramLabel = "N", defaultValue = "0",
            description = "Extra instances up at once during a rolling deploy (default: ${DEFAULT-VALUE}).")
    int surge;

    @Option(names = "--pool", required = true, paramLabel = "P", description = "Pool size per instance.")
    int pool;

    @Option(names = "--other", paramLabel = "NAME=N",
            description = "Other clients' connections (batch, operations, migrations...); repeatable.")
    Map<String, Integer> others = new LinkedHashMap<>();

    @Option(names = "--max-connections", paramLabel = "N", description = "The server's max_connections.")
    Integer maxConnections;

    @Option(names = "--reserved", paramLabel = "N",
            description = "Connections reserved for superusers and tooling (superuser_reserved_connections).")
    Integer reserved;

    @Option(names = "--db-url", paramLabel = "JDBC_URL",
            description = "Read max_connections, superuser_reserved_connections and current use from this "
                    + "PostgreSQL (user and password from DB_USER/DB_PASSWORD).")
    String dbUrl;

    @Option(names = "--application-name", paramLabel = "NAME",
            description = "With --db-url: this service's application_name, left out of the other clients "
                    + "measured on the server when no --other is given.")
    String applicationName;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            int max;
            int reservedConnections;
            Map<String, Integer> otherClients = new LinkedHashMap<>(others);
            if (dbUrl != null) {
                var server = ServerConnections.read(dbUrl, System.getenv().getOrDefault("DB_USER", ""),
                        System.getenv().getOrDefault("DB_PASSWORD", ""));
                out.println("server: max_connections=" + server.maxConnections() + ", superuser_reserved_connections="
                        + server.reserved() + ", in use now=" + server.inUse());
                server.byApplication().forEach((app, n) -> out.println("  " + (app.isEmpty() ? "(no name)" : app)
                        + ": " + n));
                max = maxConnections != null ? maxConnections : server.maxConnections();
                reservedConnections = reserved != null ? reserved : server.reserved();
                if (others.isEmpty()) {
                    server.byApplication().forEach((app, n) -> {
                        if (applicationName == null || !applicationName.equals(app)) {
                            otherClients.put(app.isEmpty() ? "unnamed" : app, n);
                        }
                    });
                }
            } else {
                if (maxConnections == null) {
                    err.println("error: give --max-connections (and --reserved), or --db-url to read them");
                    return 2;
                }
                max = maxConnections;
                reservedConnections = reserved != null ? reserved : 3;
            }
            var budget = ConnectionBudget.of(instances, surge, pool, otherClients, max, reservedConnections);
            budget.explain().forEach(out::println);
            return budget.fits() ? 0 : 1;
        } catch (IllegalArgumentException bad) {
            err.println("error: " + bad.getMessage());
            return 2;
        } catch (SQLException unreachable) {
            err.println("error: cannot read the server's settings from " + Secrets.redact(dbUrl) + ": "
                    + unreachable.getMessage());
            return 2;
        }
    }

    /** What the server says about its connections. */
    record ServerConnections(int maxConnections, int reserved, int inUse, Map<String, Integer> byApplication) {
        static ServerConnections read(String url, String user, String password) throws SQLException {
            var props = new java.util.Properties();
            if (!user.isEmpty()) {
                props.setProperty("user", user);
            }
            if (!password.isEmpty()) {
                props.setProperty("password", password);
            }
            props.setProperty("ApplicationName", "db-bulkhead budget");
            try (Connection c = DriverManager.getConnection(url, props);
                    var s = c.createStatement()) {
                int max;
                int reserved;
                try (var r = s.executeQuery("SELECT current_setting('max_connections')::int, "
                        + "current_setting('superuser_reserved_connections')::int")) {
                    r.next();
                    max = r.getInt(1);
                    reserved = r.getInt(2);
                }
                var byApp = new LinkedHashMap<String, Integer>();
                int inUse = 0;
                // Client backends only, without this checker's own connection.
                try (var r = s.executeQuery("SELECT coalesce(application_name, ''), count(*) FROM pg_stat_activity "
                        + "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() "
                        + "GROUP BY 1 ORDER BY 2 DESC, 1")) {
                    while (r.next()) {
                        byApp.put(r.getString(1), r.getInt(2));
                        inUse += r.getInt(2);
                    }
                }
                return new ServerConnections(max, reserved, inUse, byApp);
            }
        }
    }
}
