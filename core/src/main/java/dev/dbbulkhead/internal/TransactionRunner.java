package dev.dbbulkhead.internal;

import dev.dbbulkhead.CommitOutcomeUnknownException;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.DeadlineExceededException.Stage;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.RejectionReason;
import dev.dbbulkhead.SqlWork;
import dev.dbbulkhead.TransactionOptions;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Set;
import java.util.stream.BaseStream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Runs one JDBC transaction for an operation that holds a {@link PermitLease}: open, begin, run work, commit, clean
 * up. Never touches permits and never builds a rejection: a deadline that passes once the permits are held goes up
 * as {@link DeadlinePassed}, and admission releases the lease after this returns. It tells the lease only what the
 * transaction failed with ({@link PermitLease#transactionFailed}), as any caller running its own transaction does.
 *
 * <p>What the caller is told is what happened in the database: the value only after commit and close; the work's
 * own exception after a rollback; an exception (SQLState 25P02) when work went on after a statement failure that
 * aborted the transaction on PostgreSQL, which is then rolled back ({@link AbortedTransactions}); the driver's
 * exception, unchanged, when the server refused the commit (it rolled back); {@link CommitOutcomeUnknownException} only
 * when the commit's answer never came or the cleanup after an acknowledged commit failed.
 *
 * <p>Thread-safe; one instance per barrier.
 */
final class TransactionRunner {
    private final DataSource source;
    private final Telemetry telemetry;
    private final boolean statementTimeouts;
    private final boolean lockTimeouts;
    /** Past this many user variables assigned in one transaction, its connection is discarded rather than reset. */
    static final int MAX_VARIABLES_RESET = 64;

    private final SessionState sessions;
    /** The database's dialect, learnt once from the first connection; said once when it does not keep every promise. */
    private volatile @Nullable Dialect dialect;

    public TransactionRunner(DataSource source, Telemetry telemetry, boolean statementTimeouts, boolean lockTimeouts) {
        this.source = source;
        this.telemetry = telemetry;
        this.statementTimeouts = statementTimeouts;
        this.lockTimeouts = lockTimeouts;
        this.sessions = new SessionState(source);
    }

    public <T extends @Nullable Object> T run(PermitLease lease, @Nullable TransactionOptions options, SqlWork<T> work)
            throws SQLException {
        // Allocated before the connection is taken: nothing that can fail runs between getConnection() and the
        // try block that closes it.
        return new Transaction<T>(lease).execute(options, work);
    }

    /** Reports the transaction's end, before its lease is released. */
    private void finished(PermitLease lease, Outcome outcome, long poolWait, long hold, long work) {
        if (lease.timed()) {
            telemetry.finished(
                    lease.workload(), outcome, lease.permitWaitNanos(), poolWait, hold, work, lease.kindName());
        }
    }

    private boolean isPostgres(Connection raw) throws SQLException {
        return dialect(raw).postgres();
    }

    private Dialect dialect(Connection raw) throws SQLException {
        Dialect known = dialect;
        if (known == null) {
            known = Dialect.of(raw);
            synchronized (this) {
                if (dialect == null) {
                    dialect = known;
                    String unkept = known.unkept();
                    if (unkept != null) {
                        telemetry.log().log(
                                System.Logger.Level.WARNING, "db-bulkhead on {0}: {1}", describe(known), unkept);
                    }
                }
            }
        }
        return known;
    }

    /**
     * What the barrier cannot keep on its database, logged once (the same line as at its first transaction), or null
     * where it keeps everything; reads the database from one connection if no transaction has yet.
     */
    @Nullable
    String unkept() throws SQLException {
        Dialect known = dialect;
        if (known == null) {
            try (Connection c = source.getConnection()) {
                known = dialect(c);
            }
        }
        return known.unkept();
    }

    private static String describe(Dialect d) {
        return switch (d) {
            case Dialect.MySql m -> m.product() + " (MySQL rules)";
            case Dialect.Other o -> o.product() + ", a database whose rules db-bulkhead does not know";
            case Dialect.Postgres p -> "PostgreSQL";
        };
    }

    /**
     * One transaction on one connection, as a list of short steps (open, begin, run work, commit, clean up), each
     * with its failure handling out of line; lives for one call, on the caller's thread.
     */
    private final class Transaction<T extends @Nullable Object> {
        private final PermitLease lease;
        private final @Nullable Deadline deadline;
        private final boolean timed;
        /**
         * Set by {@link #open()}, the first step, which throws rather than leave it unset: no later step runs without
         * it.
         */
        @SuppressWarnings("NullAway.Init")
        private Connection raw;

        private long requestedAt;
        private long acquiredAt;
        private long poolWait;
        private @Nullable Restore restore;
        private Outcome outcome = Outcome.ROLLED_BACK;
        private long workNanos;
        /** The transaction is over (committed or rolled back): only then may settings be restored. */
        private boolean ended;
        /** The statement timeout in force is the deadline's. */
        private boolean deadlineTimeout;
        /** On MySQL: the SET that puts the session's own time limits back after the transaction; else null. */
        private @Nullable String sessionTimeoutsBack;
        /** The network timeout before the deadline's bound it, while that one is in force; else -1. */
        private int networkTimeoutBefore = -1;
        /** The caller's interrupt status, cleared after work and set again before returning. */
        private boolean interrupted;
        /** The work's class: its call site, for what it has shown of the session ({@link SessionState}). */
        @SuppressWarnings("NullAway.Init") // set by execute(), before any step
        private Class<?> site;
        /** The connection work got, once it did: it knows whether work may have changed the session. */
        private @Nullable GuardedConnection guarded;
        /** The session as the pool lent it, read when the call site has risked it before; else null. */
        private @Nullable String sessionBefore;

        Transaction(PermitLease lease) {
            this.lease = lease;
            this.deadline = lease.deadlineOrNull();
            this.timed = lease.timed();
        }

        T execute(@Nullable TransactionOptions options, SqlWork<T> work) throws SQLException {
            site = work.getClass();
            open();
            Throwable failure = null;
            try {
                if (timed || deadline != null) {
                    connected();
                }
                begin(options);
                T value = runWork(work);
                commit();
                return value;
            } catch (Throwable t) {
                failure = t;
                throw t;
            } finally {
                cleanUp(failure);
            }
        }

        /** Step 1: a connection from the pool, or NO_CONNECTION reported and the pool's exception rethrown. */
        private void open() throws SQLException {
            requestedAt = timed ? telemetry.now() : 0;
            if (deadline != null) {
                openWithin(deadline);
                return;
            }
            try {
                raw = source.getConnection();
            } catch (Throwable e) {
                noConnection(e);
                throw e;
            }
            checkNotNull();
        }

        /**
         * The pool's wait bounded by the deadline: a pool has no per-call timeout, so the wait is interrupted once
         * the deadline (and a grace) has passed; what it then throws is the deadline's rejection.
         */
        private void openWithin(Deadline deadline) throws SQLException {
            var watchdog = Watchdog.arm(deadline.remainingNanos(telemetry.now()));
            try {
                raw = source.getConnection();
            } catch (Throwable e) {
                if (!watchdog.disarm()) {
                    noConnection(e);
                    throw e;
                }
                var passed = new DeadlinePassed(
                        Stage.CONNECTION_ACQUISITION,
                        Nanos.overdue(deadline.remainingNanos(telemetry.now())),
                        e instanceof SQLException s ? s : null);
                if (!(e instanceof SQLException)) {
                    passed.addSuppressed(e);
                }
                telemetry.rejected(lease.workload(), RejectionReason.DEADLINE, 0);
                noConnection(passed);
                throw passed;
            }
            watchdog.disarm(); // fired as the connection came: connected() finds the deadline passed
            checkNotNull();
        }

        private void checkNotNull() throws SQLException {
            if (raw == null) {
                var none = new SQLException(
                        "db-bulkhead: the data source " + source + " returned null from getConnection()", "08001");
                noConnection(none);
                throw none;
            }
        }

        private void noConnection(Throwable e) {
            lease.transactionFailed(e);
            finished(lease, Outcome.NO_CONNECTION, timed ? telemetry.now() - requestedAt : 0, 0, 0);
        }

        /** Step 2: the connection is in hand; the deadline may have passed while the pool handed it out. */
        private void connected() throws DeadlinePassed {
            acquiredAt = telemetry.now();
            if (timed) {
                poolWait = acquiredAt - requestedAt;
                telemetry.connectionAcquired(lease.workload(), poolWait);
            }
            if (deadline != null && deadline.remainingNanos(acquiredAt) <= 0) {
                outcome = Outcome.NO_CONNECTION;
                telemetry.rejected(lease.workload(), RejectionReason.DEADLINE, 0);
                throw new DeadlinePassed(
                        Stage.CONNECTION_ACQUISITION, Nanos.overdue(deadline.remainingNanos(acquiredAt)), null);
            }
        }

        /**
         * Step 3: auto-commit off and the options; with a deadline on PostgreSQL, its bounds: the client waits for
         * the server no longer than the deadline (and a grace), even where the server cannot cancel anything yet (in
         * PgBouncer's queue for a server connection), and the statements are bounded on the server.
         */
        private void begin(@Nullable TransactionOptions options) throws SQLException {
            if (sessions.watched(site)) {
                readSessionBefore();
            }
            restore = options == null
                    ? Restore.autoCommitOff(raw)
                    : Restore.prepare(raw, options, TransactionRunner.this);
            if (deadline != null && statementTimeouts && (isPostgres(raw) || dialect(raw) instanceof Dialect.MySql)) {
                try {
                    boundByDeadline(deadline);
                } catch (Throwable t) {
                    DeadlinePassed passed = workFailed(t); // the first statement: where PgBouncer makes it wait
                    if (passed != null) {
                        throw passed;
                    }
                    throw t;
                }
            }
        }

        /** In auto-commit, before the transaction begins: nothing transaction-scoped is in it yet. */
        private void readSessionBefore() {
            try {
                if (raw.getAutoCommit() && isPostgres(raw)) {
                    String known = sessions.known(raw);
                    sessionBefore = known != null ? known : SessionState.fingerprint(raw);
                }
            } catch (SQLException | RuntimeException unread) {
                sessionBefore = null; // then a risky transaction's connection is discarded, as when first seen
            }
        }

        private void boundByDeadline(Deadline deadline) throws SQLException {
            long remaining = deadline.remainingNanos(telemetry.now());
            int before = raw.getNetworkTimeout();
            raw.setNetworkTimeout(Runnable::run, ServerTimeouts.networkMillis(remaining));
            networkTimeoutBefore = before;
            if (dialect(raw) instanceof Dialect.MySql mySql) {
                var set = ServerTimeouts.applyMySql(raw, remaining, lockTimeouts, mySql.mariaDb());
                sessionTimeoutsBack = set.restore();
                deadlineTimeout = set.ours();
            } else {
                deadlineTimeout = ServerTimeouts.apply(raw, remaining, lockTimeouts);
            }
        }

        /** Step 4: work on the guarded connection; any failure rolls back and is rethrown. */
        private T runWork(SqlWork<T> work) throws SQLException {
            var guarded = new GuardedConnection(raw, dialect(raw));
            this.guarded = guarded;
            if (lease.refinable()) {
                guarded.refineKind(lease);
            }
            long start = timed ? telemetry.now() : 0;
            try {
                T value = work.run(guarded);
                rejectEscaping(value);
                workEnded(guarded, start);
                return value;
            } catch (Throwable t) {
                workEnded(guarded, start);
                DeadlinePassed passed = workFailed(t);
                CommitOutcomeUnknownException partly = committedByProcedure(t);
                if (partly != null) {
                    outcome = Outcome.OUTCOME_UNKNOWN;
                    throw partly;
                }
                if (passed != null) {
                    throw passed;
                }
                throw t;
            }
        }

        /**
         * After work failed and the transaction was rolled back: whether a procedure work called had committed inside
         * it (or that cannot be read), in which case part of what work did may have taken effect.
         */
        private @Nullable CommitOutcomeUnknownException committedByProcedure(Throwable failure) {
            long[] before = guarded == null ? null : guarded.endsBeforeProcedure();
            if (before == null) {
                return null;
            }
            long[] after;
            try {
                after = dialect(raw).transactionEnds(raw);
            } catch (SQLException | RuntimeException unread) {
                failure.addSuppressed(unread);
                after = null;
            }
            if (after != null && after[0] == before[0]) {
                return null;
            }
            return new CommitOutcomeUnknownException(
                    "work failed after it called a procedure that committed inside "
                            + "it (CALL ... COMMIT), or whether it did could not be read: what ran before that COMMIT "
                            + "took effect, what ran after it was rolled back; read back what matters before retrying",
                    failure,
                    false);
        }

        /**
         * Before the commit: a procedure work called rolled the transaction back inside it, so committing the rest
         * would commit part of the work; rolled back, and told so (or as unknown where it had also committed).
         */
        private @Nullable SQLException rolledBackByProcedure() throws SQLException {
            long[] before = guarded == null ? null : guarded.endsBeforeProcedure();
            if (before == null) {
                return null;
            }
            long[] after = dialect(raw).transactionEnds(raw);
            if (after == null || after[1] == before[1]) {
                return null; // none, or only COMMITs inside: what work did is committed either way
            }
            if (after[0] > before[0]) {
                outcome = Outcome.OUTCOME_UNKNOWN;
                return new CommitOutcomeUnknownException(
                        "a procedure that work called both committed and rolled "
                                + "back inside it (CALL ... COMMIT, ROLLBACK): part of what work did may have taken "
                                + "effect; the rest was rolled back. Read back what matters before retrying",
                        (Throwable) null,
                        false);
            }
            return new SQLException(
                    "db-bulkhead: a procedure that work called rolled the transaction back inside it "
                            + "(CALL ... ROLLBACK), and work went on; what ran after it was rolled back too, so "
                            + "nothing was committed",
                    "40000");
        }

        private void workEnded(GuardedConnection guarded, long start) {
            guarded.expire();
            // On a virtual thread, an interrupt left set during work closes the socket at the next blocking I/O
            // and would turn a clean commit into "outcome unknown": cleared now, set again before returning.
            interrupted |= Thread.interrupted();
            if (timed) {
                workNanos = telemetry.now() - start;
            }
        }

        /**
         * Rolls back; returns what a statement cut short by the deadline becomes: {@link DeadlinePassed}, or null
         * (then {@code t} is rethrown as it is).
         */
        private @Nullable DeadlinePassed workFailed(Throwable t) {
            ended = rollbackInto(t);
            if (deadline == null || !(t instanceof SQLException e) || deadline.remainingNanos(telemetry.now()) > 0) {
                return null;
            }
            // Past the deadline, a cancelled statement or a lock not obtained is the deadline's timeout firing.
            Dialect d = dialect;
            if (d != null && ((deadlineTimeout && d.statementTimedOut(e)) || (lockTimeouts && d.lockTimedOut(e)))) {
                return new DeadlinePassed(Stage.STATEMENT, Nanos.overdue(deadline.remainingNanos(telemetry.now())), e);
            }
            if (networkTimeoutBefore != -1 && ServerTimeouts.timedOutOnTheSocket(e)) {
                return new DeadlinePassed(Stage.NO_ANSWER, Nanos.overdue(deadline.remainingNanos(telemetry.now())), e);
            }
            return null;
        }

        /**
         * Step 5: a transaction that a failed statement aborted is rolled back, not committed; a refused commit is a
         * rollback; only a commit whose answer never came is "outcome unknown".
         */
        private void commit() throws SQLException {
            if (networkTimeoutBefore != -1) {
                liftNetworkTimeout(); // a commit cut short would have an unknown outcome: it is not bounded
            }
            if (isPostgres(raw) && AbortedTransactions.aborted(raw)) {
                SQLException aborted = AbortedTransactions.rolledBack();
                ended = rollbackInto(aborted);
                throw aborted;
            }
            SQLException whole = guarded == null ? null : guarded.rolledBackWhole();
            SQLException rolledBack =
                    whole != null ? AbortedTransactions.rolledBackWhole(whole) : rolledBackByProcedure();
            if (rolledBack != null) {
                ended = rollbackInto(rolledBack);
                throw rolledBack;
            }
            try {
                raw.commit();
            } catch (SQLException commitFailure) {
                throw commitFailed(commitFailure);
            }
            ended = true;
            outcome = Outcome.COMMITTED;
        }

        private void liftNetworkTimeout() throws SQLException {
            int before = networkTimeoutBefore;
            networkTimeoutBefore = -1;
            raw.setNetworkTimeout(Runnable::run, before);
        }

        private SQLException commitFailed(SQLException commitFailure) {
            ended = rollbackInto(commitFailure);
            if (ended && refusedByServer(commitFailure)) {
                return commitFailure;
            }
            outcome = Outcome.OUTCOME_UNKNOWN;
            return new CommitOutcomeUnknownException(
                    "commit failed (SQLState " + commitFailure.getSQLState()
                            + ") and its answer may have been lost; the write may have taken effect: do not retry "
                            + "blindly, read it back or use an idempotency key",
                    commitFailure,
                    false);
        }

        /**
         * Whether the server answered the commit with an error, which means it rolled back: an integrity (23) or
         * transaction-rollback (40) class, or any error on a connection that is still valid. A connection-class (08)
         * error, or a connection that is no longer valid, means the answer may have been lost.
         */
        private boolean refusedByServer(SQLException commitFailure) {
            String state = commitFailure.getSQLState();
            if (state != null && state.startsWith("08")) {
                return false;
            }
            if (state != null && (state.startsWith("23") || state.startsWith("40"))) {
                return true;
            }
            try {
                return raw.isValid(1);
            } catch (SQLException | RuntimeException invalid) {
                commitFailure.addSuppressed(invalid);
                return false;
            }
        }

        /** Rolls back, attaching a rollback failure to {@code failure}; true when the rollback succeeded. */
        private boolean rollbackInto(Throwable failure) {
            try {
                raw.rollback();
                return true;
            } catch (SQLException | RuntimeException rollbackFailure) {
                failure.addSuppressed(rollbackFailure);
                return false;
            }
        }

        /**
         * Step 6: settings restored (only once the transaction ended: setAutoCommit(true) after a failed rollback
         * would commit the failed work), the connection closed whatever happened before, the end reported, and the
         * caller's interrupt status set again.
         */
        private void cleanUp(@Nullable Throwable failure) throws CommitOutcomeUnknownException {
            if (failure != null) {
                lease.transactionFailed(failure);
            }
            Throwable cleanup = restoreAndClose();
            try {
                if (cleanup != null) {
                    uncleaned(failure, cleanup);
                }
            } finally {
                finished(lease, outcome, poolWait, timed ? telemetry.now() - acquiredAt : 0, workNanos);
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private void uncleaned(@Nullable Throwable failure, Throwable cleanup) throws CommitOutcomeUnknownException {
            if (failure != null) {
                failure.addSuppressed(cleanup);
            } else {
                outcome = Outcome.OUTCOME_UNKNOWN;
                throw acknowledgedButUncleaned(cleanup);
            }
        }

        private void putSessionTimeoutsBack() throws SQLException {
            if (sessionTimeoutsBack != null) {
                try (var statement = raw.createStatement()) {
                    statement.execute(sessionTimeoutsBack);
                }
            }
        }

        /**
         * Sets the user variables work assigned back to {@code NULL}, as the next caller would find them unset (one
         * statement, only after work that assigned some). Returns those left: all of them when that failed, or when
         * there are more than {@link #MAX_VARIABLES_RESET} (then the connection is discarded instead).
         */
        private Set<String> unsetVariables(Set<String> variables) {
            if (variables.isEmpty() || variables.size() > MAX_VARIABLES_RESET) {
                return variables;
            }
            try (var statement = raw.createStatement()) {
                statement.execute(MySqlStatements.unsetVariables(variables));
                return Set.of();
            } catch (SQLException | RuntimeException failed) {
                return variables;
            }
        }

        private @Nullable Throwable restoreAndClose() {
            Throwable failure = null;
            boolean discard = false;
            // The session's own time limits go back, or the connection does not go back to the pool.
            boolean timeoutsLeft = sessionTimeoutsBack != null;
            Set<String> variables = guarded == null ? Set.of() : guarded.userVariables();
            try {
                if (ended) {
                    if (networkTimeoutBefore != -1) {
                        liftNetworkTimeout();
                    }
                    putSessionTimeoutsBack();
                    timeoutsLeft = false;
                    variables = unsetVariables(variables);
                    Restore r = restore;
                    if (r != null) {
                        r.apply(raw);
                    }
                    discard = r == null || sessionChanged(this); // nothing recorded to put back: not pooled again
                }
            } catch (Throwable t) {
                failure = t;
            }
            discard |= timeoutsLeft || !variables.isEmpty();
            try {
                if (discard) {
                    sessions.discard(raw);
                } else {
                    raw.close();
                }
            } catch (Throwable t) {
                if (failure == null) {
                    failure = t;
                } else {
                    failure.addSuppressed(t);
                }
            }
            return failure;
        }
    }

    /**
     * Whether the connection must not go back to the pool: work sent a statement that may change the session unseen
     * ({@link GuardedConnection#sessionRisk}), on PostgreSQL, and the session changed, or cannot be compared (not read
     * before: the first such transaction from this call site; or unreadable after). Reported when true.
     */
    private boolean sessionChanged(Transaction<?> tx) throws SQLException {
        String risk = tx.guarded == null ? null : tx.guarded.sessionRisk();
        if (risk == null || !isPostgres(tx.raw)) {
            return false;
        }
        SessionState.CallSite site = sessions.site(tx.site);
        sessions.sawRisk(site); // later transactions from this call site read the session before they begin
        String before = tx.sessionBefore != null ? tx.sessionBefore : sessions.known(tx.raw);
        String why;
        if (before == null) {
            why = "was not read before it (the first such transaction from this call site; later ones are compared)";
        } else {
            try {
                String after = SessionState.fingerprint(tx.raw);
                if (after.equals(before)) {
                    sessions.remember(tx.raw, after);
                    return false;
                }
                why = "changed";
            } catch (SQLException | RuntimeException unread) {
                why = "could not be read after it (" + unread + ")";
            }
        }
        telemetry.sessionDiscarded(tx.lease.workload(), tx.site, risk, why, site.logged.compareAndSet(false, true));
        return true;
    }

    /**
     * The commit was acknowledged and the cleanup after it failed: the write took effect. A
     * {@link VirtualMachineError} still propagates as itself, carrying that fact as a suppressed exception.
     */
    private static CommitOutcomeUnknownException acknowledgedButUncleaned(Throwable cleanup) {
        String state = cleanup instanceof SQLException e ? e.getSQLState() : null;
        var unknown = new CommitOutcomeUnknownException(
                "the commit succeeded but the connection cleanup after it failed ("
                        + (state != null ? "SQLState " + state : cleanup.toString()) + "); the write took effect",
                cleanup,
                true);
        if (cleanup instanceof VirtualMachineError vm) {
            vm.addSuppressed(unknown);
            throw vm;
        }
        return unknown;
    }

    private static void rejectEscaping(Object value) {
        // Connection, Statement, ResultSet and streams are all AutoCloseable: one check for the common value.
        if (!(value instanceof AutoCloseable) && !(value instanceof DatabaseMetaData)) {
            return;
        }
        if (value instanceof Connection
                || value instanceof Statement
                || value instanceof ResultSet
                || value instanceof DatabaseMetaData
                || value instanceof BaseStream<?, ?>) {
            throw new IllegalStateException(
                    "work returned a " + value.getClass().getName() + ", which would "
                            + "escape the barrier: its connection goes back to the pool when work returns. Return a "
                            + "fully materialised value (e.g. a List) instead; the transaction was rolled back.");
        }
    }

    /** What the transaction changed on the connection and must put back before it returns to the pool. */
    private record Restore(boolean autoCommit, boolean readOnlyChanged, int previousIsolation) {
        private static final Restore AUTO_COMMIT_ONLY = new Restore(true, false, -1);
        private static final Restore NOTHING = new Restore(false, false, -1);

        /** Turns auto-commit off: the whole preparation of a transaction without options. */
        static Restore autoCommitOff(Connection raw) throws SQLException {
            if (!raw.getAutoCommit()) {
                return NOTHING;
            }
            raw.setAutoCommit(false);
            return AUTO_COMMIT_ONLY;
        }

        /**
         * Turns auto-commit off and applies {@code options}. On PostgreSQL ({@code runner} tells) with
         * {@code SET TRANSACTION}, which lasts for this transaction only: the JDBC setters change the session
         * ({@code SET SESSION CHARACTERISTICS}), which behind a transaction-pooling PgBouncer lands on another server
         * connection than the transaction (so the isolation is silently lost) and stays there for other clients.
         */
        static Restore prepare(Connection raw, TransactionOptions options, TransactionRunner runner)
                throws SQLException {
            boolean autoCommit = raw.getAutoCommit();
            if (autoCommit) {
                raw.setAutoCommit(false);
            }
            if (options == null || (!options.isReadOnly() && options.isolation() == null)) {
                return autoCommit ? AUTO_COMMIT_ONLY : NOTHING;
            }
            if (runner.dialect(raw).setTransaction()) {
                var modes = new ArrayList<String>(2);
                if (options.isolation() != null) {
                    modes.add("ISOLATION LEVEL " + options.isolation().name().replace('_', ' '));
                }
                if (options.isReadOnly()) {
                    modes.add("READ ONLY");
                }
                try (var statement = raw.createStatement()) {
                    statement.execute("SET TRANSACTION " + String.join(", ", modes)); // begins the transaction
                }
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

        void apply(Connection raw) throws SQLException {
            if (readOnlyChanged) {
                raw.setReadOnly(false);
            }
            if (previousIsolation != -1) {
                raw.setTransactionIsolation(previousIsolation);
            }
            if (autoCommit) {
                raw.setAutoCommit(true);
            }
        }
    }
}
