package dev.dbbulkhead.internal;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One daemon thread for every barrier's timed work that must not wait for a caller: leak warnings, and the adaptive
 * limit's windows. Started on first use; its tasks are short and never block.
 */
final class Scheduler {
    private Scheduler() {}

    private static final class Holder {
        static final ScheduledThreadPoolExecutor EXECUTOR;

        static {
            EXECUTOR = new ScheduledThreadPoolExecutor(1, task -> {
                Thread t = new Thread(task, "db-bulkhead-scheduler");
                t.setDaemon(true);
                return t;
            });
            EXECUTOR.setRemoveOnCancelPolicy(true);
        }
    }

    static ScheduledFuture<?> after(long nanos, Runnable task) {
        return Holder.EXECUTOR.schedule(task, nanos, TimeUnit.NANOSECONDS);
    }

    static ScheduledFuture<?> every(long nanos, Runnable task) {
        return Holder.EXECUTOR.scheduleWithFixedDelay(task, nanos, nanos, TimeUnit.NANOSECONDS);
    }
}
