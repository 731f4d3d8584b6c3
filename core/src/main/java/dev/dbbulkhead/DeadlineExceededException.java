package dev.dbbulkhead;

/**
 * The operation's {@link Deadline} passed before {@code work} ran: before admission, during the wait for an
 * execution permit, or while the pool was handing out a connection. Nothing was written; every permit and
 * the connection (if one was taken) were given back before this was thrown.
 */
public final class DeadlineExceededException extends BulkheadRejectedException {
    /** Where the deadline was found to have passed. */
    public enum Stage {
        /** Already past when {@code transaction()} was called: no permit was taken. */
        BEFORE_ADMISSION,
        /** Passed while waiting for an execution permit. */
        PERMIT_WAIT,
        /** Passed while the pool handed out the connection; the connection went back unused. */
        CONNECTION_ACQUISITION
    }

    private final Stage stage;
    private final long overdueNanos;

    DeadlineExceededException(String bulkhead, String workload, int concurrent, int extraSlots, Stage stage,
            long overdueNanos, boolean stackTrace) {
        super(bulkhead, workload, concurrent, extraSlots, stackTrace);
        this.stage = stage;
        this.overdueNanos = overdueNanos;
    }

    @Override
    String describe() {
        return "deadline exceeded " + describe(stage) + " (overdue by " + overdueNanos() / 1_000 + " µs, concurrent="
                + concurrent() + ", extraSlots=" + extraSlots() + ")";
    }

    private static String describe(Stage stage) {
        return switch (stage) {
            case BEFORE_ADMISSION -> "before admission";
            case PERMIT_WAIT -> "while waiting for an execution permit";
            case CONNECTION_ACQUISITION -> "while acquiring a connection from the pool";
        };
    }

    public Stage stage() {
        return stage;
    }

    /** How far past the deadline the operation was when it was rejected (0 when rejected at the deadline). */
    public long overdueNanos() {
        return Math.max(0, overdueNanos);
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.DEADLINE;
    }
}
