package dev.dbbulkhead.internal;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.RejectionReason;
import dev.dbbulkhead.Workload;
import java.lang.System.Logger;
import java.util.List;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * What one barrier reports and how: its listeners (contained by {@link SafeListener}), the flight-recorder events,
 * the nano clock, and whether rejections capture stack traces. Admission and the transaction runner share one.
 *
 * <p>An operation is <em>timed</em> when a listener is registered or a recording wants the events; an untimed
 * one reads the clock only for a deadline. Thread-safe.
 */
final class Telemetry {
    private final BulkheadListener listener;
    private final boolean listening;
    private final LongSupplier clock;
    private final Logger log;

    public Telemetry(List<BulkheadListener> listeners, LongSupplier clock, Logger log) {
        this.listener = SafeListener.of(listeners, log);
        this.listening = listener != BulkheadListener.NOOP;
        this.clock = clock;
        this.log = log;
        // One-time costs (loading and registering the JFR event classes: ~150 ms in a fresh JVM) are paid here,
        // when the barrier is built, never inside a caller's queue wait or deadline.
        JfrEvents.enabled();
    }

    /** Whether this operation is timed; decided once per operation. */
    public boolean timed() {
        return listening || JfrEvents.enabled();
    }

    public long now() {
        return clock.getAsLong();
    }

    public LongSupplier clock() {
        return clock;
    }

    Logger log() {
        return log;
    }

    public void admitted(Workload w) {
        if (listening) {
            listener.onAdmitted(w);
        }
    }

    public void rejected(Workload w, RejectionReason reason, long waitedNanos) {
        rejected(w, reason, waitedNanos, null);
    }

    /** A rejection of an operation of {@code kind} (null: none learned). */
    public void rejected(Workload w, RejectionReason reason, long waitedNanos, @Nullable String kind) {
        if (listening) {
            listener.onRejected(w, reason, waitedNanos);
        }
        JfrEvents.rejected(
                w.bulkheadName(), w.name(), reason.name(), waitedNanos, w.concurrent(), w.extraSlots(), kind);
    }

    public void permitAcquired(Workload w, long waitNanos) {
        if (listening) {
            listener.onPermitAcquired(w, waitNanos);
        }
    }

    public void connectionAcquired(Workload w, long poolWaitNanos) {
        if (listening) {
            listener.onConnectionAcquired(w, poolWaitNanos);
        }
    }

    public void limitChanged(Workload w, int from, int to, String cause, long latencyNanos) {
        if (listening) {
            listener.onLimitChanged(w, from, to);
        }
        JfrEvents.limitChanged(w.bulkheadName(), w.name(), from, to, cause, latencyNanos);
    }

    /**
     * A lease never released was reclaimed, after holding for {@code heldNanos}: its thread terminated
     * ({@code threadEnded}), or, a pooled thread, called the barrier again past the leak detection threshold.
     */
    void reclaimed(Workload w, long heldNanos, boolean threadEnded) {
        log.log(
                Logger.Level.WARNING,
                "db-bulkhead ''{0}'', workload ''{1}'': a lease was never released and {2}; its "
                        + "permits were reclaimed (held for {3}). Close every lease with try-with-resources",
                w.bulkheadName(),
                w.name(),
                threadEnded
                        ? "its thread has terminated"
                        : "its thread, a pooled one, called the barrier again after the leak detection threshold",
                Snapshot.millis(heldNanos));
        if (listening) {
            listener.onLeaseReclaimed(w, heldNanos);
        }
        JfrEvents.reclaimed(w.bulkheadName(), w.name(), heldNanos);
    }

    /**
     * A connection whose session work may have changed ({@code command}, a risk its text could not show) was discarded
     * instead of going back to the pool, because its session {@code why}; logged when {@code log} (once per call site).
     */
    void sessionDiscarded(Workload w, Class<?> site, String command, String why, boolean log) {
        if (log) {
            this.log.log(
                    Logger.Level.WARNING,
                    "db-bulkhead ''{0}'', workload ''{1}'': work {2} sent {3}, which may "
                            + "change the session beyond its transaction, and the session {4}: its connection was "
                            + "discarded instead of going back to the pool. Keep session changes transaction-scoped "
                            + "(SET LOCAL, set_config(..., true), pg_advisory_xact_lock); logged once per call site, "
                            + "each discard is counted (onSessionDiscarded)",
                    w.bulkheadName(),
                    w.name(),
                    site.getName(),
                    command,
                    why);
        }
        if (listening) {
            listener.onSessionDiscarded(w);
        }
    }

    void poolTimeout(Workload w) {
        if (listening) {
            listener.onPoolTimeout(w);
        }
    }

    void predictionAudited(Workload w, boolean servedInTime, long waitedNanos) {
        if (listening) {
            listener.onPredictionAudited(w, servedInTime, waitedNanos);
        }
    }

    void overloadSignal(Workload w, Throwable signal) {
        if (listening) {
            listener.onOverloadSignal(w, signal);
        }
    }

    /** Leak detection: a caller's lease has been open for longer than the threshold. */
    void leakSuspected(Workload w, long heldNanos) {
        if (listening) {
            listener.onLeakSuspected(w, heldNanos);
        }
    }

    public void finished(
            Workload w, Outcome outcome, long permitWait, long poolWait, long hold, long work, @Nullable String kind) {
        if (listening) {
            listener.onFinished(w, outcome, permitWait, poolWait, hold, work);
        }
        JfrEvents.finished(w.bulkheadName(), w.name(), outcome.name(), permitWait, poolWait, hold, work, kind);
    }
}
