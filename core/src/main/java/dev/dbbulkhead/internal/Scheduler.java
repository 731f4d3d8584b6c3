package dev.dbbulkhead.internal;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
            EXECUTOR = new ScheduledThreadPoolExecutor(1, task -> Daemons.thread("db-bulkhead-scheduler", task));
            EXECUTOR.setRemoveOnCancelPolicy(true);
        }
    }

    static ScheduledFuture<?> after(long nanos, Runnable task) {
        return Holder.EXECUTOR.schedule(task, nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * Runs {@code task} every {@code nanos} until it is cancelled. A run that throws does not end it (the executor
     * would drop a periodic task for good, and with it, say, every priority cap): the failure is logged once per task
     * and kind of failure, and the next run goes ahead.
     */
    static ScheduledFuture<?> every(long nanos, Runnable task) {
        return Holder.EXECUTOR.scheduleWithFixedDelay(new Surviving(task), nanos, nanos, TimeUnit.NANOSECONDS);
    }

    /** A periodic task that outlives its failures, each kind logged once. */
    private static final class Surviving implements Runnable {
        /** The barrier's logger ({@code DbBulkhead}'s), named here so that this low helper imports nothing above it. */
        private static final Logger LOG = System.getLogger("dev.dbbulkhead.DbBulkhead");

        private final Runnable task;
        private final Set<Class<?>> logged = ConcurrentHashMap.newKeySet();

        Surviving(Runnable task) {
            this.task = task;
        }

        @Override
        public void run() {
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                if (logged.add(e.getClass())) {
                    LOG.log(
                            Level.ERROR,
                            "db-bulkhead: a periodic task (" + task + ") failed; it goes on at its next "
                                    + "run, and this kind of failure ("
                                    + e.getClass().getName() + ") is logged once",
                            e);
                }
            }
        }
    }
}
