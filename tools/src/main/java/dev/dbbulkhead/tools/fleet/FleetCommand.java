package dev.dbbulkhead.tools.fleet;

import dev.dbbulkhead.testkit.Secrets;
import dev.dbbulkhead.tools.budget.ConnectionBudget;
import dev.dbbulkhead.tools.support.AdminConsole;
import dev.dbbulkhead.tools.support.Failures;
import dev.dbbulkhead.tools.support.ReportFolder;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A fleet on one machine: instance processes (separate JVMs, each with its pool and barrier) under open-loop load,
 * through a rolling deploy (N, then N + surge, then N again), in three topologies side by side: straight to
 * PostgreSQL with pools over the connection budget, straight with pools sized by the budget, and through PgBouncer.
 * The budget is the connection limit of a role the run creates ({@code CONNECTION LIMIT}, refused with SQLState
 * 53300 like {@code max_connections}), so the server's other clients are left alone. Loopback only; every process
 * it started is stopped at the end, on failure and on Ctrl-C.
 */
@Command(
        name = "fleet",
        header = "Run a fleet of instances through a rolling deploy: direct over budget, direct "
                + "within budget, and through PgBouncer.",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Instances are separate JVMs, each with a HikariCP pool kept full and a db-bulkhead barrier "
                    + "(B = pool), under open-loop load. Timeline per topology: N instances, then N + surge (the "
                    + "rolling deploy's overlap), then N; each phase --phase seconds.",
            "Needs PostgreSQL on --db-url as a superuser (DB_USER/DB_PASSWORD) and, for the PgBouncer topology, "
                    + "bin/pgbouncer (or --pgbouncer-url and --pgbouncer).",
            "--faults runs faults of PgBouncer instead (as root or PgBouncer's user, for kill).",
            "Exit status: 0 done, 1 a fault run found a disagreement or a leak, 2 bad input or unreachable database "
                    + "or PgBouncer."
        })
public final class FleetCommand implements Callable<Integer> {
    static final String ROLE = "db_bulkhead_fleet";

    @Spec
    CommandSpec spec;

    @Option(
            names = "--instances",
            defaultValue = "3",
            paramLabel = "N",
            description = "Instances (default: ${DEFAULT-VALUE}).")
    int instances;

    @Option(
            names = "--surge",
            defaultValue = "2",
            paramLabel = "N",
            description = "Extra instances during the rolling deploy (default: ${DEFAULT-VALUE}).")
    int surge;

    @Option(
            names = "--limit",
            defaultValue = "30",
            paramLabel = "N",
            description = "The fleet's connection budget on the server: the role's CONNECTION LIMIT (default: "
                    + "${DEFAULT-VALUE}).")
    int limit;

    @Option(
            names = "--pool",
            defaultValue = "10",
            paramLabel = "P",
            description = "Pool size per instance where not sized by the budget (default: ${DEFAULT-VALUE}).")
    int pool;

    @Option(
            names = "--rate",
            defaultValue = "60",
            paramLabel = "OPS",
            description = "Arrivals per second per instance (default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(
            names = "--sql",
            defaultValue = "SELECT pg_sleep(0.01)",
            paramLabel = "SQL",
            description = "What each operation runs (default: ${DEFAULT-VALUE}).")
    String sql;

    @Option(
            names = "--phase",
            defaultValue = "4",
            paramLabel = "S",
            description = "Seconds per phase (default: ${DEFAULT-VALUE}).")
    double phaseSeconds;

    @Option(
            names = "--db-url",
            defaultValue = "jdbc:postgresql://127.0.0.1:5432/bulkhead_pgb",
            paramLabel = "JDBC_URL",
            description = "PostgreSQL, directly (default: ${DEFAULT-VALUE}, the database bin/pgbouncer serves).")
    String dbUrl;

    @Option(
            names = "--pgbouncer-url",
            defaultValue = "jdbc:postgresql://127.0.0.1:6432/bulkhead?prepareThreshold=0",
            paramLabel = "JDBC_URL",
            description = "The same database through PgBouncer (default: ${DEFAULT-VALUE}).")
    String pgbouncerUrl;

    @Option(
            names = "--pgbouncer",
            defaultValue = "127.0.0.1:6432",
            paramLabel = "HOST:PORT",
            description = "PgBouncer's admin console, sampled for SHOW POOLS (default: ${DEFAULT-VALUE}).")
    String pgbouncer;

    @Option(
            names = "--topologies",
            split = ",",
            defaultValue = "direct-over-budget,direct-within-budget,pgbouncer",
            paramLabel = "NAME",
            description = {
                "Topologies to run (default: ${DEFAULT-VALUE}); also "
                        + "direct-within-budget-adaptive and pgbouncer-adaptive: the same with every instance's limit "
                        + "adaptive (B = its pool)."
            })
    List<String> topologies;

    @Option(
            names = "--kill-one",
            description = "During the rolling deploy, kill one old instance with SIGKILL "
                    + "(its connections and transactions are cut, its result lost).")
    boolean killOne;

    @Option(names = "--report", paramLabel = "DIR", description = "Also write fleet.md and fleet.svg there.")
    Path report;

    @Option(
            names = "--faults",
            split = ",",
            paramLabel = "NAME",
            description = {
                "Instead of the topologies: faults "
                        + "of PgBouncer under load through --pgbouncer-url, each reconciled against a ledger table: "
                        + "kill, pause, reconnect, max-client-conn, query-wait-timeout, or all.",
                "kill sends SIGKILL to the pid in --pgbouncer-pidfile and restarts it with --pgbouncer-restart."
            })
    List<String> faults;

    @Option(
            names = "--pgbouncer-pidfile",
            defaultValue = "/tmp/db-bulkhead-pgbouncer/pgbouncer.pid",
            paramLabel = "FILE",
            description = "PgBouncer's pid file, for the kill fault (default: ${DEFAULT-VALUE}, bin/pgbouncer's).")
    Path pgbouncerPidFile;

    @Option(
            names = "--pgbouncer-restart",
            defaultValue = "bin/pgbouncer",
            paramLabel = "COMMAND",
            description = "Starts PgBouncer again after the kill fault (default: ${DEFAULT-VALUE}).")
    String pgbouncerRestart;

    @Option(
            names = "--deadline",
            defaultValue = "300",
            paramLabel = "MS",
            description = "Each operation's deadline in the fault runs (default: ${DEFAULT-VALUE} ms).")
    long deadlineMillis;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        var problems = new ArrayList<String>();
        List<FleetTopology> chosen = chosenTopologies(problems);
        List<PgBouncerFaults.Fault> faultList = chosenFaults(problems);
        checkNumbers(problems);
        int withinPool = problems.isEmpty() ? withinBudgetPool(chosen, problems) : 0;
        if (problems.isEmpty() && report != null) {
            String problem = ReportFolder.problem(report);
            if (problem != null) {
                problems.add(problem);
            }
        }
        if (!problems.isEmpty()) {
            err.println("error: " + String.join("; ", problems));
            return 2;
        }
        String user = System.getenv().getOrDefault("DB_USER", "postgres");
        String password = System.getenv().getOrDefault("DB_PASSWORD", "");
        boolean needsPgBouncer = chosen.stream().anyMatch(t -> t.viaPgBouncer) || !faultList.isEmpty();
        if (needsPgBouncer && !pgBouncerAnswers(user, password, err)) {
            return 2;
        }
        var urls = new ArrayList<String>();
        if (faultList.isEmpty()) {
            urls.add(dbUrl);
        }
        if (needsPgBouncer) {
            urls.add(pgbouncerUrl);
        }
        if (!urlsAnswer(urls, user, password, err)) {
            return 2;
        }
        if (!faultList.isEmpty()) {
            return faults(faultList, user, password, out, err);
        }
        if (!roleReady(user, password, err)) {
            return 2;
        }
        Map<FleetTopology, FleetReport.Run> results = runAll(chosen, withinPool, user, password, out, err);
        if (results == null) {
            return 2;
        }
        report(results, withinPool, user, password, out);
        return samplingFailed(results, err) ? 2 : 0;
    }

    private List<FleetTopology> chosenTopologies(List<String> problems) {
        var chosen = new ArrayList<FleetTopology>();
        for (String t : topologies) {
            try {
                chosen.add(FleetTopology.of(t));
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        return chosen;
    }

    private List<PgBouncerFaults.Fault> chosenFaults(List<String> problems) {
        var chosen = new ArrayList<PgBouncerFaults.Fault>();
        for (String f : faults == null ? List.<String>of() : faults) {
            try {
                if (f.equals("all")) {
                    chosen.addAll(List.of(PgBouncerFaults.Fault.values()));
                } else {
                    chosen.add(PgBouncerFaults.Fault.of(f));
                }
            } catch (IllegalArgumentException e) {
                problems.add("--faults: " + e.getMessage());
            }
        }
        return chosen;
    }

    private void checkNumbers(List<String> problems) {
        if (instances < 1) {
            problems.add("--instances must be >= 1, was " + instances);
        }
        if (instances >= 1 && (surge < 0 || surge > instances)) {
            problems.add("--surge must be between 0 and --instances (" + instances + "), was " + surge);
        }
        if (limit < 1) {
            problems.add("--limit must be >= 1, was " + limit);
        }
        if (pool < 1) {
            problems.add("--pool must be >= 1, was " + pool);
        }
        if (!(rate > 0 && Double.isFinite(rate)) || !(phaseSeconds > 0) || phaseSeconds > 600) {
            problems.add("--rate must be a finite number > 0 and --phase between 0 and 600 s, were " + rate + " and "
                    + phaseSeconds);
        }
        if (deadlineMillis < 1 || deadlineMillis > 60_000) {
            problems.add("--deadline must be between 1 and 60000 ms, was " + deadlineMillis);
        }
    }

    /** The largest pool per instance that fits the connection limit at the deploy's peak. */
    private int withinBudgetPool(List<FleetTopology> chosen, List<String> problems) {
        int withinPool = (int)
                ConnectionBudget.of(instances, surge, 1, Map.of(), limit, 0).largestPoolThatFits();
        if (withinPool < 1 && chosen.stream().anyMatch(t -> t.withinBudget)) {
            problems.add(
                    "--limit " + limit + " leaves no connection for each of " + (instances + surge) + " instances");
        }
        return withinPool;
    }

    private boolean pgBouncerAnswers(String user, String password, PrintWriter err) {
        try (var console = AdminConsole.connect(pgbouncer, user, password)) {
            console.query("SHOW POOLS");
            return true;
        } catch (IOException | RuntimeException e) {
            err.println("error: cannot reach PgBouncer's admin console on " + pgbouncer + " for the pgbouncer "
                    + "topology (bin/pgbouncer starts one; or leave it out with --topologies): " + Failures.oneLine(e));
            return false;
        }
    }

    /** Each JDBC URL the run will use answers a query before anything starts; else one line, and false. */
    private static boolean urlsAnswer(List<String> urls, String user, String password, PrintWriter err) {
        for (String url : urls) {
            var properties = new Properties();
            properties.setProperty("user", user);
            properties.setProperty("password", password);
            properties.setProperty("connectTimeout", "4");
            properties.setProperty("loginTimeout", "4");
            try (Connection c = DriverManager.getConnection(url, properties);
                    var s = c.createStatement()) {
                s.execute("SELECT 1");
            } catch (SQLException e) {
                err.println("error: cannot reach " + Secrets.redact(url) + " before the run: "
                        + Secrets.mask(Failures.oneLine(e), Secrets.passwordsIn(url)));
                return false;
            }
        }
        return true;
    }

    /** The fleet's role, with the connection limit that is the budget. */
    private boolean roleReady(String user, String password, PrintWriter err) {
        try {
            FleetRole.prepare(dbUrl, user, password, limit);
            return true;
        } catch (SQLException e) {
            err.println("error: cannot prepare the fleet's role on " + Secrets.redact(dbUrl) + ": "
                    + Secrets.mask(Failures.oneLine(e), Secrets.passwordsIn(dbUrl)));
            return false;
        }
    }

    /** Each topology's run, in order; null (and the error told) when the server went away. */
    private @Nullable Map<FleetTopology, FleetReport.Run> runAll(
            List<FleetTopology> chosen, int withinPool, String user, String password, PrintWriter out, PrintWriter err)
            throws InterruptedException {
        var fleet = new FleetSupervisor(out, dbUrl, instances, surge, killOne, phaseSeconds, this::instance);
        Thread onCtrlC = Thread.ofPlatform().unstarted(fleet::stopAll);
        Runtime.getRuntime().addShutdownHook(onCtrlC);
        var results = new LinkedHashMap<FleetTopology, FleetReport.Run>();
        try {
            for (FleetTopology topology : chosen) {
                int size = topology.withinBudget ? withinPool : pool;
                out.printf(
                        "%s: %d instances (+%d during the deploy), pool %d each, %s%n",
                        topology.label,
                        instances,
                        surge,
                        size,
                        topology.viaPgBouncer ? "through PgBouncer" : "straight to PostgreSQL");
                out.flush();
                clearRole(user, password); // e.g. PgBouncer's idle server connections from an earlier run
                results.put(
                        topology,
                        fleet.run(
                                topology,
                                topology.viaPgBouncer ? pgbouncerUrl : dbUrl,
                                size,
                                topology.viaPgBouncer ? pgbouncer : null,
                                user,
                                password));
            }
            return results;
        } catch (IOException | SQLException unreachable) {
            err.println("error: " + Secrets.mask(Failures.oneLine(unreachable), Secrets.passwordsIn(dbUrl)));
            return null;
        } finally {
            fleet.stopAll();
            Runtime.getRuntime().removeShutdownHook(onCtrlC);
            clearRole(user, password);
        }
    }

    private void report(
            Map<FleetTopology, FleetReport.Run> results, int withinPool, String user, String password, PrintWriter out)
            throws IOException {
        String settings = String.format(
                Locale.ROOT,
                "%d instances + %d surge, connection limit %d (role %s), "
                        + "pool %d (within budget: %d), %.0f ops/s per instance, sql=`%s`, %.0f s per phase",
                instances,
                surge,
                limit,
                ROLE,
                pool,
                withinPool,
                rate,
                sql,
                phaseSeconds);
        var table = FleetReport.table(results, limit);
        out.println(settings);
        table.forEach(out::println);
        if (report == null) {
            return;
        }
        Files.createDirectories(report);
        Files.writeString(
                report.resolve("fleet.md"),
                "# Fleet run\n\n" + settings + "\n\n" + String.join("\n", table)
                        + "\n\n![server connections over time](fleet.svg)\n",
                StandardCharsets.UTF_8);
        Files.writeString(report.resolve("fleet.svg"), FleetReport.svg(results, limit), StandardCharsets.UTF_8);
        String adaptiveChart = FleetReport.adaptiveSvg(results, poolerPool(user, password));
        if (adaptiveChart != null) {
            Files.writeString(report.resolve("fleet-adaptive.svg"), adaptiveChart, StandardCharsets.UTF_8);
            Files.writeString(
                    report.resolve("fleet.md"),
                    "\n![Σ L, clients waiting, server connections](fleet-adaptive.svg)\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.APPEND);
        }
        out.println("report: " + report.toAbsolutePath());
    }

    private static boolean samplingFailed(Map<FleetTopology, FleetReport.Run> results, PrintWriter err) {
        for (var run : results.entrySet()) {
            if (run.getValue().samplingFailure() != null) {
                err.println("error: " + run.getKey().label + ": "
                        + run.getValue().samplingFailure() + "; its server and PgBouncer columns are incomplete");
                return true;
            }
        }
        return false;
    }

    private int faults(List<PgBouncerFaults.Fault> list, String user, String password, PrintWriter out, PrintWriter err)
            throws Exception {
        var deadline = Duration.ofMillis(deadlineMillis);
        var settings = new PgBouncerFaults.Settings(
                pgbouncerUrl,
                user,
                password,
                pgbouncer,
                databaseOf(pgbouncerUrl),
                pgbouncerPidFile,
                List.of("sh", "-c", pgbouncerRestart),
                pool,
                rate,
                deadline,
                Duration.ofMillis((long) (phaseSeconds * 500)),
                Duration.ofMillis((long) (phaseSeconds * 1_000)));
        var faultRuns = new PgBouncerFaults(settings);
        var results = new ArrayList<PgBouncerFaults.Result>();
        String runId = "fleet-" + ProcessHandle.current().pid();
        for (var fault : list) {
            out.println("fault: " + fault.description);
            out.flush();
            try {
                results.add(faultRuns.run(fault, runId + "-" + fault.option()));
            } catch (IOException | SQLException e) {
                err.println("error: fault " + fault.option() + ": "
                        + Secrets.mask(Failures.oneLine(e), Secrets.passwordsIn(pgbouncerUrl)));
                return 2;
            }
        }
        String settingsLine = String.format(
                Locale.ROOT,
                "faults through %s: pool %d, B = %d adaptive "
                        + "(min 1), Q = %d, %.0f ops/s (an INSERT into the ledger and 5 ms), %.1f s before each fault "
                        + "and %.1f s after",
                Secrets.redact(pgbouncerUrl),
                pool,
                pool,
                pool,
                rate,
                phaseSeconds / 2,
                phaseSeconds);
        var table = PgBouncerFaults.table(results, deadline);
        out.println(settingsLine);
        table.forEach(out::println);
        if (report != null) {
            Files.createDirectories(report);
            Files.writeString(
                    report.resolve("faults.md"),
                    "# PgBouncer faults\n\n" + settingsLine + "\n\n" + String.join("\n", table) + "\n",
                    StandardCharsets.UTF_8);
            out.println("report: " + report.toAbsolutePath());
        }
        boolean reconciled = results.stream().allMatch(PgBouncerFaults.Result::reconciled);
        if (!reconciled) {
            err.println("error: a fault left the ledger and the callers in disagreement, or leaked (see the table)");
            return 1;
        }
        return 0;
    }

    /** PgBouncer's pool size for the fleet's database (its default_pool_size), or 0 when it cannot be read. */
    private int poolerPool(String user, String password) {
        try (var console = AdminConsole.connect(pgbouncer, user, password)) {
            for (var row : console.query("SHOW CONFIG")) {
                if ("default_pool_size".equals(row.get("key"))) {
                    return Integer.parseInt(row.get("value"));
                }
            }
        } catch (IOException | RuntimeException e) {
            // the chart goes without the line
        }
        return 0;
    }

    /** {@code bulkhead} in {@code jdbc:postgresql://host:port/bulkhead?prepareThreshold=0}. */
    static String databaseOf(String jdbcUrl) {
        String rest = jdbcUrl.substring(jdbcUrl.indexOf("//") + 2);
        int slash = rest.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("--pgbouncer-url names no database: " + Secrets.redact(jdbcUrl));
        }
        int query = rest.indexOf('?');
        return rest.substring(slash + 1, query < 0 ? rest.length() : query);
    }

    /**
     * The process of one instance. The URL (a password may be in it) and the password go through the environment,
     * which only the owner can read ({@code /proc/<pid>/environ}), never on the command line, which any user sees in
     * {@code ps}.
     */
    ProcessBuilder instance(String name, String url, int size, boolean adaptive) {
        var java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        var command = new ArrayList<>(List.of(
                java,
                "-Xmx128m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                FleetInstance.class.getName()));
        command.addAll(
                new FleetInstance.Settings(name, ROLE, size, size, size, Duration.ofMillis(50), rate, sql, adaptive)
                        .toArgs());
        var pb = new ProcessBuilder(command);
        pb.environment().put(FleetInstance.URL_VARIABLE, url);
        pb.environment().put("DB_PASSWORD", "");
        return pb;
    }

    /** Ends every session of the fleet's role, so that each topology starts from none and none outlives the run. */
    private void clearRole(String user, String password) {
        try {
            FleetRole.clear(dbUrl, user, password);
        } catch (SQLException e) {
            spec.commandLine()
                    .getErr()
                    .println("warning: could not end the sessions of " + ROLE + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
