package dev.dbbulkhead.tools.fleet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * One instance of the fleet run, in its own JVM: a HikariCP pool and a db-bulkhead barrier, driven by open-loop
 * arrivals until its standard input closes (the coordinator's "stop"), then one {@code result} line on standard
 * output (and, for an adaptive one, a {@code limit <epoch ms> <L>} line every 200 ms before it). Arguments: name,
 * user, pool size, B, Q, queue wait ms, arrivals per second, SQL, and optionally {@code adaptive}; the JDBC URL comes
 * from {@value #URL_VARIABLE} and the password from {@code DB_PASSWORD}: nothing secret on the command line.
 */
public final class FleetInstance {
    /** The environment variable that carries the instance's JDBC URL. */
    static final String URL_VARIABLE = "FLEET_DB_URL";

    private FleetInstance() {}

    /** What an instance runs: its command line, written by the coordinator and read here. */
    record Settings(
            String name,
            String user,
            int pool,
            int concurrent,
            int extraSlots,
            Duration queueWait,
            double rate,
            String sql,
            boolean adaptive) {
        List<String> toArgs() {
            return List.of(
                    name,
                    user,
                    Integer.toString(pool),
                    Integer.toString(concurrent),
                    Integer.toString(extraSlots),
                    Long.toString(queueWait.toMillis()),
                    Double.toString(rate),
                    sql,
                    adaptive ? "adaptive" : "static");
        }

        static Settings of(String[] args) {
            return new Settings(
                    args[0],
                    args[1],
                    Integer.parseInt(args[2]),
                    Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]),
                    Duration.ofMillis(Long.parseLong(args[5])),
                    Double.parseDouble(args[6]),
                    args[7],
                    args.length > 8 && args[8].equals("adaptive"));
        }
    }

    public static void main(String[] args) throws Exception {
        var settings = Settings.of(args);
        var stats = new Stats();
        try (var ds = pool(settings);
                var load = Executors.newVirtualThreadPerTaskExecutor()) {
            var workload = WorkloadConfig.builder("default")
                    .concurrent(settings.concurrent())
                    .extraSlots(settings.extraSlots());
            if (settings.adaptive()) {
                workload.adaptiveLimitMin(1);
            }
            var db = DbBulkhead.builder(ds)
                    .name(settings.name())
                    .workload(workload.build())
                    .build();
            if (settings.adaptive()) {
                Thread.ofPlatform().daemon().name("limit-reporter").start(() -> reportLimits(db.workload("default")));
            }
            var stopped = Thread.ofPlatform().daemon().start(FleetInstance::awaitStdinClosed);
            long interval = (long) (1e9 / settings.rate());
            long start = System.nanoTime();
            for (long i = 0; stopped.isAlive(); i++) {
                long intended = start + i * interval;
                long sleep = intended - System.nanoTime();
                if (sleep > 0) {
                    TimeUnit.NANOSECONDS.sleep(sleep);
                }
                var unused = load.submit(() -> stats.call(db, settings, intended)); // call() reports its own end
            }
        }
        System.out.println(FleetLines.result(stats.result(settings.name())));
    }

    /** The instance's pool, kept full as a service's is: that is what a rolling deploy doubles. */
    private static HikariDataSource pool(Settings settings) {
        var config = new HikariConfig();
        config.setJdbcUrl(System.getenv(URL_VARIABLE));
        config.setUsername(settings.user());
        config.setPassword(System.getenv().getOrDefault("DB_PASSWORD", ""));
        config.setMaximumPoolSize(settings.pool());
        config.setMinimumIdle(settings.pool());
        config.setConnectionTimeout(1_000);
        config.setInitializationFailTimeout(-1); // start even when the server refuses, as a real instance would
        config.setPoolName(settings.name());
        config.addDataSourceProperty("ApplicationName", settings.name());
        return new HikariDataSource(config);
    }

    private static void reportLimits(Workload workload) {
        while (true) {
            System.out.println(FleetLines.limit(System.currentTimeMillis(), workload.limit()));
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static void awaitStdinClosed() {
        try {
            while (System.in.read() >= 0) {
                // the coordinator writes nothing: only the end of input matters
            }
        } catch (IOException closed) {
            // the same: stop
        }
    }

    /** What the instance's calls ended with. */
    private static final class Stats {
        final LongAdder succeeded = new LongAdder();
        final LongAdder rejectedFull = new LongAdder();
        final LongAdder rejectedTimeout = new LongAdder();
        final LongAdder refused = new LongAdder();
        final LongAdder poolTimeout = new LongAdder();
        final LongAdder other = new LongAdder();
        final ConcurrentHistogram latency = new ConcurrentHistogram(TimeUnit.SECONDS.toNanos(60), 2);
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger peakInside = new AtomicInteger();

        /** One arrival, intended at {@code intended}: its transaction and how it ended. */
        void call(DbBulkhead db, Settings settings, long intended) {
            peakInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                db.transaction(settings.queueWait(), c -> {
                    try (var s = c.createStatement()) {
                        s.execute(settings.sql());
                    }
                    return null;
                });
                latency.recordValue(Math.max(0, System.nanoTime() - intended));
                succeeded.increment();
            } catch (AdmissionFullException full) {
                rejectedFull.increment();
            } catch (BulkheadRejectedException timeout) {
                rejectedTimeout.increment();
            } catch (SQLException e) {
                failed(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                inside.decrementAndGet();
            }
        }

        /** 53300 (too many connections) anywhere in the chain, else HikariCP's timeout, else other. */
        private void failed(SQLException e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof SQLException sql && "53300".equals(sql.getSQLState())) {
                    refused.increment();
                    return;
                }
            }
            if (e instanceof SQLTransientConnectionException) {
                poolTimeout.increment();
            } else {
                other.increment();
            }
        }

        Map<String, Object> result(String name) {
            var fields = new LinkedHashMap<String, Object>();
            fields.put("name", name);
            fields.put("succeeded", succeeded.sum());
            fields.put("rejected_full", rejectedFull.sum());
            fields.put("rejected_timeout", rejectedTimeout.sum());
            fields.put("refused_53300", refused.sum());
            fields.put("pool_timeout", poolTimeout.sum());
            fields.put("other", other.sum());
            fields.put("p50_ms", String.format(Locale.ROOT, "%.1f", latency.getValueAtPercentile(50) / 1e6));
            fields.put("p99_ms", String.format(Locale.ROOT, "%.1f", latency.getValueAtPercentile(99) / 1e6));
            fields.put("peak_inside", peakInside.get());
            return fields;
        }
    }
}
