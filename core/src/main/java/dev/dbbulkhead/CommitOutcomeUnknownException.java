package dev.dbbulkhead;

import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * The write may have taken effect although the transaction did not end normally: {@code commit()} failed
 * (the server may have committed before the failure reached us), or the commit succeeded and the connection
 * cleanup after it failed.
 *
 * <p>Do not retry blindly. Decide with an idempotency key written in the same transaction, or by reading the
 * result back. {@link #commitAcknowledged()} tells the two cases apart: {@code true} means the server
 * acknowledged the commit and only the cleanup failed, so the write did take effect.
 */
public final class CommitOutcomeUnknownException extends SQLException {
    private final boolean commitAcknowledged;

    public CommitOutcomeUnknownException(String message, SQLException cause, boolean commitAcknowledged) {
        super(message, cause.getSQLState(), cause.getErrorCode(), cause);
        this.commitAcknowledged = commitAcknowledged;
    }

    /** With a cause that is not an {@link SQLException} (e.g. an {@link Error} while cleaning up). */
    public CommitOutcomeUnknownException(String message, @Nullable Throwable cause, boolean commitAcknowledged) {
        super(
                message,
                cause instanceof SQLException e ? e.getSQLState() : null,
                cause instanceof SQLException e ? e.getErrorCode() : 0,
                cause);
        this.commitAcknowledged = commitAcknowledged;
    }

    /** True when {@code commit()} returned normally and a later cleanup step failed. */
    public boolean commitAcknowledged() {
        return commitAcknowledged;
    }
}
