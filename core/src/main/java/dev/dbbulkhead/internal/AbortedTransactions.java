package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.sql.Connection;
import java.sql.SQLException;
import org.jspecify.annotations.Nullable;

/**
 * Whether a PostgreSQL transaction was aborted by a statement that failed inside work, which work caught and went on.
 * PostgreSQL then refuses every statement until the transaction ends and answers COMMIT with ROLLBACK; pgJDBC reports
 * that COMMIT as a success unless {@code raiseExceptionOnSilentRollback} is set, so the barrier asks the driver for the
 * transaction's state before it commits ({@code org.postgresql.core.BaseConnection.getTransactionState()}, read
 * through {@link java.sql.Wrapper#unwrap}, so that a pool's proxy is looked through). Without the driver on the class
 * path, or a driver that does not answer, nothing is known and the commit goes ahead as before.
 *
 * <p>Thread-safe: the method handle is looked up once.
 */
final class AbortedTransactions {
    private static final String BASE_CONNECTION = "org.postgresql.core.BaseConnection";

    /** The driver's interface and its {@code getTransactionState()}, or nulls when it cannot be read. */
    private record Driver(
            @Nullable Class<?> connection, @Nullable MethodHandle state) {}

    private static volatile @Nullable Driver driver;

    private AbortedTransactions() {}

    /**
     * Whether {@code raw}'s transaction is aborted (pgJDBC's {@code TransactionState.FAILED}): a statement failed in it
     * and was not rolled back to a savepoint. False when that cannot be known.
     */
    static boolean aborted(Connection raw) {
        Driver d = driver(raw);
        Class<?> connection = d.connection();
        MethodHandle readState = d.state();
        if (connection == null || readState == null) {
            return false;
        }
        try {
            if (!raw.isWrapperFor(connection)) {
                return false;
            }
            Object state = readState.invoke(raw.unwrap(connection));
            return state instanceof Enum<?> e && e.name().equals("FAILED");
        } catch (VirtualMachineError vm) {
            throw vm;
        } catch (Throwable unknown) {
            return false; // nothing learnt: the commit goes ahead as it would have
        }
    }

    private static Driver driver(Connection raw) {
        Driver d = driver;
        if (d == null) {
            d = lookUp(raw.getClass().getClassLoader());
            driver = d;
        }
        return d;
    }

    private static Driver lookUp(ClassLoader loader) {
        try {
            Class<?> base = Class.forName(
                    BASE_CONNECTION, false, loader != null ? loader : AbortedTransactions.class.getClassLoader());
            Class<?> stateType = base.getMethod("getTransactionState").getReturnType();
            MethodHandle state = MethodHandles.publicLookup()
                    .findVirtual(base, "getTransactionState", MethodType.methodType(stateType))
                    .asType(MethodType.methodType(Object.class, Object.class));
            return new Driver(base, state);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError absent) {
            return new Driver(null, null);
        }
    }

    /** What the caller is told when work went on after a failure that aborted the transaction: nothing committed. */
    static SQLException rolledBack() {
        return new SQLException(
                "db-bulkhead: a statement failed inside work and work went on; PostgreSQL had aborted "
                        + "the transaction, so it was rolled back and nothing was committed (pgJDBC would have "
                        + "reported its COMMIT as a success). To recover from a failed statement inside one "
                        + "transaction, roll back to a savepoint set before it; otherwise let work throw.",
                "25P02");
    }

    /**
     * What the caller is told when a statement's failure made the server roll back the whole transaction (InnoDB's
     * deadlock, 1213; its lock wait timeout, 1205, with {@code innodb_rollback_on_timeout}) and work went on: what
     * ran after it ran in a new transaction, rolled back now too, so nothing was committed. SQLState 40001, the
     * failure as its cause.
     */
    static SQLException rolledBackWhole(SQLException failure) {
        return new SQLException(
                "db-bulkhead: a statement failed inside work with error " + failure.getErrorCode()
                        + " (" + failure.getMessage()
                        + "), by which the server rolled back the whole transaction, and work "
                        + "went on; what ran after it was rolled back too, so nothing was committed. Let work throw on "
                        + "such a failure, and retry the whole work",
                "40001",
                failure.getErrorCode(),
                failure);
    }
}
