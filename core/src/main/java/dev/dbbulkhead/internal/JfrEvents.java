package dev.dbbulkhead.internal;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;
import org.jspecify.annotations.Nullable;

/**
 * Flight-recorder events of every barrier: {@code dev.dbbulkhead.Rejection} per refused operation and
 * {@code dev.dbbulkhead.Operation} per operation that held an execution permit, with its waits. Enabled by the
 * recording's settings like any JDK event (both are on in the {@code default} and {@code profile} settings);
 * with no recording they cost one check per operation and no clock read.
 */
final class JfrEvents {
    private JfrEvents() {}

    @Name("dev.dbbulkhead.Rejection")
    @Label("DB Bulkhead Rejection")
    @Category({"Database", "db-bulkhead"})
    @Description("An operation refused by the barrier before it took a connection")
    @StackTrace(false)
    static final class Rejection extends Event {
        @Label("Bulkhead")
        @Nullable
        String bulkhead;

        @Label("Workload")
        @Nullable
        String workload;

        @Label("Reason")
        @Description("ADMISSION_FULL, QUEUE_TIMEOUT, DEADLINE, WOULD_TIME_OUT, LOAD_SHED, KIND_CAPPED or INTERRUPTED")
        @Nullable
        String reason;

        @Label("Waited")
        @Timespan(Timespan.NANOSECONDS)
        long waited;

        @Label("Concurrent (B)")
        int concurrent;

        @Label("Extra Slots (Q)")
        int extraSlots;

        @Label("Kind")
        @Description("The kind of operation, for a workload that learns kinds")
        @Nullable
        String kind;
    }

    @Name("dev.dbbulkhead.Operation")
    @Label("DB Bulkhead Operation")
    @Category({"Database", "db-bulkhead"})
    @Description("An operation that held an execution permit, from the call to the release of its permits")
    @StackTrace(false)
    static final class Operation extends Event {
        @Label("Bulkhead")
        @Nullable
        String bulkhead;

        @Label("Workload")
        @Nullable
        String workload;

        @Label("Outcome")
        @Description("COMMITTED, ROLLED_BACK, OUTCOME_UNKNOWN, NO_CONNECTION or RELEASED (a lease closed)")
        @Nullable
        String outcome;

        @Label("Permit Wait")
        @Timespan(Timespan.NANOSECONDS)
        long permitWait;

        @Label("Pool Wait")
        @Timespan(Timespan.NANOSECONDS)
        long poolWait;

        @Label("Connection Hold")
        @Timespan(Timespan.NANOSECONDS)
        long hold;

        @Label("Work")
        @Timespan(Timespan.NANOSECONDS)
        long work;

        @Label("Kind")
        @Description("The kind of operation, for a workload that learns kinds")
        @Nullable
        String kind;
    }

    @Name("dev.dbbulkhead.LimitChange")
    @Label("DB Bulkhead Limit Change")
    @Category({"Database", "db-bulkhead"})
    @Description("An adaptive workload's limit on operations holding an execution permit changed")
    @StackTrace(false)
    static final class LimitChange extends Event {
        @Label("Bulkhead")
        @Nullable
        String bulkhead;

        @Label("Workload")
        @Nullable
        String workload;

        @Label("Previous Limit")
        int from;

        @Label("New Limit")
        int to;

        @Label("Cause")
        @Description("overload signals, latency ceiling, more in flight completed more in time, fewer in flight "
                + "completed as many in time, nothing completed while every permit was held")
        @Nullable
        String cause;

        @Label("Window Mean Call")
        @Description("The window's mean time from call to release")
        @Timespan(Timespan.NANOSECONDS)
        long latency;
    }

    @Name("dev.dbbulkhead.LeaseReclaimed")
    @Label("DB Bulkhead Lease Reclaimed")
    @Category({"Database", "db-bulkhead"})
    @Description("The permits of a lease whose thread terminated without releasing them were taken back")
    @StackTrace(false)
    static final class LeaseReclaimed extends Event {
        @Label("Bulkhead")
        @Nullable
        String bulkhead;

        @Label("Workload")
        @Nullable
        String workload;

        @Label("Held")
        @Description("From the grant to the reclaim; 0 for a caller that was still waiting")
        @Timespan(Timespan.NANOSECONDS)
        long held;
    }

    /**
     * One instance of each event kind, never committed, for the enabled check: {@code isEnabled()} reads the event
     * type's state, not the instance's, and creating an event per check would allocate on every operation.
     */
    private static final Operation OPERATION = new Operation();

    private static final Rejection REJECTION = new Rejection();

    static void reclaimed(String bulkhead, String workload, long heldNanos) {
        var e = new LeaseReclaimed();
        if (e.isEnabled()) {
            e.bulkhead = bulkhead;
            e.workload = workload;
            e.held = heldNanos;
            e.commit();
        }
    }

    public static void limitChanged(
            String bulkhead, String workload, int from, int to, String cause, long latencyNanos) {
        var e = new LimitChange();
        if (e.isEnabled()) {
            e.bulkhead = bulkhead;
            e.workload = workload;
            e.from = from;
            e.to = to;
            e.cause = cause;
            e.latency = latencyNanos;
            e.commit();
        }
    }

    /** Whether a recording wants the operation or rejection events: then the operation must be timed. */
    public static boolean enabled() {
        return OPERATION.isEnabled() || REJECTION.isEnabled();
    }

    public static void rejected(
            String bulkhead,
            String workload,
            String reason,
            long waitedNanos,
            int concurrent,
            int extraSlots,
            @Nullable String kind) {
        var e = new Rejection();
        if (e.isEnabled()) {
            e.kind = kind;
            e.bulkhead = bulkhead;
            e.workload = workload;
            e.reason = reason;
            e.waited = waitedNanos;
            e.concurrent = concurrent;
            e.extraSlots = extraSlots;
            e.commit();
        }
    }

    public static void finished(
            String bulkhead,
            String workload,
            String outcome,
            long permitWaitNanos,
            long poolWaitNanos,
            long holdNanos,
            long workNanos,
            @Nullable String kind) {
        var e = new Operation();
        if (e.isEnabled()) {
            e.kind = kind;
            e.bulkhead = bulkhead;
            e.workload = workload;
            e.outcome = outcome;
            e.permitWait = permitWaitNanos;
            e.poolWait = poolWaitNanos;
            e.hold = holdNanos;
            e.work = workNanos;
            e.commit();
        }
    }
}
