package dev.dbbulkhead;

import dev.dbbulkhead.DbBulkhead.SqlWork;
import dev.dbbulkhead.internal.GuardedConnection;
import dev.dbbulkhead.internal.JfrEvents;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.LongSupplier;
import java.util.stream.BaseStream;
import javax.sql.DataSource;

/**
 * Runs one JDBC transaction for an operation that already holds both permits: connection, auto-commit off,
 * options, server-side timeouts, {@code work}, commit or rollback, restore, close. Never touches permits.
 *
 * <p>Thread-safe; one instance per barrier.
 */
final class TransactionRunner {
    private final DataSource source;
    private final BulkheadListener listener;
    private final LongSupplier clock;
    private final boolean listening;
    private final boolean statementTimeouts;
    private final boolean lockTimeouts;
    private final boolean stackTraces;
    /** Per thread: the workload whose work this thread is running, if any. The barrier is not reentrant. */
    private final ThreadLocal<Frame> frames = ThreadLocal.withInitial(Frame::new);
    /** Whether the database is PostgreSQL; learnt from the first connection that needs to know. */
    private volatile Boolean postgres;

    TransactionRunner(DataSource source, BulkheadListener listener, LongSupplier clock, boolean statementTimeouts,
            boolean lockTimeouts, boolean stackTraces) {
        this.source = source;
        this.listener = listener;
        this.clock = clock;
        this.listening = listener != BulkheadListener.NOOP;
        this.statementTimeouts = statementTimeouts;
        this.lockTimeouts = lockTimeouts;
        this.stackTraces = stackTraces;
    }

    LongSupplier clock() {
        return clock;
    }

    /** Whether rejections capture their stack trace. */
    boolean stackTraces() {
        return stackTraces;
    }

    BulkheadListener listener() {
        return listener;
    }

    /**
     * Whether this operation is timed: a listener is registered or a flight recording wants our events. Decided
     * once per operation; untimed operations read the clock only for a deadline.
     */
    boolean timed() {
        return listening || JfrEvents.enabled();
    }

    void rejected(Workload w, RejectionReason reason, long waitedNanos) {
        listener.onRejected(w, reason, waitedNanos);
        JfrEvents.rejected(w.bulkheadName(), w.name(), reason.name(), waitedNanos, w.concurrent(), w.extraSlots());
    }

    private void finished(Workload w, Frame frame, Outcome outcome, long poolWait, long hold, long work) {
        listener.onFinished(w, outcome, frame.permitWait, poolWait, hold, work);
        JfrEvents.finished(w.bulkheadName(), w.name(), outcome.name(), frame.permitWait, poolWait, hold, work);
    }

    /** What one thread is doing in this barrier, one operation at a time; used by that thread only. */
    static final class Frame {
        Workload active;
        boolean timed;
        long permitWait;
    }

    /**
     * This thread's frame, after checking that it is not inside work of the same barrier: a reentrant call fails
     * at once instead of deadlocking. One thread-local lookup per operation; the frame's field does the rest.
     */
    Frame enter(Workload target) {
        Frame frame = frames.get();
        Workload current = frame.active;
        if (current != null) {
            throw new IllegalStateException("db-bulkhead '" + target.bulkheadName() + "' re-entered from inside "
                    + "its own work on the same thread (workload '" + current.name() + "' -> '" + target.name()
                    + "'): the barrier is not reentrant, and waiting here for a permit or a connection that this "
                    + "thread already holds can deadlock. Do all the work in one transaction, or call the second "
                    + "one after the first returns.");
        }
        return frame;
    }

    <T> T run(Frame frame, Workload workload, Deadline deadline, TransactionOptions options, SqlWork<T> work)
            throws SQLException {
        frame.active = workload;
        try {
            boolean timed = frame.timed;
            long requested = timed ? clock.getAsLong() : 0;
            Connection raw;
            try {
                raw = source.getConnection();
            } catch (SQLException | RuntimeException | Error e) {
                if (timed) {
                    finished(workload, frame, Outcome.NO_CONNECTION, clock.getAsLong() - requested, 0, 0);
                }
                throw e;
            }
            long acquired = timed || deadline != null ? clock.getAsLong() : 0;
            // Nothing may run between getConnection() and the try block that closes the connection.
            return inTransaction(frame, workload, raw, acquired, acquired - requested, deadline, options, work);
        } finally {
            frame.active = null;
        }
    }

    private <T> T inTransaction(Frame frame, Workload workload, Connection raw, long acquired, long poolWait,
            Deadline deadline, TransactionOptions options, SqlWork<T> work) throws SQLException {
        boolean timed = frame.timed;
        Outcome outcome = Outcome.ROLLED_BACK;
        Throwable failure = null;
        long workNanos = 0;
        Restore restore = null;
        // Settings are restored only once the transaction has ended: setAutoCommit(true) on a connection whose
        // rollback failed would commit the very work that failed.
        boolean ended = false;
        try {
            if (timed) {
                listener.onConnectionAcquired(workload, poolWait);
            }
            if (deadline != null && deadline.remainingNanos(acquired) <= 0) {
                outcome = Outcome.NO_CONNECTION;
                rejected(workload, RejectionReason.DEADLINE, 0);
                throw workload.deadlineExceeded(DeadlineExceededException.Stage.CONNECTION_ACQUISITION,
                        -deadline.remainingNanos(acquired));
            }
            restore = Restore.prepare(raw, options);
            GuardedConnection guarded = new GuardedConnection(raw);
            T value;
            long workStart = timed ? clock.getAsLong() : 0;
            try {
                if (deadline != null) {
                    applyServerTimeouts(raw, deadline);
                }
                value = work.run(guarded);
                rejectEscaping(value);
            } catch (Throwable t) {
                ended = rollbackInto(raw, t);
                throw t;
            } finally {
                guarded.expire();
                if (timed) {
                    workNanos = clock.getAsLong() - workStart;
                }
            }
            try {
                raw.commit();
            } catch (SQLException commitFailure) {
                outcome = Outcome.OUTCOME_UNKNOWN;
                var unknown = new CommitOutcomeUnknownException("commit failed (SQLState " + commitFailure.getSQLState()
                        + "); the write may have taken effect: do not retry blindly, read it back or use an "
                        + "idempotency key", commitFailure, false);
                ended = rollbackInto(raw, unknown);
                throw unknown;
            }
            ended = true;
            outcome = Outcome.COMMITTED;
            return value;
        } catch (Throwable t) {
            failure = t;
            throw t;
        } finally {
            SQLException cleanup = restoreAndClose(raw, ended ? restore : null);
            try {
                if (cleanup != null) {
                    if (failure != null) {
                        failure.addSuppressed(cleanup);
                    } else {
                        outcome = Outcome.OUTCOME_UNKNOWN;
                        throw new CommitOutcomeUnknownException("the commit succeeded but the connection cleanup "
                                + "after it failed (SQLState " + cleanup.getSQLState() + "); the write took effect",
                                cleanup, true);
                    }
                }
            } finally {
                if (timed) {
                    finished(workload, frame, outcome, poolWait, clock.getAsLong() - acquired, workNanos);
                }
            }
        }
    }

    private void applyServerTimeouts(Connection raw, Deadline deadline) throws SQLException {
        if (!statementTimeouts || !isPostgres(raw)) {
            return;
        }
        long remaining = deadline.remainingNanos(clock.getAsLong());
        // Whole milliseconds, rounded up, at least 1: 0 would mean "no timeout" to PostgreSQL.
        long millis = Math.max(1, (Math.max(0, remaining) + 999_999) / 1_000_000);
        try (Statement statement = raw.createStatement()) {
            statement.execute(lockTimeouts
                    ? "SET LOCAL statement_timeout = " + millis + "; SET LOCAL lock_timeout = " + millis
                    : "SET LOCAL statement_timeout = " + millis);
        }
    }

    private boolean isPostgres(Connection raw) throws SQLException {
        Boolean known = postgres;
        if (known == null) {
            known = "PostgreSQL".equalsIgnoreCase(raw.getMetaData().getDatabaseProductName());
            postgres = known;
        }
        return known;
    }

    private static void rejectEscaping(Object value) {
        if (value instanceof Connection || value instanceof Statement || value instanceof ResultSet
                || value instanceof BaseStream<?, ?>) {
            throw new IllegalStateException("work returned a " + value.getClass().getName() + ", which would "
                    + "escape the barrier: its connection goes back to the pool when work returns. Return a fully "
                    + "materialised value (e.g. a List) instead; the transaction was rolled back.");
        }
    }

    /** Rolls back, attaching a rollback failure to {@code failure}; true when the rollback succeeded. */
    private static boolean rollbackInto(Connection raw, Throwable failure) {
        try {
            raw.rollback();
            return true;
        } catch (SQLException | RuntimeException rollbackFailure) {
            failure.addSuppressed(rollbackFailure);
            return false;
        }
    }

    private static SQLException restoreAndClose(Connection raw, Restore restore) {
        SQLException failure = null;
        if (restore != null) {
            failure = restore.apply(raw);
        }
        try {
            raw.close();
        } catch (SQLException closeFailure) {
            if (failure == null) {
                failure = closeFailure;
            } else {
                failure.addSuppressed(closeFailure);
            }
        } catch (RuntimeException closeFailure) {
            SQLException wrapped = new SQLException("closing the connection failed: " + closeFailure, closeFailure);
            if (failure == null) {
                failure = wrapped;
            } else {
                failure.addSuppressed(wrapped);
            }
        }
        return failure;
    }

    /** What the transaction changed on the connection and must put back before it returns to the pool. */
    private record Restore(boolean autoCommit, boolean readOnlyChanged, int previousIsolation) {
        private static final Restore AUTO_COMMIT_ONLY = new Restore(true, false, -1);
        private static final Restore NOTHING = new Restore(false, false, -1);

        static Restore prepare(Connection raw, TransactionOptions options) throws SQLException {
            boolean autoCommit = raw.getAutoCommit();
            if (autoCommit) {
                raw.setAutoCommit(false);
            }
            if (options == null || (!options.isReadOnly() && options.isolation() == null)) {
                return autoCommit ? AUTO_COMMIT_ONLY : NOTHING;
            }
            boolean readOnlyChanged = false;
            if (options.isReadOnly() && !raw.isReadOnly()) {
                raw.setReadOnly(true);
                readOnlyChanged = true;
            }
            int previousIsolation = -1;
            if (options.isolation() != null) {
                int current = raw.getTransactionIsolation();
                if (current != options.isolation().jdbcLevel()) {
                    raw.setTransactionIsolation(options.isolation().jdbcLevel());
                    previousIsolation = current;
                }
            }
            return new Restore(autoCommit, readOnlyChanged, previousIsolation);
        }

        SQLException apply(Connection raw) {
            SQLException failure = null;
            try {
                if (readOnlyChanged) {
                    raw.setReadOnly(false);
                }
                if (previousIsolation != -1) {
                    raw.setTransactionIsolation(previousIsolation);
                }
                if (autoCommit) {
                    raw.setAutoCommit(true);
                }
            } catch (SQLException | RuntimeException e) {
                failure = e instanceof SQLException sql ? sql
                        : new SQLException("restoring the connection's settings failed: " + e, e);
            }
            return failure;
        }
    }
}
