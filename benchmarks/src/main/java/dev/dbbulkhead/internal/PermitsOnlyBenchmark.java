package dev.dbbulkhead.internal;

import dev.dbbulkhead.benchmarks.PermitPathBenchmark;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
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
 * The permit structures alone, without any transaction: take both permits, give them back. B = 16, Q = 16, so no
 * caller ever waits. {@link Permits} is package-private: this benchmark sits in its package, which works on the class
 * path only (the module system keeps {@code dev.dbbulkhead.internal} closed, as it should for any other caller).
 *
 * <pre>java -jar benchmarks/target/benchmarks.jar PermitsOnly -t 1   (then -t 2)</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class PermitsOnlyBenchmark {
    private static final long WAIT_NANOS = Duration.ofMillis(50).toNanos();

    private Semaphore slots;
    private Semaphore running;
    private Bulkhead resilience4j;
    private Permits ours;

    @Setup
    public void setUp() {
        slots = new Semaphore(PermitPathBenchmark.B + PermitPathBenchmark.Q);
        running = new Semaphore(PermitPathBenchmark.B, true);
        resilience4j = Bulkhead.of(
                "r4j",
                BulkheadConfig.custom()
                        .maxConcurrentCalls(PermitPathBenchmark.B)
                        .maxWaitDuration(PermitPathBenchmark.WAIT)
                        .writableStackTraceEnabled(false)
                        .build());
        ours = new Permits(PermitPathBenchmark.B, PermitPathBenchmark.Q);
    }

    /** The article's pair: tryAcquire() on the slots, a timed tryAcquire on the fair execution semaphore. */
    @Benchmark
    public boolean articlePair() throws InterruptedException {
        if (!slots.tryAcquire()) {
            throw new RejectedExecutionException();
        }
        boolean acquired = running.tryAcquire(WAIT_NANOS, TimeUnit.NANOSECONDS);
        if (acquired) {
            running.release();
        }
        slots.release();
        return acquired;
    }

    @Benchmark
    public boolean resilience4j() {
        resilience4j.acquirePermission();
        resilience4j.onComplete();
        return true;
    }

    /** db-bulkhead's one-word structure: one CAS in, one out, and the caller's node (the lease does this). */
    @Benchmark
    public boolean ours() throws InterruptedException {
        var node = new Permits.Node(Thread.currentThread());
        var entered = ours.enter(node, true);
        if (entered == Permits.Entry.MUST_WAIT) {
            entered = ours.queue(node);
            if (entered == Permits.Entry.MUST_WAIT) {
                entered = ours.await(node, WAIT_NANOS);
            }
        }
        if (entered != Permits.Entry.ACQUIRED) {
            throw new RejectedExecutionException();
        }
        ours.exit(node);
        return true;
    }
}
