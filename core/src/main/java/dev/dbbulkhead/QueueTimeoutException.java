package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;
import java.time.Duration;

/**
 * The operation was admitted but no execution permit freed up within its queue wait. It released its
 * admission slot and never took a connection.
 */
public final class QueueTimeoutException extends BulkheadRejectedException {
    QueueTimeoutException(Snapshot state, boolean stackTrace) {
        super(state, stackTrace);
    }

    @Override
    String describe() {
        return "no execution permit within the queue wait of "
                + millis(allowedWait().toNanos());
    }

    /** How long the operation waited for an execution permit: its queue wait. */
    public Duration queueWait() {
        return allowedWait();
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.QUEUE_TIMEOUT;
    }
}
