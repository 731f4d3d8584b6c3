package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ScheduledFuture;
import org.jspecify.annotations.Nullable;

/**
 * Bounds a wait that takes no timeout of ours (a pool's {@code getConnection()}) by interrupting the waiting thread
 * once the deadline and its grace have passed: HikariCP then gives up its wait for a connection, and a virtual
 * thread blocked on a socket (a pool's liveness check, a login, waiting in PgBouncer's queue) is woken with the
 * socket closed. The interrupt is the watchdog's own: {@link #disarm()} tells whether it fired and takes it back, so
 * the caller's interrupt status is what it was. Armed by the waiting thread, disarmed by it; fired on the
 * scheduler's thread.
 */
final class Watchdog implements Runnable {
    private static final int ARMED = 0;
    private static final int FIRING = 1;
    private static final int FIRED = 2;
    private static final int DISARMED = 3;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Watchdog.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Thread thread = Thread.currentThread();

    @SuppressWarnings("unused") // through STATE
    private volatile int state;

    private @Nullable ScheduledFuture<?> task;

    private Watchdog() {}

    /** Interrupts the current thread {@code nanos} from now (plus the grace), unless disarmed first. */
    static Watchdog arm(long nanos) {
        var w = new Watchdog();
        w.task = Scheduler.after(Nanos.saturatedAdd(Math.max(0, nanos), ServerTimeouts.GRACE_MILLIS * 1_000_000), w);
        return w;
    }

    @Override
    public void run() {
        if (STATE.compareAndSet(this, ARMED, FIRING)) {
            thread.interrupt();
            state = FIRED;
        }
    }

    /** Stops the watchdog; true when it had fired (its interrupt is then cleared). */
    boolean disarm() {
        if (STATE.compareAndSet(this, ARMED, DISARMED)) {
            var t = task;
            if (t != null) {
                t.cancel(false);
            }
            return false;
        }
        while (state == FIRING) {
            Thread.onSpinWait(); // the interrupt is being delivered: take it back only once it has arrived
        }
        Thread.interrupted();
        return true;
    }
}
