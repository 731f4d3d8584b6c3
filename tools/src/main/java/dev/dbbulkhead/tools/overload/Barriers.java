package dev.dbbulkhead.tools.overload;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.QueueTimeoutException;
import dev.dbbulkhead.WorkloadConfig;
import dev.dbbulkhead.WouldTimeOutException;
import dev.dbbulkhead.testkit.TestDatabase;
import dev.dbbulkhead.tools.support.Labels;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/** The configurations that the overload tool compares, each running one operation its own way. */
enum Barriers {
    POOL_ONLY("pool-only"),
    ARTICLE("article"),
    DB_BULKHEAD("db-bulkhead"),
    DB_BULKHEAD_TRACES("db-bulkhead-traces"),
    DB_BULKHEAD_PREDICTIVE("db-bulkhead-predictive"),
    RESILIENCE4J("resilience4j");

    final String label;

    Barriers(String label) {
        this.label = label;
    }

    static Barriers byLabel(String label) {
        return Labels.of(values(), b -> b.label, label, "configuration");
    }

    /** How one operation ended. */
    enum Result {
        SUCCEEDED,
        REJECTED_FULL,
        REJECTED_PREDICTED,
        REJECTED_TIMEOUT,
        FAILED_POOL_TIMEOUT,
        FAILED_OTHER
    }

    /** The SQL of one operation, run on a connection in a transaction; tells the caller when it starts. */
    interface Operation {
        void run(Connection connection) throws SQLException;
    }

    /** One configuration over one pool. */
    interface Gate {
        void execute(Operation op) throws SQLException, InterruptedException;
    }

    Gate gate(DataSource pool, int concurrent, int extraSlots, Duration wait) {
        return switch (this) {
            case POOL_ONLY -> op -> plainTransaction(pool, op);
            case ARTICLE -> articleBarrier(pool, concurrent, extraSlots, wait);
            case DB_BULKHEAD, DB_BULKHEAD_TRACES, DB_BULKHEAD_PREDICTIVE -> {
                var gate = DbBulkhead.builder(pool)
                        .name("overload")
                        .workload(WorkloadConfig.builder("default")
                                .concurrent(concurrent)
                                .extraSlots(extraSlots)
                                .predictiveRejection(this == DB_BULKHEAD_PREDICTIVE)
                                .build())
                        .rejectionStackTraces(this == DB_BULKHEAD_TRACES)
                        .build();
                yield op -> gate.transaction(wait, c -> {
                    op.run(c);
                    return null;
                });
            }
            case RESILIENCE4J -> {
                var bulkhead = Bulkhead.of(
                        "overload",
                        BulkheadConfig.custom()
                                .maxConcurrentCalls(concurrent)
                                .maxWaitDuration(wait)
                                .build());
                yield op -> {
                    bulkhead.acquirePermission();
                    try {
                        plainTransaction(pool, op);
                    } finally {
                        bulkhead.onComplete();
                    }
                };
            }
        };
    }

    /** The article's barrier as its code reads: a slot semaphore and a fair execution semaphore. */
    private static Gate articleBarrier(DataSource pool, int concurrent, int extraSlots, Duration wait) {
        var slots = new Semaphore(concurrent + extraSlots);
        var running = new Semaphore(concurrent, true);
        return op -> {
            if (!slots.tryAcquire()) {
                throw new RejectedExecutionException("db admission full");
            }
            boolean acquired = false;
            try {
                acquired = running.tryAcquire(wait.toNanos(), TimeUnit.NANOSECONDS);
                if (!acquired) {
                    throw new ArticleTimeout();
                }
                plainTransaction(pool, op);
            } finally {
                if (acquired) {
                    running.release();
                }
                slots.release();
            }
        };
    }

    private static final class ArticleTimeout extends RejectedExecutionException {
        ArticleTimeout() {
            super("db admission timed out");
        }
    }

    /** A pool of {@code size} with every connection opened once before the clock starts, as a warm service has. */
    static HikariDataSource warmPool(TestDatabase db, int size, Duration connectionTimeout) throws SQLException {
        HikariDataSource ds = db.pool(size, connectionTimeout);
        var held = new ArrayList<Connection>();
        long until = System.nanoTime() + WARM_UP.toNanos();
        try {
            while (held.size() < size) {
                try {
                    held.add(ds.getConnection());
                } catch (SQLTransientConnectionException slow) {
                    // The pool opens connections one at a time: on a loaded machine, more slowly than the run's short
                    // connectionTimeout. Opening them is not measured: keep asking, for WARM_UP at most.
                    if (System.nanoTime() - until > 0) {
                        ds.close();
                        throw slow;
                    }
                }
            }
        } finally {
            for (Connection c : held) {
                c.close();
            }
        }
        return ds;
    }

    /** How long a pool may take to open its connections before a run. */
    static final Duration WARM_UP = Duration.ofSeconds(30);

    /** {@code sql} alone in a plain transaction on {@code pool}. */
    static void plainStatement(DataSource pool, String sql) throws SQLException {
        plainTransaction(pool, c -> {
            try (var s = c.createStatement()) {
                s.execute(sql);
            }
        });
    }

    /**
     * The median time, in nanoseconds, of {@code runs} plain transactions of {@code sql}, one at a time. A failed one
     * (a pool timeout on a loaded machine, a server error) is not a sample and is tried again, {@code runs} times at
     * most; then the last failure is thrown.
     */
    static long medianNanos(DataSource pool, String sql, int runs) throws SQLException {
        long[] times = new long[runs];
        int failures = 0;
        for (int i = 0; i < runs; ) {
            long start = System.nanoTime();
            try {
                plainStatement(pool, sql);
            } catch (SQLException failed) {
                if (++failures > runs) {
                    throw failed;
                }
                continue;
            }
            times[i++] = System.nanoTime() - start;
        }
        Arrays.sort(times);
        return times[runs / 2];
    }

    static void plainTransaction(DataSource pool, Operation op) throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try {
                op.run(c);
                c.commit();
            } catch (SQLException | RuntimeException | Error e) {
                try {
                    c.rollback();
                } catch (SQLException rollbackFailure) {
                    e.addSuppressed(rollbackFailure);
                }
                throw e;
            }
        }
    }

    static Result classify(@Nullable Throwable t) {
        if (t == null) {
            return Result.SUCCEEDED;
        }
        if (t instanceof AdmissionFullException) {
            return Result.REJECTED_FULL;
        }
        if (t instanceof WouldTimeOutException) {
            return Result.REJECTED_PREDICTED;
        }
        if (t instanceof QueueTimeoutException || t instanceof ArticleTimeout || t instanceof BulkheadFullException) {
            return Result.REJECTED_TIMEOUT;
        }
        if (t instanceof RejectedExecutionException) {
            return Result.REJECTED_FULL;
        }
        if (t instanceof SQLTransientConnectionException) {
            return Result.FAILED_POOL_TIMEOUT;
        }
        return Result.FAILED_OTHER;
    }

    /**
     * Operations per second that {@code callers} in a closed loop get for {@code seconds}, straight on the pool. A
     * failed operation is not counted and its caller goes on; if none succeeded, the first failure is thrown.
     */
    static double closedLoopRate(DataSource ds, CapacityScenario.Work work, int callers, double seconds)
            throws Exception {
        var done = new LongAdder();
        var failure = new AtomicReference<@Nullable SQLException>();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        try (var tasks = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < callers; i++) {
                var unused = tasks.submit(() -> {
                    var random = new Random(callers);
                    while (System.nanoTime() < end) {
                        try {
                            plainStatement(ds, work.sql(0, random.nextDouble()));
                            done.increment();
                        } catch (SQLException failed) {
                            failure.compareAndSet(null, failed);
                        }
                    }
                    return null;
                });
            }
        }
        SQLException first = failure.get();
        if (done.sum() == 0 && first != null) {
            throw first;
        }
        return done.sum() / seconds;
    }
}
