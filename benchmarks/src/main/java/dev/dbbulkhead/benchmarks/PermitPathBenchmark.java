package dev.dbbulkhead.benchmarks;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.SqlWork;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import dev.dbbulkhead.micrometer.DbBulkheadMetrics;
import dev.dbbulkhead.testkit.NoopDataSource;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one transaction through each kind of barrier, without a database: every variant runs the same
 * no-op JDBC sequence (get a connection, auto-commit off, work, commit, auto-commit back on, close), the one
 * {@code transaction()} runs, so the differences are the barriers' own. B = 16 and Q = 16, so that neither 1 nor 2
 * threads ever wait: this is the uncontended-permit path that every admitted operation pays.
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar PermitPath -t 1   (then -t 2)</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class PermitPathBenchmark {
    public static final int B = 16;
    public static final int Q = 16;
    public static final Duration WAIT = Duration.ofMillis(50);

    private DataSource source;
    private Semaphore bare;
    private Semaphore slots;
    private Semaphore running;
    private Bulkhead resilience4j;
    private DbBulkhead ours;
    private DbBulkhead oursWithMicrometer;
    private Workload recommended;
    private Workload recommendedNoKinds;

    private static final SqlWork<Integer> WORK = c -> 42;

    @Setup
    public void setUp() {
        source = new NoopDataSource();
        bare = new Semaphore(B);
        slots = new Semaphore(B + Q);
        running = new Semaphore(B, true);
        resilience4j = Bulkhead.of(
                "r4j",
                BulkheadConfig.custom()
                        .maxConcurrentCalls(B)
                        .maxWaitDuration(WAIT)
                        .writableStackTraceEnabled(false)
                        .build());
        ours = new DbBulkhead(source, B, Q);
        recommended = DbBulkhead.builder(source)
                .workload(WorkloadConfig.recommended("w", B))
                .build()
                .workload("w");
        recommendedNoKinds = DbBulkhead.builder(source)
                .workload(WorkloadConfig.recommended("w", B).toBuilder()
                        .kinds(false)
                        .build())
                .build()
                .workload("w");
        var metrics = new DbBulkheadMetrics(new SimpleMeterRegistry());
        oursWithMicrometer = metrics.bind(DbBulkhead.builder(source)
                .poolSize(B)
                .listener(metrics)
                .workload("default", B, Q)
                .build());
    }

    /** The transaction alone, no barrier: the floor under every variant. */
    @Benchmark
    public Integer noBarrier() throws SQLException {
        return transactionOnly();
    }

    /** One bare semaphore, tryAcquire() and release(), around the transaction. */
    @Benchmark
    public Integer bareSemaphore() throws SQLException {
        if (!bare.tryAcquire()) {
            throw new RejectedExecutionException();
        }
        try {
            return transactionOnly();
        } finally {
            bare.release();
        }
    }

    /** The article's pattern: an admission semaphore and a fair execution semaphore with a timed acquire. */
    @Benchmark
    public Integer articlePattern() throws SQLException, InterruptedException {
        if (!slots.tryAcquire()) {
            throw new RejectedExecutionException("db admission full");
        }
        boolean acquired = false;
        try {
            acquired = running.tryAcquire(WAIT.toNanos(), TimeUnit.NANOSECONDS);
            if (!acquired) {
                throw new RejectedExecutionException("db admission timed out");
            }
            return transactionOnly();
        } finally {
            if (acquired) {
                running.release();
            }
            slots.release();
        }
    }

    /** Resilience4j's SemaphoreBulkhead with the same B and wait. */
    @Benchmark
    public Integer resilience4j() throws SQLException {
        resilience4j.acquirePermission();
        try {
            return transactionOnly();
        } finally {
            resilience4j.onComplete();
        }
    }

    /** db-bulkhead: the article's contract plus guard rails and outcome reporting. */
    @Benchmark
    public Integer dbBulkhead() throws SQLException, InterruptedException {
        return ours.transaction(WAIT, WORK);
    }

    /**
     * A {@link WorkloadConfig#recommended} workload (deadline queue, predictions, kinds of operation learned: the call
     * site looked up, counted in and out): the measured path.
     */
    @Benchmark
    public Integer recommended() throws SQLException, InterruptedException {
        return recommended.transaction(WAIT, WORK);
    }

    /** The same without kinds of operation, as recommended before them. */
    @Benchmark
    public Integer recommendedNoKinds() throws SQLException, InterruptedException {
        return recommendedNoKinds.transaction(WAIT, WORK);
    }

    /** db-bulkhead with the Micrometer listener: clock reads, counters and four histogram timers per operation. */
    @Benchmark
    public Integer dbBulkheadMicrometer() throws SQLException, InterruptedException {
        return oursWithMicrometer.transaction(WAIT, WORK);
    }

    /**
     * One transaction as a transaction template runs it (Spring's {@code DataSourceTransactionManager} does the same):
     * auto-commit off if it was on, work, commit (rollback on failure), auto-commit restored, connection closed.
     */
    private Integer transactionOnly() throws SQLException {
        try (Connection c = source.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            if (autoCommit) {
                c.setAutoCommit(false);
            }
            try {
                Integer value = WORK.run(c);
                c.commit();
                return value;
            } catch (SQLException | RuntimeException | Error e) {
                c.rollback();
                throw e;
            } finally {
                if (autoCommit) {
                    c.setAutoCommit(true);
                }
            }
        }
    }
}
