package dev.dbbulkhead.tools.overload;

import dev.dbbulkhead.tools.overload.Barriers.Result;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.sql.SQLException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * One run of one scenario through one configuration: starts the operations, waits for all of them, and keeps
 * the counts, the latency histograms, the peak of waiting tasks and the peak heap.
 *
 * <p>Latency counts from each operation's intended start (the burst's release, or its slot in the open loop's
 * schedule), so that a slow start is not hidden; "in call" counts from entering the barrier to leaving it.
 */
final class OverloadRun {
    private static final long HIGHEST = TimeUnit.MINUTES.toNanos(10);

    final Tally<Result> counts = new Tally<>(Result.class);
    final Histogram succeeded = new ConcurrentHistogram(HIGHEST, 3);
    final Histogram failed = new ConcurrentHistogram(HIGHEST, 3);
    /** Time inside the call of operations rejected because admission was full (no waiting by design). */
    final Histogram fullInCall = new ConcurrentHistogram(HIGHEST, 3);

    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicInteger peakWaiting = new AtomicInteger();
    private final AtomicLong peakHeap = new AtomicLong();
    private final AtomicLong lastEnd = new AtomicLong();
    long start;
    long wallNanos;

    OverloadRun() {}

    long count(Result r) {
        return counts.count(r);
    }

    long total() {
        return counts.total();
    }

    double goodput() {
        return wallNanos == 0 ? 0 : count(Result.SUCCEEDED) / (wallNanos / 1e9);
    }

    int peakWaiting() {
        return peakWaiting.get();
    }

    long peakHeapBytes() {
        return peakHeap.get();
    }

    /** All {@code operations} released at once from a latch. */
    @SuppressWarnings("try") // the heap sampler runs for as long as the block does
    static OverloadRun burst(Barriers.Gate gate, String sql, int operations) throws InterruptedException {
        var run = new OverloadRun();
        var release = new CountDownLatch(1);
        var done = new CountDownLatch(operations);
        try (var heap = run.sampleHeap();
                ExecutorService tasks = Executors.newVirtualThreadPerTaskExecutor()) {
            var ready = new CountDownLatch(operations);
            long[] releasedAt = new long[1];
            for (int i = 0; i < operations; i++) {
                tasks.execute(() -> {
                    ready.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    run.operation(gate, sql, releasedAt[0]);
                    done.countDown();
                });
            }
            ready.await();
            releasedAt[0] = System.nanoTime();
            run.start = releasedAt[0];
            release.countDown();
            done.await();
        }
        run.wallNanos = run.lastEnd.get() - run.start;
        return run;
    }

    /** An open loop: {@code rate} operations per second for {@code seconds}, whatever the completions do. */
    @SuppressWarnings("try") // the heap sampler runs for as long as the block does
    static OverloadRun openLoop(Barriers.Gate gate, String sql, double rate, double seconds)
            throws InterruptedException {
        var run = new OverloadRun();
        long interval = (long) (1e9 / rate);
        int operations = (int) Math.max(1, Math.round(rate * seconds));
        var done = new CountDownLatch(operations);
        try (var heap = run.sampleHeap();
                ExecutorService tasks = Executors.newVirtualThreadPerTaskExecutor()) {
            run.start = System.nanoTime();
            for (int i = 0; i < operations; i++) {
                long intended = run.start + i * interval;
                long now = System.nanoTime();
                if (intended > now) {
                    LockSupport.parkNanos(intended - now);
                }
                tasks.execute(() -> {
                    run.operation(gate, sql, intended);
                    done.countDown();
                });
            }
            done.await();
        }
        run.wallNanos = run.lastEnd.get() - run.start;
        return run;
    }

    private void operation(Barriers.Gate gate, String sql, long intended) {
        peakWaiting.accumulateAndGet(waiting.incrementAndGet(), Math::max);
        boolean[] executing = {false};
        long callStart = System.nanoTime();
        Throwable failure = null;
        try {
            gate.execute(connection -> {
                executing[0] = true;
                waiting.decrementAndGet();
                try (var statement = connection.createStatement()) {
                    statement.execute(sql);
                }
            });
        } catch (SQLException | InterruptedException | RuntimeException e) {
            failure = e;
        } finally {
            if (!executing[0]) {
                waiting.decrementAndGet();
            }
        }
        long end = System.nanoTime();
        lastEnd.accumulateAndGet(end, Math::max);
        Result result = Barriers.classify(failure);
        counts.add(result);
        long latency = Math.max(0, end - intended);
        switch (result) {
            case SUCCEEDED -> succeeded.recordValue(Math.min(latency, HIGHEST));
            case REJECTED_FULL, REJECTED_PREDICTED -> {
                failed.recordValue(Math.min(latency, HIGHEST));
                fullInCall.recordValue(Math.min(end - callStart, HIGHEST));
            }
            default -> failed.recordValue(Math.min(latency, HIGHEST));
        }
    }

    /** A background sampler, stopped by {@link #close()}. */
    interface Sampler extends AutoCloseable {
        @Override
        void close();
    }

    /** Samples the used heap every 10 ms until closed. */
    private Sampler sampleHeap() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        var stop = new CountDownLatch(1);
        Thread sampler = Thread.ofPlatform().daemon().name("heap-sampler").start(() -> {
            do {
                peakHeap.accumulateAndGet(memory.getHeapMemoryUsage().getUsed(), Math::max);
            } while (!await(stop, 10));
        });
        return () -> {
            stop.countDown();
            try {
                sampler.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    private static boolean await(CountDownLatch latch, long millis) {
        try {
            return latch.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }
}
