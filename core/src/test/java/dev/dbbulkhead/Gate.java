package dev.dbbulkhead;

import static org.awaitility.Awaitility.await;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * Starts transactions that hold their permits until released, and callers that wait for a permit, on platform
 * or virtual threads. Synchronises with latches and the semaphore's queue, never with sleeps.
 */
final class Gate implements AutoCloseable {
    enum Threads {
        PLATFORM(Thread.ofPlatform().factory()),
        VIRTUAL(Thread.ofVirtual().factory());

        final ThreadFactory factory;

        Threads(ThreadFactory factory) {
            this.factory = factory;
        }
    }

    private final ExecutorService executor;
    private final CountDownLatch release = new CountDownLatch(1);

    Gate(Threads threads) {
        this.executor = Executors.newThreadPerTaskExecutor(threads.factory);
    }

    Gate() {
        this(Threads.VIRTUAL);
    }

    /** Starts {@code n} transactions on {@code w} and returns once all of them are inside work. */
    Future<?>[] hold(Workload w, int n) throws InterruptedException {
        var entered = new CountDownLatch(n);
        var futures = new Future<?>[n];
        for (int i = 0; i < n; i++) {
            futures[i] = executor.submit(() -> w.transaction(Duration.ofSeconds(30), c -> {
                entered.countDown();
                awaitRelease();
                return null;
            }));
        }
        if (!entered.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("holders did not all enter work: " + w);
        }
        return futures;
    }

    /** Starts a caller that will wait for an execution permit; returns once it is queued on the semaphore. */
    <T> Future<T> queue(Workload w, Duration wait, SqlWork<T> work) {
        int before = w.waiting();
        Future<T> f = executor.submit(() -> w.transaction(wait, work));
        await().atMost(Duration.ofSeconds(10)).until(() -> w.waiting() > before || f.isDone());
        return f;
    }

    /** As {@link #queue(Workload, Duration, SqlWork)}, the caller bounded by a deadline {@code in} from its start. */
    <T> Future<T> queueWithDeadline(Workload w, Duration in, SqlWork<T> work) {
        int before = w.waiting();
        Future<T> f = executor.submit(() -> w.transaction(Deadline.in(in), work));
        await().atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(1))
                .until(() -> w.waiting() > before || f.isDone());
        return f;
    }

    <T> Future<T> submit(java.util.concurrent.Callable<T> task) {
        return executor.submit(task);
    }

    void awaitRelease() throws SQLException {
        try {
            if (!release.await(30, TimeUnit.SECONDS)) {
                throw new SQLException("test coordination timed out");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("interrupted while held", e);
        }
    }

    void release() {
        release.countDown();
    }

    @Override
    public void close() {
        release();
        executor.shutdownNow();
        try {
            executor.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
