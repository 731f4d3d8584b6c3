package dev.dbbulkhead.tools.overload;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.testkit.TestDatabase;
import dev.dbbulkhead.tools.support.PostgresOnly;
import dev.dbbulkhead.tools.support.ReportFolder;
import dev.dbbulkhead.tools.support.ServerLimits;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Runs one load through several configurations (pool only, the article's barrier, db-bulkhead, Resilience4j) on
 * the real PostgreSQL, in two scenarios (a burst released at once, an open loop at a fixed rate), and prints one
 * table; {@code --report DIR} also writes it as Markdown with an SVG chart.
 */
@Command(
        name = "overload",
        header = "Compare pool-only, the article's barrier, db-bulkhead and Resilience4j under overload on "
                + "PostgreSQL.",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Compare pool-only, the article's barrier, db-bulkhead (as built by default, and with "
                    + "rejection stack traces) and Resilience4j under the same overload on PostgreSQL "
                    + "(DB_URL/DB_USER/DB_PASSWORD, else embedded).",
            "Latency counts from each operation's intended start; medians over the repetitions, which run "
                    + "round-robin after an unmeasured warm-up burst per configuration."
        })
public final class OverloadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--pool",
            defaultValue = "4",
            paramLabel = "P",
            description = "Pool size (default: ${DEFAULT-VALUE}).")
    int pool;

    @Option(
            names = "--connection-timeout",
            defaultValue = "1000",
            paramLabel = "MS",
            description = "HikariCP connectionTimeout, >= 250 (default: ${DEFAULT-VALUE}).")
    long connectionTimeoutMs;

    @Option(
            names = "--concurrent",
            defaultValue = "4",
            paramLabel = "B",
            description = "Execution permits B (default: ${DEFAULT-VALUE}).")
    int concurrent;

    @Option(
            names = "--extra",
            defaultValue = "16",
            paramLabel = "Q",
            description = "Extra admission Q (default: ${DEFAULT-VALUE}).")
    int extra;

    @Option(
            names = "--wait",
            defaultValue = "50",
            paramLabel = "MS",
            description = "Queue wait for an execution permit (default: ${DEFAULT-VALUE}).")
    long waitMs;

    @Option(
            names = "--sql",
            defaultValue = "SELECT pg_sleep(0.02)",
            paramLabel = "SQL",
            description = "What each operation runs (default: ${DEFAULT-VALUE}).")
    String sql;

    @Option(
            names = "--operations",
            defaultValue = "2000",
            paramLabel = "N",
            description = "Operations in the burst (default: ${DEFAULT-VALUE}).")
    int operations;

    /**
     * The open loop starts a virtual thread per arrival, and an overloaded run holds them all: arrivals closer than
     * 10 us apart are not timed anyway, and a million waiting operations is what a run holds in a 1 GB heap.
     */
    static final double MAX_RATE = 100_000;

    static final double MAX_OPERATIONS = 1_000_000;

    @Option(
            names = "--rate",
            paramLabel = "OPS",
            description = "Open-loop arrivals per second (default: 5 × the pool's measured capacity; at most 100000, "
                    + "and --rate × --duration at most 1000000).")
    Double rate;

    @Option(
            names = "--duration",
            defaultValue = "10",
            paramLabel = "S",
            description = "Open-loop duration in seconds (default: ${DEFAULT-VALUE}).")
    double durationSeconds;

    @Option(
            names = "--repetitions",
            defaultValue = "3",
            paramLabel = "N",
            description =
                    "Runs of each scenario and configuration; the table shows medians (default: ${DEFAULT-VALUE}).")
    int repetitions;

    @Option(
            names = "--configs",
            split = ",",
            paramLabel = "NAME",
            defaultValue = "pool-only,article,db-bulkhead,db-bulkhead-traces,resilience4j",
            description = "Configurations to compare (default: ${DEFAULT-VALUE}).")
    List<String> configs;

    @Option(
            names = "--scenarios",
            split = ",",
            paramLabel = "NAME",
            defaultValue = "burst,open-loop",
            description = "Scenarios: burst, open-loop; and the capacity ones, for adaptive limits: s1-cpu (CPU-bound "
                    + "work), s2-locks (K advisory locks), s3-step (K = 8, then 2, then 8), s4-mixed (90 %% 2 ms, 10 "
                    + "%% 100 ms on the K locks), s5-two-workloads (interactive 5 ms / 100 ms deadline beside batch 50 "
                    + "ms / 5 s), s6-burst (--burst-size callers at once, every two deadlines), s7-shifting (2 / 20 / "
                    + "200 ms on the K locks, the slowest kind 2 %%, then 20 %%, then 2 %% of arrivals), "
                    + "s8-median-shift (the same kinds, the 20 ms one 20 %%, then 60 %%, then 20 %%) (default: "
                    + "${DEFAULT-VALUE}).")
    List<String> scenarios;

    @Option(
            names = "--capacity-configs",
            split = ",",
            paramLabel = "NAME",
            defaultValue = "pool-only,static,db-bulkhead,db-bulkhead-adaptive,gradient2,vegas",
            description = "Capacity scenarios: configurations to compare; static is swept over --sweep; also "
                    + "recommended, recommended-kinds (kinds learned per call site), workload-per-kind and "
                    + "split-by-arrivals (a workload per kind, by sizing.md's rule or by arrivals) "
                    + "(default: ${DEFAULT-VALUE}).")
    List<String> capacityConfigs;

    @Option(
            names = "--loads",
            split = ",",
            paramLabel = "X",
            defaultValue = "1,2,5,10",
            description = "Capacity scenarios: Poisson arrival rates, as multiples of the measured capacity "
                    + "(default: ${DEFAULT-VALUE}).")
    List<Double> loads;

    @Option(
            names = "--deadline",
            defaultValue = "300",
            paramLabel = "MS",
            description = "Capacity scenarios: each operation's deadline from its intended start "
                    + "(default: ${DEFAULT-VALUE}).")
    long deadlineMs;

    @Option(
            names = "--max-concurrent",
            defaultValue = "16",
            paramLabel = "B",
            description = "Capacity scenarios: the pool size, and B for db-bulkhead and the adaptive limiters' "
                    + "maximum (default: ${DEFAULT-VALUE}).")
    int maxConcurrent;

    @Option(
            names = "--sweep",
            split = ",",
            paramLabel = "B",
            defaultValue = "1,2,4,8,16",
            description = "Capacity scenarios: the values of B tried for the best static one "
                    + "(default: ${DEFAULT-VALUE}).")
    List<Integer> sweep;

    @Option(
            names = "--locks",
            defaultValue = "4",
            paramLabel = "K",
            description = "s2-locks: advisory locks, the capacity (default: ${DEFAULT-VALUE}).")
    int locks;

    @Option(
            names = "--hold",
            defaultValue = "10",
            paramLabel = "MS",
            description = "s2-locks, s3-step: how long an operation holds its lock (default: ${DEFAULT-VALUE}).")
    int holdMs;

    @Option(
            names = "--cpu",
            defaultValue = "5",
            paramLabel = "MS",
            description = "s1-cpu: CPU time of one operation alone (default: ${DEFAULT-VALUE}).")
    double cpuMs;

    @Option(
            names = "--burst-size",
            defaultValue = "200",
            paramLabel = "N",
            description = "s6-burst: callers arriving at once in each burst (default: ${DEFAULT-VALUE}).")
    int burstSize;

    @Option(names = "--report", paramLabel = "DIR", description = "Also write DIR/overload.md and DIR/overload.svg.")
    Path report;

    @Option(
            names = "--pin",
            description = "Capacity scenarios: PostgreSQL on CPU 0, this tool on the others "
                    + "(taskset; the server must be local and readable by this user), so that they stop "
                    + "sharing a core.")
    boolean pin;

    @Override
    public Integer call() throws Exception {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        PostgresOnly.check();
        TestDatabase db = TestDatabase.get();
        List<String> capacity =
                scenarios.stream().filter(CapacityScenario::isOne).toList();
        scenarios = scenarios.stream().filter(s -> !CapacityScenario.isOne(s)).toList();
        if (!scenarios.isEmpty()) {
            classic(out, db);
        }
        if (!capacity.isEmpty()) {
            var kinds =
                    capacityConfigs.stream().map(CapacityGates.Kind::byLabel).toList();
            new CapacityBench(
                            new CapacitySettings(
                                    capacity,
                                    kinds,
                                    loads,
                                    sweep,
                                    maxConcurrent,
                                    deadlineMs,
                                    durationSeconds,
                                    repetitions,
                                    locks,
                                    holdMs,
                                    cpuMs,
                                    burstSize,
                                    report,
                                    pin),
                            out,
                            db,
                            new Progress(spec.commandLine().getErr(), 0))
                    .run();
        }
        return 0;
    }

    /** The burst and open-loop scenarios. */
    private void classic(PrintWriter out, TestDatabase db) throws Exception {
        List<Barriers> barriers = configs.stream().map(Barriers::byLabel).toList();
        Duration wait = Duration.ofMillis(waitMs);
        try {
            ServerLimits.checkFreeConnections(db, "--pool", pool);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        runsThroughABarrier(db);
        double opSeconds = calibrate(db);
        double capacity = pool / opSeconds;
        double openRate = rate != null ? rate : 5 * capacity;
        out.printf(
                "database: %s; one operation alone: %.1f ms; pool capacity ≈ %.0f ops/s%n",
                db.description(), opSeconds * 1000, capacity);
        out.printf(
                "pool=%d connectionTimeout=%d ms, B=%d, Q=%d, wait=%d ms, sql=%s%n",
                pool, connectionTimeoutMs, concurrent, extra, waitMs, sql);
        out.printf(
                "burst: %d operations at once; open loop: %.0f ops/s for %.1f s; %d repetition(s)%n%n",
                operations, openRate, durationSeconds, repetitions);
        var progress = new Progress(
                spec.commandLine().getErr(), barriers.size() + scenarios.size() * barriers.size() * repetitions);
        // An unmeasured burst through each configuration first, so that none is measured with cold code.
        for (Barriers barrier : barriers) {
            try (var ds = newPool(db)) {
                OverloadRun.burst(barrier.gate(ds, concurrent, extra, wait), sql, Math.min(operations, 500));
            }
            progress.step("warm-up " + barrier.label);
        }
        Map<OverloadReport.Key, List<OverloadRun>> runs = new LinkedHashMap<>();
        for (String scenario : scenarios) {
            for (Barriers barrier : barriers) {
                runs.put(new OverloadReport.Key(scenario, barrier), new ArrayList<>());
            }
        }
        // Round-robin over the configurations, so that drift (JIT, GC, the server's caches) spreads over all.
        for (int r = 0; r < repetitions; r++) {
            for (String scenario : scenarios) {
                for (Barriers barrier : barriers) {
                    runs.computeIfAbsent(new OverloadReport.Key(scenario, barrier), k -> new ArrayList<>())
                            .add(runOnce(db, scenario, barrier, wait, openRate));
                    progress.step(scenario + " " + barrier.label);
                }
            }
        }
        progress.done();
        var table = OverloadReport.table(runs);
        table.forEach(out::println);
        out.flush();
        if (report != null) {
            String settings = String.format(
                    "pool=%d, connectionTimeout=%d ms, B=%d, Q=%d, wait=%d ms, sql=`%s`, "
                            + "burst of %d, open loop %.0f ops/s for %.1f s, %d repetition(s), one operation alone "
                            + "%.1f ms, database: %s, JDK %s",
                    pool,
                    connectionTimeoutMs,
                    concurrent,
                    extra,
                    waitMs,
                    sql,
                    operations,
                    openRate,
                    durationSeconds,
                    repetitions,
                    opSeconds * 1000,
                    db.isEmbedded() ? "embedded PostgreSQL" : "DB_URL",
                    Runtime.version());
            OverloadReport.write(report, settings, table, runs);
            out.println();
            out.println("report: " + report.resolve("overload.md") + ", " + report.resolve("overload.svg"));
        }
    }

    private void validate() {
        var errors = new ArrayList<String>();
        checkClassic(errors);
        checkCapacity(errors);
        if (errors.isEmpty() && report != null) {
            String problem = ReportFolder.problem(report);
            if (problem != null) {
                errors.add(problem);
            }
        }
        if (!errors.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("; ", errors));
        }
    }

    /** The options of the burst and open-loop scenarios. */
    private void checkClassic(List<String> errors) {
        atLeast(errors, "--pool", pool, 1);
        if (connectionTimeoutMs < 250) {
            errors.add("--connection-timeout must be >= 250 (HikariCP's minimum), was " + connectionTimeoutMs);
        }
        atLeast(errors, "--concurrent", concurrent, 1);
        if (concurrent > pool && pool >= 1) {
            errors.add("--concurrent (" + concurrent + ") must not exceed --pool (" + pool + "): the barrier would "
                    + "admit operations that then queue inside the pool");
        }
        atLeast(errors, "--extra", extra, 0);
        atLeast(errors, "--wait", waitMs, 0);
        atLeast(errors, "--operations", operations, 1);
        boolean rateOk = rate == null || finitePositive(errors, "--rate", rate);
        if (rate != null && rateOk && rate > MAX_RATE) {
            rateOk = false;
            errors.add("--rate must be at most " + (long) MAX_RATE + " ops/s (the open loop times each arrival and "
                    + "holds every waiting one), was " + rate);
        }
        if (finitePositive(errors, "--duration", durationSeconds)
                && rate != null
                && rateOk
                && rate * durationSeconds > MAX_OPERATIONS) {
            errors.add("--rate × --duration must be at most " + (long) MAX_OPERATIONS + " operations, was " + rate
                    + " × " + durationSeconds);
        }
        atLeast(errors, "--repetitions", repetitions, 1);
        for (String c : configs) {
            try {
                Barriers.byLabel(c);
            } catch (IllegalArgumentException e) {
                errors.add("--configs: " + e.getMessage());
            }
        }
    }

    /** The options of the capacity scenarios. */
    private void checkCapacity(List<String> errors) {
        for (String s : scenarios) {
            if (!s.equals("burst") && !s.equals("open-loop") && !CapacityScenario.isOne(s)) {
                errors.add("--scenarios: unknown '" + s + "'; known: burst, open-loop, s1-cpu, s2-locks, s3-step, "
                        + "s4-mixed, s5-two-workloads, s6-burst");
            }
        }
        for (String c : capacityConfigs) {
            if (!CapacityGates.Kind.labels().contains(c)) {
                errors.add("--capacity-configs: unknown '" + c + "'; known: " + CapacityGates.Kind.labels());
            }
        }
        if (loads.stream().anyMatch(l -> !(l > 0 && Double.isFinite(l)))) {
            errors.add("--loads must all be finite numbers > 0, was " + loads);
        }
        atLeast(errors, "--deadline", deadlineMs, 1);
        atLeast(errors, "--max-concurrent", maxConcurrent, 1);
        if (sweep.stream().anyMatch(b -> b < 1 || b > maxConcurrent)) {
            errors.add("--sweep values must be between 1 and --max-concurrent " + maxConcurrent + ", was " + sweep);
        }
        atLeast(errors, "--locks", locks, 1);
        atLeast(errors, "--hold", holdMs, 1);
        finitePositive(errors, "--cpu", cpuMs);
        atLeast(errors, "--burst-size", burstSize, 1);
    }

    private static void atLeast(List<String> errors, String option, long value, long min) {
        if (value < min) {
            errors.add(option + " must be >= " + min + ", was " + value);
        }
    }

    /** Whether {@code value} is a finite number above zero; an error naming {@code option} otherwise. */
    private static boolean finitePositive(List<String> errors, String option, double value) {
        if (value > 0 && Double.isFinite(value)) {
            return true;
        }
        errors.add(option + " must be a finite number > 0, was " + value);
        return false;
    }

    private HikariDataSource newPool(TestDatabase db) throws SQLException {
        return Barriers.warmPool(db, pool, Duration.ofMillis(connectionTimeoutMs));
    }

    /**
     * {@code --sql} once inside a db-bulkhead transaction, as every barrier configuration will run it: SQL the guard
     * refuses (a {@code COMMIT}, a session {@code SET}) or that fails stops here, in one line, before any measurement.
     */
    private void runsThroughABarrier(TestDatabase db) throws SQLException, InterruptedException {
        try (var ds = newPool(db)) {
            new DbBulkhead(ds, 1, 0).transaction(Duration.ofSeconds(30), c -> {
                try (var statement = c.createStatement()) {
                    statement.execute(sql);
                }
                return null;
            });
        } catch (SQLException e) {
            if (ServerLimits.isServers(e)) {
                throw new IllegalStateException(ServerLimits.serverFailure(e), e);
            }
            throw new ParameterException(
                    spec.commandLine(),
                    "--sql cannot run inside a db-bulkhead transaction, so "
                            + "every operation through a barrier would fail: " + e.getMessage() + " (SQLState "
                            + e.getSQLState() + ")");
        }
    }

    /** The time of one operation on an idle pool, the median of 20. */
    private double calibrate(TestDatabase db) throws SQLException {
        try (var ds = newPool(db)) {
            return Barriers.medianNanos(ds, sql, 20) / 1e9;
        }
    }

    private OverloadRun runOnce(TestDatabase db, String scenario, Barriers barrier, Duration wait, double openRate)
            throws Exception {
        System.gc();
        try (var ds = newPool(db)) {
            var gate = barrier.gate(ds, concurrent, extra, wait);
            return scenario.equals("burst")
                    ? OverloadRun.burst(gate, sql, operations)
                    : OverloadRun.openLoop(gate, sql, openRate, durationSeconds);
        }
    }
}
