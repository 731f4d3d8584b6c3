package dev.dbbulkhead;

import dev.dbbulkhead.internal.Snapshot;
import java.util.Objects;

/**
 * Refused at once: the workload was contended (no execution permit free, now or for a caller in the last 100 ms), and
 * the caller's kind of operation already had as many operations inside as it may have then
 * ({@link WorkloadConfig.Builder#kinds}). Its operations hold their connections more than twice as long as the
 * workload's median operation, so that it is allowed its share of the arrivals, times how much shorter the median
 * operation is, and never less than one. It holds nothing; a kind under its cap is not refused.
 */
public final class KindCappedException extends BulkheadRejectedException {
    private final int cap;

    KindCappedException(Snapshot state, int cap, boolean stackTrace) {
        super(state, stackTrace);
        this.cap = cap;
    }

    @Override
    String describe() {
        return "kind '" + kind() + "' is at its cap of " + cap + " operation" + (cap == 1 ? "" : "s")
                + " inside while the workload is contended: its operations hold their connections more than twice as "
                + "long as the workload's median operation; refused at once. To give such an operation a budget of "
                + "its own, name it (TransactionOptions.kind(...), @DbWorkload(kind = ...)) or run it in a workload "
                + "of its own";
    }

    /** The kind of operation refused. */
    @Override
    public String kind() {
        return Objects.requireNonNull(super.kind(), "a capped caller has a kind");
    }

    /** How many of its operations may be inside while the workload is contended. */
    public int cap() {
        return cap;
    }

    @Override
    public RejectionReason reason() {
        return RejectionReason.KIND_CAPPED;
    }
}
