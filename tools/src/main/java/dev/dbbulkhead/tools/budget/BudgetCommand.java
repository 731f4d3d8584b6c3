package dev.dbbulkhead.tools.budget;

import dev.dbbulkhead.testkit.Secrets;
import dev.dbbulkhead.tools.support.AdminConsole;
import dev.dbbulkhead.tools.support.Failures;
import java.io.IOException;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Checks a fleet's connection budget: {@code peak instances × pool size + other clients ≤ max_connections −
 * reserved}. Exit 0 when it fits, 1 when it does not, 2 on bad input.
 */
@Command(
        name = "budget",
        header = "Check that a fleet fits the database's connection budget; exit 1 when it does not.",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Check that a fleet fits the database's connection budget:",
            "  (instances + surge) × pool + other clients <= max_connections - reserved",
            "Behind PgBouncer (--pgbouncer, or --max-client-conn and --max-db-connections), two tiers:",
            "  (instances + surge) × pool <= poolers × max_client_conn",
            "  poolers × (max_db_connections + reserve_pool) + other clients <= max_connections - reserved",
            "Exit status: 0 fits, 1 over budget, 2 bad input or unreachable database or PgBouncer."
        })
public final class BudgetCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--instances",
            required = true,
            paramLabel = "N",
            description = "Instances at the autoscaling maximum.")
    int instances;

    @Option(
            names = "--surge",
            paramLabel = "N",
            defaultValue = "0",
            description = "Extra instances up at once during a rolling deploy (default: ${DEFAULT-VALUE}).")
    int surge;

    @Option(names = "--pool", required = true, paramLabel = "P", description = "Pool size per instance.")
    int pool;

    @Option(
            names = "--other",
            paramLabel = "NAME=N",
            description = "Other clients' connections (batch, operations, migrations...); repeatable, each name once.")
    List<String> otherOptions = new ArrayList<>();

    @Option(names = "--max-connections", paramLabel = "N", description = "The server's max_connections.")
    Integer maxConnections;

    @Option(
            names = "--reserved",
            paramLabel = "N",
            description = "Connections reserved for superusers and tooling (superuser_reserved_connections).")
    Integer reserved;

    @Option(
            names = "--db-url",
            paramLabel = "JDBC_URL",
            description = "Read max_connections, superuser_reserved_connections and current use from this "
                    + "PostgreSQL (user and password from DB_USER/DB_PASSWORD).")
    String dbUrl;

    @Option(
            names = "--application-name",
            paramLabel = "NAME",
            description = "With --db-url: this service's application_name, left out of the other clients "
                    + "measured on the server when no --other is given.")
    String applicationName;

    @Option(
            names = "--pgbouncer",
            paramLabel = "HOST:PORT",
            description = "Read max_client_conn, max_db_connections and reserve_pool from this PgBouncer's admin "
                    + "console (user --pgbouncer-user, password from PGBOUNCER_PASSWORD).")
    String pgbouncer;

    @Option(
            names = "--pgbouncer-user",
            paramLabel = "USER",
            defaultValue = "pgbouncer",
            description = "An admin_users or stats_users user of the console (default: ${DEFAULT-VALUE}).")
    String pgbouncerUser;

    @Option(
            names = "--pgbouncer-database",
            paramLabel = "NAME",
            description = "The application's database in PgBouncer (default: the only one it serves).")
    String pgbouncerDatabase;

    @Option(
            names = "--poolers",
            paramLabel = "N",
            defaultValue = "1",
            description = "PgBouncer instances the fleet connects through (default: ${DEFAULT-VALUE}).")
    int poolerCount;

    @Option(names = "--max-client-conn", paramLabel = "N", description = "Each PgBouncer's max_client_conn.")
    Integer maxClientConn;

    @Option(
            names = "--max-db-connections",
            paramLabel = "N",
            description = "Each PgBouncer's max_db_connections for the application's database.")
    Integer maxDbConnections;

    @Option(names = "--reserve-pool", paramLabel = "N", description = "Each PgBouncer's reserve_pool_size.")
    Integer reservePool;

    /** The --other clients, each NAME=N once, in the order given. */
    private Map<String, Integer> others() {
        var others = new LinkedHashMap<String, Integer>();
        for (String option : otherOptions) {
            int equals = option.indexOf('=');
            String name = equals < 0 ? "" : option.substring(0, equals).strip();
            Integer n = null;
            String count = equals < 0 ? "" : option.substring(equals + 1).strip();
            try {
                n = equals < 0 ? null : Integer.valueOf(count);
            } catch (NumberFormatException notANumber) {
                if (count.matches("-?[0-9]+")) {
                    throw new ParameterException(
                            spec.commandLine(),
                            "--other needs a NAME=N with N at most " + Integer.MAX_VALUE + ", was '" + option + "'");
                }
            }
            if (name.isEmpty() || n == null) {
                throw new ParameterException(spec.commandLine(), "--other needs a NAME=N, was '" + option + "'");
            }
            if (others.putIfAbsent(name, n) != null) {
                throw new ParameterException(
                        spec.commandLine(),
                        "--other names '" + name + "' twice (" + others.get(name) + " and " + n
                                + "); give each client once, with its whole count");
            }
        }
        return others;
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            int max;
            int reservedConnections;
            Map<String, Integer> others = others();
            Map<String, Integer> otherClients = new LinkedHashMap<>(others);
            if (dbUrl != null) {
                var server = ServerConnections.read(
                        dbUrl,
                        System.getenv().getOrDefault("DB_USER", ""),
                        System.getenv().getOrDefault("DB_PASSWORD", ""));
                out.println("server: max_connections=" + server.maxConnections() + ", superuser_reserved_connections="
                        + server.reserved() + ", in use now=" + server.inUse());
                server.byApplication()
                        .forEach((app, n) -> out.println("  " + (app.isEmpty() ? "(no name)" : app) + ": " + n));
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
            var poolers = poolers(out);
            var budget = ConnectionBudget.of(instances, surge, pool, otherClients, max, reservedConnections, poolers);
            budget.explain().forEach(out::println);
            if (poolers != null) {
                out.println(PoolerQueue.suggestion(poolers.settings(), budget.peakInstances()));
            }
            return budget.fits() ? 0 : 1;
        } catch (IllegalArgumentException bad) {
            err.println("error: " + bad.getMessage());
            return 2;
        } catch (SQLException unreachable) {
            err.println("error: cannot read the server's settings from " + Secrets.redact(dbUrl) + ": "
                    + Secrets.mask(Failures.oneLine(unreachable), Secrets.passwordsIn(dbUrl)));
            return 2;
        } catch (IOException unreachable) {
            err.println(
                    "error: cannot read PgBouncer's settings from " + pgbouncer + ": " + Failures.oneLine(unreachable));
            return 2;
        }
    }

    /** The poolers' tier, read from --pgbouncer and/or given by hand (what is given wins); null when direct. */
    private ConnectionBudget.@Nullable Poolers poolers(PrintWriter out) throws IOException {
        if (pgbouncer == null && maxClientConn == null && maxDbConnections == null && reservePool == null) {
            return null;
        }
        PgBouncerSettings read = null;
        if (pgbouncer != null) {
            try (var console = AdminConsole.connect(
                    pgbouncer, pgbouncerUser, System.getenv().getOrDefault("PGBOUNCER_PASSWORD", ""))) {
                read = PgBouncerSettings.of(
                        console.query("SHOW CONFIG"), console.query("SHOW DATABASES"), pgbouncerDatabase);
                out.println(PoolerQueue.of(console.query("SHOW POOLS"), read.database())
                        .describe());
            }
            out.println("pgbouncer " + pgbouncer + ": database '" + read.database() + "', pool_mode=" + read.poolMode()
                    + ", max_client_conn=" + read.maxClientConn() + ", max_db_connections=" + read.maxDbConnections()
                    + ", reserve_pool=" + read.reservePool());
        } else if (maxClientConn == null || maxDbConnections == null) {
            throw new IllegalArgumentException("behind PgBouncer give both --max-client-conn and --max-db-connections"
                    + " (and --reserve-pool), or --pgbouncer HOST:PORT to read them");
        }
        var settings = new PgBouncerSettings(
                read != null ? read.database() : "(given)",
                maxClientConn != null
                        ? maxClientConn
                        : Objects.requireNonNull(read).maxClientConn(),
                maxDbConnections != null
                        ? maxDbConnections
                        : Objects.requireNonNull(read).maxDbConnections(),
                reservePool != null ? reservePool : read != null ? read.reservePool() : 0,
                read != null ? read.poolMode() : "transaction");
        return new ConnectionBudget.Poolers(poolerCount, settings);
    }

    /** What the server says about its connections. */
    record ServerConnections(int maxConnections, int reserved, int inUse, Map<String, Integer> byApplication) {
        static ServerConnections read(String url, String user, String password) throws SQLException {
            var props = new Properties();
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
