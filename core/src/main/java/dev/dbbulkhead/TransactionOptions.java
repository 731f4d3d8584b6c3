package dev.dbbulkhead;

import dev.dbbulkhead.internal.Preconditions;
import java.sql.Connection;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Per-transaction settings beyond the article's queue wait: a {@link Deadline}, read-only, and an isolation
 * level. Read-only and isolation are set before {@code work} runs and restored before the connection goes back
 * to the pool.
 *
 * <p>Start from {@link #queueWait(Duration)} or {@link #deadline(Deadline)}; with both, the permit wait is the
 * shorter of the queue wait and the deadline's remaining time. Immutable and thread-safe.
 */
public final class TransactionOptions {
    /** JDBC isolation levels, named. */
    public enum Isolation {
        READ_UNCOMMITTED(Connection.TRANSACTION_READ_UNCOMMITTED),
        READ_COMMITTED(Connection.TRANSACTION_READ_COMMITTED),
        REPEATABLE_READ(Connection.TRANSACTION_REPEATABLE_READ),
        SERIALIZABLE(Connection.TRANSACTION_SERIALIZABLE);

        private final int jdbcLevel;

        Isolation(int jdbcLevel) {
            this.jdbcLevel = jdbcLevel;
        }

        /** The {@code Connection.TRANSACTION_*} constant. */
        public int jdbcLevel() {
            return jdbcLevel;
        }
    }

    private final @Nullable Duration queueWait;
    private final @Nullable Deadline deadline;
    private final boolean readOnly;
    private final @Nullable Isolation isolation;
    private final @Nullable String kind;

    private TransactionOptions(
            @Nullable Duration queueWait,
            @Nullable Deadline deadline,
            boolean readOnly,
            @Nullable Isolation isolation,
            @Nullable String kind) {
        this.queueWait = queueWait;
        this.deadline = deadline;
        this.readOnly = readOnly;
        this.isolation = isolation;
        this.kind = kind;
    }

    /** Wait at most {@code queueWait} for an execution permit (the article's semantics). */
    public static TransactionOptions queueWait(Duration queueWait) {
        return new TransactionOptions(Preconditions.notNegative(queueWait, "queueWait"), null, false, null, null);
    }

    /** Bound the whole operation by {@code deadline}; the permit wait may use all of its remaining time. */
    public static TransactionOptions deadline(Deadline deadline) {
        return new TransactionOptions(null, Preconditions.notNull(deadline, "deadline"), false, null, null);
    }

    public TransactionOptions withQueueWait(Duration queueWait) {
        return new TransactionOptions(
                Preconditions.notNegative(queueWait, "queueWait"), deadline, readOnly, isolation, kind);
    }

    public TransactionOptions withDeadline(Deadline deadline) {
        return new TransactionOptions(
                queueWait, Preconditions.notNull(deadline, "deadline"), readOnly, isolation, kind);
    }

    /** Run the transaction read-only ({@code Connection.setReadOnly(true)}). */
    public TransactionOptions readOnly() {
        return new TransactionOptions(queueWait, deadline, true, isolation, kind);
    }

    public TransactionOptions isolation(Isolation isolation) {
        return new TransactionOptions(
                queueWait, deadline, readOnly, Preconditions.notNull(isolation, "isolation"), kind);
    }

    /**
     * The kind of operation this transaction is, for a workload that learns its kinds
     * ({@link WorkloadConfig.Builder#kinds}): one name for the operations of several call sites, or a readable name
     * for one. Without it, the kind is the call site: the class of the {@code SqlWork}.
     */
    public TransactionOptions kind(String kind) {
        return new TransactionOptions(queueWait, deadline, readOnly, isolation, Preconditions.kindName(kind, "kind"));
    }

    /** The permit wait, or {@code null} when only the deadline bounds it. */
    public @Nullable Duration queueWait() {
        return queueWait;
    }

    /** The deadline, or {@code null}. */
    public @Nullable Deadline deadline() {
        return deadline;
    }

    public boolean isReadOnly() {
        return readOnly;
    }

    /** The isolation level to set, or {@code null} to keep the connection's. */
    public @Nullable Isolation isolation() {
        return isolation;
    }

    /** The kind the caller named, or {@code null}: its call site. */
    public @Nullable String kind() {
        return kind;
    }

    @Override
    public String toString() {
        return "TransactionOptions[queueWait=" + queueWait + ", deadline=" + deadline + ", readOnly=" + readOnly
                + ", isolation=" + isolation + (kind == null ? "" : ", kind=" + kind) + "]";
    }
}
