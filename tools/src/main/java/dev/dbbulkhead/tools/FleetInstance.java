package dev.dbbulkhead.tools;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.WorkloadConfig;
import java.io.IOException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.ConcurrentHistogram;

/**
 * One instance of the fleet run, in its own JVM: a HikariCP pool and a db-bulkhead barrier, driven by open-loop
 * arrivals until its standard input closes (the coordinator's "stop"), then one {@code result} line on standard
 * output (and, for an adaptive one, a {@code limit <epoch ms> <L>} line every 200 ms before it). Arguments: name,
 * user, pool size, B, Q, queue wait ms, arrivals per second, SQL, and optionally {@code adaptive}; the JDBC URL comes from
 * {@value #URL_VARIABLE} and the password from {@code DB_PASSWORD}: nothing secret on the command line.
 */
public final class FleetInstance {
    /** The environment variable that carries the instance's JDBC URL. */
    static final String URL_VARIABLE = "FLEET_DB_URL";

    private FleetInstance() {}

    public static void main(String[] args) throws Exception {
        String name = args[0];
        String user = args[1];
        int pool = Integer.parseInt(args[2]);
        int concurrent = Integer.parseInt(args[3]);
        int extra = Integer.parseInt(args[4]);
        var wait = Duration.ofMillis(Long.parseLong(args[5]));
        double rate = Double.parseDouble(args[6]);
        String sql = args[7];
        boolean adaptive = args.length > 8 && args[8].equals("adaptive");
        var config = new HikariConfig();
        config.setJdbcUrl(System.getenv(URL_VARIABLE));
        config.setUsername(user);
        config.setPassword(System.getenv().getOrDefault("DB_PASSWORD", ""));
        config.setMaximumPoolSize(pool);
        config.setMinimumIdle(pool); // a service keeps its pool full: that is what a rolling deploy doubles
        config.setConnectionTimeout(1_000);
        config.setInitializationFailTimeout(-1); // start even when the server refuses, as a real instance would
        config.setPoolName(name);
        config.addDataSourceProperty("ApplicationName", name);
        var counts = new Counts();
        var succeeded = new ConcurrentHistogram(TimeUnit.SECONDS.toNanos(60), 2);
        var inside = new AtomicInteger();
        var peakInside = new AtomicInteger();
        try (var ds = new HikariDataSource(config); var load = Executors.newVirtualThreadPerTaskExecutor()) {
            var workload = WorkloadConfig.builder("default").concurrent(concurrent).extraSlots(extra);
            if (adaptive) {
                workload.adaptiveLimitMin(1);
            }
            var db = DbBulkhead.builder(ds).name(name).workload(workload.build()).build();
            if (adaptive) {
                Thread.ofPlatform().daemon().name("limit-reporter").start(() -> {
                    while (true) {
                        System.out.println("limit " + System.currentTimeMillis() + " " + db.workload("default").limit());
                        try {
                            Thread.sleep(200);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });
            }
            var stopped = Thread.ofPlatform().daemon().start(FleetInstance::awaitStdinClosed);
            long interval = (long) (1e9 / rate);
            long start = System.nanoTime();
            for (long i = 0; stopped.isAlive(); i++) {
                long intended = start + i * interval;
                long sleep = intended - System.nanoTime();
                if (sleep > 0) {
                    TimeUnit.NANOSECONDS.sleep(sleep);
                }
                load.submit(() -> {
                    peakInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    try {
                        db.transaction(wait, c -> {
                            try (var s = c.createStatement()) {
                                s.execute(sql);
                            }
                            return null;
                        });
                        succeeded.recordValue(Math.max(0, System.nanoTime() - intended));
                        counts.succeeded.increment();
                    } catch (AdmissionFullException full) {
                        counts.rejectedFull.increment();
                    } catch (BulkheadRejectedException timeout) {
                        counts.rejectedTimeout.increment();
                    } catch (SQLException e) {
                        counts.failed(e);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } finally {
                        inside.decrementAndGet();
                    }
                });
            }
        }
        System.out.printf("result name=%s succeeded=%d rejected_full=%d rejected_timeout=%d refused_53300=%d "
                + "pool_timeout=%d other=%d p50_ms=%.1f p99_ms=%.1f peak_inside=%d%n", name, counts.succeeded.sum(),
                counts.rejectedFull.sum(), counts.rejectedTimeout.sum(), counts.refused.sum(), counts.poolTimeout.sum(),
                counts.other.sum(), succeeded.getValueAtPercentile(50) / 1e6, succeeded.getValueAtPercentile(99) / 1e6,
                peakInside.get());
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

    private static final class Counts {
        final LongAdder succeeded = new LongAdder();
        final LongAdder rejectedFull = new LongAdder();
        final LongAdder rejectedTimeout = new LongAdder();
        final LongAdder refused = new LongAdder();
        final LongAdder poolTimeout = new LongAdder();
        final LongAdder other = new LongAdder();

        /** 53300 (too many connections) anywhere in the chain, else HikariCP's timeout, else other. */
        void failed(SQLException e) {
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
    }
}
