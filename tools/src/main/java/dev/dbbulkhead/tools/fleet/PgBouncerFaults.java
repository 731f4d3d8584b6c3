package dev.dbbulkhead.tools.fleet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.CommitOutcomeUnknownException;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.DeadlineExceededException;
import dev.dbbulkhead.SqlWork;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import dev.dbbulkhead.testkit.Secrets;
import dev.dbbulkhead.tools.support.AdminConsole;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * Faults of the middle tier, each under open-loop load through PgBouncer: a barrier (adaptive, B = pool) over a
 * HikariCP pool, every operation inserting its own row into a ledger table. Per fault it reports what the callers
 * were told, reconciles the ledger against it (a row committed but reported failed, or reported committed but absent,
 * or present twice, is a defect; an "outcome unknown" is counted as present or absent), the longest any caller waited
 * to be told, the recovery time (end of the fault to the first commit of an operation that arrived after it), the
 * overload signals the adaptive limit counted, and whether every permit and connection came back.
 */
final class PgBouncerFaults {
    static final String LEDGER = "db_bulkhead_fault_ledger";

    enum Fault {
        KILL("PgBouncer killed (SIGKILL) under load, restarted 1 s later"),
        PAUSE("PAUSE for 2 s, then RESUME (admin console)"),
        RECONNECT("RECONNECT (admin console): server connections replaced"),
        MAX_CLIENT_CONN("max_client_conn reached for 2 s: the pool's new connections refused"),
        QUERY_WAIT_TIMEOUT("query_wait_timeout = 1 s fired (PAUSE 3 s; callers without a deadline)");

        final String description;

        Fault(String description) {
            this.description = description;
        }

        String option() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        static Fault of(String option) {
            for (Fault f : values()) {
                if (f.option().equals(option)) {
                    return f;
                }
            }
            throw new IllegalArgumentException("unknown fault '" + option + "' (known: kill, pause, reconnect, "
                    + "max-client-conn, query-wait-timeout)");
        }
    }

    /**
     * Where and how hard: {@code url} through PgBouncer, its console at {@code console} (HOST:PORT) as {@code user},
     * its database name there, the pid file and the command that restarts it (for {@link Fault#KILL}).
     */
    record Settings(
            String url,
            String user,
            String password,
            String console,
            String database,
            Path pidFile,
            List<String> restart,
            int pool,
            double rate,
            Duration deadline,
            Duration before,
            Duration after) {}

    /** One fault's outcome. {@code leaks} is null when every permit and connection came back. */
    record Result(
            Fault fault,
            long operations,
            long committed,
            Map<String, Long> told,
            long unknownPresent,
            long unknownAbsent,
            long lost,
            long doubled,
            long contradicted,
            long maxWaitMillis,
            long overdue,
            long recoveryMillis,
            long overloadSignals,
            int limitBefore,
            int lowestLimit,
            int limitAfter,
            @Nullable String leaks) {
        /** Every reported outcome agrees with the ledger, and nothing leaked. */
        boolean reconciled() {
            return lost == 0 && doubled == 0 && contradicted == 0 && leaks == null;
        }
    }

    private final Settings settings;

    PgBouncerFaults(Settings settings) {
        this.settings = settings;
    }

    Result run(Fault fault, String runId) throws Exception {
        try (Connection c = connect();
                var s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + LEDGER + " (run text NOT NULL, id bigint NOT NULL)");
        }
        var told = new ConcurrentHashMap<Long, String>();
        var load = new Load(fault, runId, told);
        var config = new HikariConfig();
        config.setJdbcUrl(settings.url());
        config.setUsername(settings.user());
        config.setPassword(settings.password());
        config.setMaximumPoolSize(settings.pool());
        config.setMinimumIdle(settings.pool());
        config.setConnectionTimeout(2_000);
        config.setInitializationFailTimeout(-1);
        config.setPoolName("faults-" + fault.option());
        try (var ds = new HikariDataSource(config)) {
            var db = DbBulkhead.builder(ds)
                    .name("faults")
                    .poolSize(settings.pool())
                    .workload(WorkloadConfig.builder("default")
                            .concurrent(settings.pool())
                            .extraSlots(settings.pool())
                            .adaptiveLimitMin(1)
                            .build())
                    .listener(load)
                    .build();
            Workload w = db.workload("default");
            long faultEnd;
            try (ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor()) {
                var arrivals = Thread.ofPlatform().name("fault-arrivals").start(() -> load.arrive(w, callers));
                try {
                    sleep(settings.before());
                    load.limitBefore = w.limit();
                    load.faultStart.set(System.nanoTime());
                    faultEnd = inject(fault, ds);
                    load.faultEnd.set(faultEnd);
                    sleep(settings.after());
                } finally {
                    load.stop = true;
                    arrivals.join();
                }
            } // waits for every caller to be told
            String leaks = leaks(w, ds);
            Result result = reconcile(fault, runId, load, told, faultEnd, w.limit(), leaks);
            try (Connection c = connect();
                    var s = c.prepareStatement("DELETE FROM " + LEDGER + " WHERE run = ?")) {
                s.setString(1, runId);
                s.executeUpdate();
            }
            return result;
        }
    }

    /** Injects the fault; returns when it ended (nanoTime). */
    private long inject(Fault fault, HikariDataSource ds) throws Exception {
        String db = settings.database();
        switch (fault) {
            case KILL -> {
                long pid = Long.parseLong(Files.readString(settings.pidFile()).trim());
                ProcessHandle.of(pid)
                        .orElseThrow(() ->
                                new IOException("no PgBouncer with pid " + pid + " (from " + settings.pidFile() + ")"))
                        .destroyForcibly();
                long killed = System.nanoTime();
                // Down for 1 s, and until its parent reaped it: PgBouncer will not start while its pid file names
                // a process, even a zombie.
                while (ProcessHandle.of(pid).isPresent() || System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(1)) {
                    if (System.nanoTime() - killed > TimeUnit.SECONDS.toNanos(30)) {
                        throw new IOException("PgBouncer (pid " + pid + ") still there 30 s after SIGKILL");
                    }
                    TimeUnit.MILLISECONDS.sleep(50);
                }
                var restart = new ProcessBuilder(settings.restart())
                        .redirectErrorStream(true)
                        .start();
                restart.getOutputStream().close();
                String output = new String(restart.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (!restart.waitFor(60, TimeUnit.SECONDS) || restart.exitValue() != 0) {
                    throw new IOException("restarting PgBouncer failed (" + String.join(" ", settings.restart()) + "): "
                            + output.strip());
                }
            }
            case PAUSE ->
                console(c -> {
                    c.query("PAUSE " + db);
                    TimeUnit.SECONDS.sleep(2);
                    c.query("RESUME " + db);
                });
            case RECONNECT -> console(c -> c.query("RECONNECT " + db));
            case MAX_CLIENT_CONN ->
                console(c -> {
                    String before = config(c, "max_client_conn");
                    // Room for the clients other than this pool's: once the pool's connections are evicted, PgBouncer
                    // refuses each new one ("no more connections allowed (max_client_conn)").
                    int clients = c.query("SHOW CLIENTS").size();
                    c.query("SET max_client_conn = " + Math.max(1, clients - settings.pool()));
                    try {
                        ds.getHikariPoolMXBean().softEvictConnections(); // every new one is refused
                        TimeUnit.SECONDS.sleep(2);
                    } finally {
                        c.query("SET max_client_conn = " + before);
                    }
                });
            case QUERY_WAIT_TIMEOUT ->
                console(c -> {
                    String before = config(c, "query_wait_timeout");
                    c.query("SET query_wait_timeout = 1");
                    try {
                        c.query("PAUSE " + db);
                        TimeUnit.SECONDS.sleep(3);
                        c.query("RESUME " + db);
                    } finally {
                        c.query("SET query_wait_timeout = " + before);
                    }
                });
            default -> throw new IllegalStateException(fault.name());
        }
        return System.nanoTime();
    }

    private interface ConsoleWork {
        void run(AdminConsole console) throws Exception;
    }

    private void console(ConsoleWork work) throws Exception {
        try (var c = AdminConsole.connect(settings.console(), settings.user(), settings.password())) {
            work.run(c);
        }
    }

    private static @Nullable String config(AdminConsole c, String key) throws IOException {
        for (var row : c.query("SHOW CONFIG")) {
            if (key.equals(row.get("key"))) {
                return row.get("value");
            }
        }
        throw new IOException("PgBouncer's SHOW CONFIG has no " + key);
    }

    /** The open-loop callers of one fault run, and what they were told. */
    private final class Load implements BulkheadListener {
        final Fault fault;
        final String runId;
        final Map<Long, String> told;
        final AtomicLong faultStart = new AtomicLong(Long.MAX_VALUE);
        final AtomicLong faultEnd = new AtomicLong(Long.MAX_VALUE);
        final AtomicLong firstCommitAfter = new AtomicLong(Long.MAX_VALUE);
        final AtomicLong maxWait = new AtomicLong();
        final LongAdder overdue = new LongAdder();
        final LongAdder overloadSignals = new LongAdder();
        final AtomicLong lowestLimit = new AtomicLong(Long.MAX_VALUE);
        volatile boolean stop;
        volatile int limitBefore;

        Load(Fault fault, String runId, Map<Long, String> told) {
            this.fault = fault;
            this.runId = runId;
            this.told = told;
        }

        void arrive(Workload w, ExecutorService callers) {
            long interval = (long) (1e9 / settings.rate());
            long start = System.nanoTime();
            for (long i = 0; !stop; i++) {
                LockSupport.parkNanos(start + i * interval - System.nanoTime());
                long id = i + 1;
                callers.execute(() -> call(w, id));
            }
        }

        private void call(Workload w, long id) {
            long arrived = System.nanoTime();
            String outcome;
            try {
                SqlWork<Integer> work = c -> {
                    try (var insert = c.prepareStatement("INSERT INTO " + LEDGER + " (run, id) VALUES (?, ?)");
                            var sleep = c.createStatement()) {
                        insert.setString(1, runId);
                        insert.setLong(2, id);
                        insert.executeUpdate();
                        sleep.execute("SELECT pg_sleep(0.005)");
                    }
                    return 1;
                };
                if (fault == Fault.QUERY_WAIT_TIMEOUT) {
                    w.transaction(Duration.ofSeconds(5), work); // no deadline: only PgBouncer bounds the wait
                } else {
                    w.transaction(Deadline.in(settings.deadline()), work);
                }
                outcome = "committed";
                if (arrived >= faultEnd.get()) {
                    firstCommitAfter.accumulateAndGet(System.nanoTime(), Math::min);
                }
            } catch (CommitOutcomeUnknownException e) {
                outcome = "outcome unknown";
            } catch (DeadlineExceededException e) {
                outcome = "deadline " + e.stage().name().toLowerCase(Locale.ROOT);
            } catch (BulkheadRejectedException e) {
                outcome = "rejected " + e.reason().name().toLowerCase(Locale.ROOT);
            } catch (SQLException e) {
                outcome = "SQLState " + e.getSQLState() + " " + shortMessage(e);
            } catch (InterruptedException e) {
                outcome = "interrupted";
            } catch (RuntimeException e) {
                outcome = e.getClass().getSimpleName();
            }
            long waited = System.nanoTime() - arrived;
            maxWait.accumulateAndGet(waited, Math::max);
            if (fault != Fault.QUERY_WAIT_TIMEOUT
                    && waited > settings.deadline().toNanos() + 50_000_000) {
                overdue.increment();
            }
            if (arrived >= faultStart.get()) {
                lowestLimit.accumulateAndGet(w.limit(), Math::min);
            }
            told.put(id, outcome);
        }

        @Override
        public void onOverloadSignal(Workload workload, Throwable signal) {
            overloadSignals.increment();
        }
    }

    private static String shortMessage(SQLException e) {
        String m = Secrets.redact(String.valueOf(e.getMessage()));
        int colon = m.indexOf(':');
        m = colon > 0 && colon < 8 ? m.substring(colon + 1).trim() : m; // "ERROR: ", "FATAL: "
        return m.length() > 40 ? m.substring(0, 40) + "…" : m;
    }

    /** Null when the barrier and the pool are back to rest, else what is still out. */
    private static @Nullable String leaks(Workload w, HikariDataSource ds) throws InterruptedException {
        String state = null;
        for (int i = 0; i < 50; i++) { // a connection broken by the fault may take a moment to be evicted
            int active = ds.getHikariPoolMXBean().getActiveConnections();
            if (w.inside() == 0 && w.executing() == 0 && w.waiting() == 0 && active == 0) {
                return null;
            }
            state = "inside " + w.inside() + ", executing " + w.executing() + ", waiting " + w.waiting()
                    + ", connections in use " + active;
            TimeUnit.MILLISECONDS.sleep(100);
        }
        return state;
    }

    private Result reconcile(
            Fault fault,
            String runId,
            Load load,
            Map<Long, String> told,
            long faultEnd,
            int limitAfter,
            @Nullable String leaks)
            throws SQLException {
        var rows = new HashMap<Long, Integer>();
        try (Connection c = connect();
                var s = c.prepareStatement("SELECT id, count(*) FROM " + LEDGER + " WHERE run = ? GROUP BY id")) {
            s.setString(1, runId);
            try (var r = s.executeQuery()) {
                while (r.next()) {
                    rows.put(r.getLong(1), r.getInt(2));
                }
            }
        }
        var counts = new TreeMap<String, Long>();
        long committed = 0;
        long lost = 0;
        long doubled = 0;
        long contradicted = 0;
        long present = 0;
        long absent = 0;
        for (var e : told.entrySet()) {
            int n = rows.getOrDefault(e.getKey(), 0);
            String outcome = e.getValue();
            counts.merge(outcome, 1L, Long::sum);
            doubled += n > 1 ? 1 : 0;
            switch (outcome) {
                case "committed" -> {
                    committed++;
                    lost += n == 0 ? 1 : 0;
                }
                case "outcome unknown" -> {
                    present += n > 0 ? 1 : 0;
                    absent += n == 0 ? 1 : 0;
                }
                default -> contradicted += n > 0 ? 1 : 0;
            }
        }
        counts.remove("committed");
        long recovery = load.firstCommitAfter.get() == Long.MAX_VALUE
                ? -1
                : TimeUnit.NANOSECONDS.toMillis(load.firstCommitAfter.get() - faultEnd);
        return new Result(
                fault,
                told.size(),
                committed,
                counts,
                present,
                absent,
                lost,
                doubled,
                contradicted,
                TimeUnit.NANOSECONDS.toMillis(load.maxWait.get()),
                load.overdue.sum(),
                recovery,
                load.overloadSignals.sum(),
                load.limitBefore,
                (int) Math.min(load.lowestLimit.get(), load.limitBefore),
                limitAfter,
                leaks);
    }

    private Connection connect() throws SQLException {
        return DriverManager.getConnection(settings.url(), settings.user(), settings.password());
    }

    private static void sleep(Duration d) throws InterruptedException {
        TimeUnit.NANOSECONDS.sleep(d.toNanos());
    }

    /** The fault table, Markdown. */
    static List<String> table(List<Result> results, Duration deadline) {
        var lines = new ArrayList<String>();
        lines.add("| fault | operations | committed | what the other callers were told | outcome unknown: in ledger / "
                + "not | ledger: lost / doubled / reported failed but committed | longest wait ms (over "
                + "deadline + 50 ms) | recovery ms | overload signals | adaptive L: before / lowest / end | "
                + "permits and connections |");
        lines.add("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|");
        for (Result r : results) {
            var told = new ArrayList<String>();
            r.told().entrySet().stream()
                    .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                    .filter(e -> !e.getKey().equals("outcome unknown"))
                    .forEach(e -> told.add(e.getKey() + " " + e.getValue()));
            lines.add(String.format(
                    Locale.ROOT,
                    "| %s | %d | %d | %s | %d / %d | %d / %d / %d | %d (%d) | %s | %d | %d / %d / %d | %s |",
                    r.fault().description,
                    r.operations(),
                    r.committed(),
                    told.isEmpty() ? "—" : String.join(", ", told),
                    r.unknownPresent(),
                    r.unknownAbsent(),
                    r.lost(),
                    r.doubled(),
                    r.contradicted(),
                    r.maxWaitMillis(),
                    r.overdue(),
                    r.recoveryMillis() < 0 ? "none" : Long.toString(r.recoveryMillis()),
                    r.overloadSignals(),
                    r.limitBefore(),
                    r.lowestLimit(),
                    r.limitAfter(),
                    r.leaks() == null ? "all back" : "LEAK: " + r.leaks()));
        }
        lines.add("");
        lines.add("Deadline " + deadline.toMillis() + " ms per operation except where no deadline is said.");
        return lines;
    }
}
