package dev.dbbulkhead.internal;

import dev.dbbulkhead.Workload;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * Leak detection for the leases that callers hold ({@code acquire()}), as HikariCP's {@code leakDetectionThreshold}
 * for connections: a lease still open after the threshold is logged once, as a warning naming the workload, with the
 * stack of the call that acquired it; closing it later logs that too. A suspected lease's hold is kept out of the
 * adaptive limit's measurements. Costs a stack capture and a scheduled task per lease, so it is off by default.
 * Thread-safe.
 */
final class Leaks {
    private final long thresholdNanos;
    private final Telemetry telemetry;
    private final Logger log;

    /** @param thresholdNanos the threshold; 0: off, nothing is watched */
    Leaks(long thresholdNanos, Telemetry telemetry) {
        this.thresholdNanos = thresholdNanos;
        this.telemetry = telemetry;
        this.log = telemetry.log();
    }

    /** Whether leases are watched. */
    boolean on() {
        return thresholdNanos > 0;
    }

    /**
     * Watches a lease of {@code workload} just acquired; the task holds the workload and the stack, never the lease.
     */
    Watch watch(Workload workload) {
        var watch = new Watch(workload, new Acquired(describe(workload), thresholdNanos));
        watch.task = Scheduler.after(thresholdNanos, watch);
        return watch;
    }

    /** "workload 'w' of db-bulkhead 'db'", for log messages. */
    private static String describe(Workload w) {
        return "workload '" + w.name() + "' of db-bulkhead '" + w.bulkheadName() + "'";
    }

    /** Where a suspected lease was acquired: only its stack trace is ever shown. */
    private static final class Acquired extends Exception {
        Acquired(String workload, long thresholdNanos) {
            super("the lease of " + workload + " held for more than " + Snapshot.millis(thresholdNanos)
                    + " was acquired here");
        }
    }

    /** One lease's watch. */
    final class Watch implements Runnable {
        private final Workload workload;
        private final Acquired acquired;
        private volatile @Nullable ScheduledFuture<?> task;
        private volatile boolean suspected;

        private Watch(Workload workload, Acquired acquired) {
            this.workload = workload;
            this.acquired = acquired;
        }

        @Override
        public void run() {
            suspected = true;
            log.log(
                    Level.WARNING,
                    "db-bulkhead: a lease of " + describe(workload) + " has been open "
                            + "for more than " + Snapshot.millis(thresholdNanos)
                            + " (leak detection threshold): close it "
                            + "with try-with-resources once its transaction has ended; its thread was "
                            + "still running when it was acquired here",
                    acquired);
            telemetry.leakSuspected(workload, thresholdNanos);
        }

        /** The lease was closed or reclaimed; true when it had been reported as a suspected leak. */
        boolean closed(long heldNanos) {
            ScheduledFuture<?> t = task;
            if (t != null) {
                t.cancel(false);
            }
            if (suspected) {
                log.log(
                        Level.INFO,
                        "db-bulkhead: the lease of " + describe(workload)
                                + " reported as a possible leak was closed after " + Snapshot.millis(heldNanos));
            }
            return suspected;
        }
    }
}
