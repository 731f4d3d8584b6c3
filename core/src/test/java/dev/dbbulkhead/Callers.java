package dev.dbbulkhead;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code n} threads running {@code call} in a loop until closed; a rejection is expected and tried again (after 1 ms,
 * or at once); closing stops and joins them, and fails the test with anything else a call threw.
 */
final class Callers implements AutoCloseable {
    interface Call {
        void run() throws Exception;
    }

    private final AtomicBoolean stop = new AtomicBoolean();
    private final ExecutorService executor;
    private final List<Future<?>> futures = new ArrayList<>();

    Callers(ThreadFactory threads, int n, Call call) {
        this(threads, n, true, call);
    }

    /** Virtual threads that try again at once when refused: demand above the limit on purpose. */
    static Callers retryingAtOnce(int n, Call call) {
        return new Callers(Thread.ofVirtual().factory(), n, false, call);
    }

    private Callers(ThreadFactory threads, int n, boolean pause, Call call) {
        executor = Executors.newThreadPerTaskExecutor(threads);
        for (int i = 0; i < n; i++) {
            futures.add(executor.submit(() -> {
                while (!stop.get()) {
                    try {
                        call.run();
                    } catch (BulkheadRejectedException busy) {
                        if (pause) {
                            Thread.sleep(1); // refused on purpose: try again
                        }
                    }
                }
                return null;
            }));
        }
    }

    @Override
    public void close() throws Exception {
        stop.set(true);
        try {
            for (var f : futures) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            executor.close();
        }
    }
}
