package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;
import org.jspecify.annotations.Nullable;

/**
 * The operation's {@link Deadline} passed: before admission, during the wait for an execution permit, while the
 * pool was handing out a connection, or in a statement that the deadline's {@code statement_timeout} cancelled
 * (then the driver's 57014 exception is the {@link #getCause() cause} and the transaction was rolled back). Nothing
 * was written; every permit and the connection (if one was taken) were given back before this was thrown.
 */
public final class DeadlineExceededException extends BulkheadRejectedException {
    /** Where the deadline was found to have passed. */
    public enum Stage {
        /** Already past when {@code transaction()} was called: no permit was taken. */
        BEFORE_ADMISSION,
        /** Passed while waiting for an execution permit. */
        PERMIT_WAIT,
        /** Passed while the pool handed out the connection; the connection went back unused. */
        CONNECTION_ACQUISITION,
        /**
         * A statement of {@code work} was cancelled by the {@code statement_timeout} that the deadline set, or
         * gave up on a lock at the {@code lock_timeout} it set (on PostgreSQL, with lock timeouts on), once the
         * deadline had passed; the transaction was rolled back. A timeout that the session or the work set itself,
         * firing before the deadline, stays the driver's own exception.
         */
        STATEMENT,
        /**
         * No answer came from the server within the deadline (and a short grace) while the server could not cancel
         * anything itself: typically the transaction waited in PgBouncer's queue for a server connection. The driver
         * closed the connection, so the transaction did not commit; the driver's exception is the
         * {@link #getCause() cause}.
         */
        NO_ANSWER
    }

    private final Stage stage;
    private final long overdueNanos;

    DeadlineExceededException(
            Snapshot state, Stage stage, long overdueNanos, @Nullable Throwable cause, boolean stackTrace) {
        super(state, stackTrace);
        this.stage = stage;
        this.overdueNanos = overdueNanos;
        if (cause != null) {
            initCause(cause);
        }
    }

    @Override
    String describe() {
        return "deadline exceeded " + describe(stage) + ", "
                + (overdueNanos() == Long.MAX_VALUE
                        ? "at the far past of the clock (a deadline such as Instant.MIN)"
                        : millis(overdueNanos()) + " overdue")
                + " "
                + "(" + millis(allowedWait().toNanos()) + " were left when admission began)";
    }

    private static String describe(Stage stage) {
        return switch (stage) {
            case BEFORE_ADMISSION -> "before admission";
            case PERMIT_WAIT -> "while waiting for an execution permit";
            case CONNECTION_ACQUISITION -> "while acquiring a connection from the pool";
            case STATEMENT -> "in a statement (cancelled by the deadline's statement_timeout; rolled back)";
            case NO_ANSWER ->
                "waiting for the server (no answer in time, e.g. queued in PgBouncer; the connection "
                        + "was closed and nothing was committed)";
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
