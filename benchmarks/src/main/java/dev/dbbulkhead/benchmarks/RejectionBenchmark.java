package dev.dbbulkhead.benchmarks;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.testkit.NoopDataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of being refused because admission is full (B = 1, Q = 0, the permit held by another thread): what
 * every excess caller pays under overload, exception included.
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar Rejection</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class RejectionBenchmark {
    private DbBulkhead ours;
    private DbBulkhead oursWithStackTraces;
    private Semaphore slots;
    private final CountDownLatch release = new CountDownLatch(1);
    private Thread[] holders;

    @Setup(Level.Trial)
    public void setUp() throws InterruptedException {
        ours = new DbBulkhead(new NoopDataSource(), 1, 0);
        oursWithStackTraces = DbBulkhead.builder(new NoopDataSource())
                .poolSize(1)
                .workload("default", 1, 0)
                .rejectionStackTraces(true)
                .build();
        slots = new Semaphore(1);
        slots.acquire();
        holders = new Thread[] {hold(ours), hold(oursWithStackTraces)};
    }

    /** Takes the barrier's only permit on a thread of its own, until tear-down. */
    private Thread hold(DbBulkhead gate) throws InterruptedException {
        var held = new CountDownLatch(1);
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                gate.transaction(Duration.ZERO, c -> {
                    held.countDown();
                    awaitRelease();
                    return null;
                });
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        held.await();
        return t;
    }

    private void awaitRelease() throws java.sql.SQLException {
        try {
            release.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException(e);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws InterruptedException {
        release.countDown();
        for (Thread t : holders) {
            t.join();
        }
    }

    @Benchmark
    public @Nullable Object article() {
        try {
            if (!slots.tryAcquire()) {
                throw new RejectedExecutionException("db admission full");
            }
            return null;
        } catch (RejectedExecutionException e) {
            return e;
        }
    }

    @Benchmark
    public Object dbBulkhead() throws Exception {
        try {
            return ours.transaction(Duration.ofMillis(50), c -> 1);
        } catch (RejectedExecutionException e) {
            return e;
        }
    }

    /** The same, built with {@code rejectionStackTraces(true)}. */
    @Benchmark
    public Object dbBulkheadWithStackTraces() throws Exception {
        try {
            return oursWithStackTraces.transaction(Duration.ofMillis(50), c -> 1);
        } catch (RejectedExecutionException e) {
            return e;
        }
    }
}
