package dev.dbbulkhead.internal;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.ref.WeakReference;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A barrier's one periodic task: every {@value #TICK_MILLIS} ms, on the shared scheduler thread, in this order:
 * <ol>
 *   <li>each workload's {@link Controls#tick}: what the tick measures, and, at the end of its window, the level its
 *       adaptive limit decides;
 *   <li>the {@link Arbiter}'s share-out between priorities, when the barrier has one: every workload's cap;
 *   <li>each workload's {@link Controls#apply}: the limit in force, the lower of its level and its cap.
 * </ol>
 * One order, one thread: the limit a workload ends a tick with follows from that tick's decisions, never from which
 * of two tasks ran last. A step that throws is logged once per kind of failure and step, and every other step of the
 * tick, and the next ticks, go on. The scheduler holds the clock weakly: once no workload of the barrier is reachable,
 * the task cancels itself. How often each part measures and decides: the time scales in {@code docs/design.md}.
 */
final class BarrierClock implements Runnable {
    static final long TICK_MILLIS = 10;

    private final String bulkhead;
    private final List<Controls> controls;
    private final @Nullable Arbiter arbiter;
    private final LongSupplier clock;
    private final Logger log;
    private final Set<String> logged = ConcurrentHashMap.newKeySet();

    BarrierClock(String bulkhead, List<Controls> controls, @Nullable Arbiter arbiter, LongSupplier clock, Logger log) {
        this.bulkhead = bulkhead;
        this.controls = List.copyOf(controls);
        this.arbiter = arbiter;
        this.clock = clock;
        this.log = log;
    }

    /** Sets every limit once, then ticks on the scheduler until no workload of the barrier is reachable. */
    static void start(BarrierClock clock) {
        for (Controls c : clock.controls) {
            c.apply();
            c.keep(clock);
        }
        var task = new Task(clock);
        task.future = Scheduler.every(TICK_MILLIS * 1_000_000, task);
    }

    /** One tick, in the documented order. */
    @Override
    public void run() {
        long now = clock.getAsLong();
        for (Controls c : controls) {
            try {
                c.tick(now);
            } catch (RuntimeException | Error e) {
                failed("tick of " + c, e);
            }
        }
        if (arbiter != null) {
            try {
                arbiter.tick(now);
            } catch (RuntimeException | Error e) {
                failed("share-out between priorities", e);
            }
        }
        for (Controls c : controls) {
            try {
                c.apply();
            } catch (RuntimeException | Error e) {
                failed("limit of " + c, e);
            }
        }
    }

    private void failed(String step, Throwable e) {
        if (logged.add(step + '/' + e.getClass().getName())) {
            log.log(
                    Level.ERROR,
                    "db-bulkhead '" + bulkhead + "': the " + step + " failed; the other steps went on, "
                            + "this one runs again at the next tick, and this kind of failure ("
                            + e.getClass().getName()
                            + ") is logged once",
                    e);
        }
    }

    /** The scheduled task: holds the clock weakly. */
    private static final class Task implements Runnable {
        private final WeakReference<BarrierClock> clock;
        private volatile @Nullable ScheduledFuture<?> future;

        Task(BarrierClock clock) {
            this.clock = new WeakReference<>(clock);
        }

        @Override
        public void run() {
            BarrierClock c = clock.get();
            if (c == null) {
                var f = future;
                if (f != null) {
                    f.cancel(false);
                }
                return;
            }
            c.run();
        }

        @Override
        public String toString() {
            return "the barrier's clock";
        }
    }

    @Override
    public String toString() {
        return "the clock of db-bulkhead '" + bulkhead + "'";
    }
}
