package dev.dbbulkhead.internal;

import dev.dbbulkhead.internal.TransactionControl.Finding;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What differs from one database to the next, chosen once per barrier from its first connection's metadata: how SQL
 * text is read and what it may do ({@link TransactionControl}, {@link MySqlStatements}), which failure means the
 * server already rolled the whole transaction back, how transaction options are applied, and the advice refusals
 * give. PostgreSQL, MySQL and MariaDB get every promise; any other database gets admission, permits, the owned
 * transaction and the JDBC-level guard, and one line at start-up says what it does not get ({@link #unkept}).
 */
sealed interface Dialect {
    /** The first refusal in {@code sql}, else a risk to the session, else null. */
    @Nullable
    Finding inspect(String sql);

    /** Whether {@code failure}, thrown by a statement, means the server rolled back the whole transaction. */
    default boolean rolledBackWhole(SQLException failure) {
        return false;
    }

    /** Whether {@code failure} is a statement cancelled by a statement time limit. */
    default boolean statementTimedOut(SQLException failure) {
        return false;
    }

    /** Whether {@code failure} is a lock not obtained within a lock timeout. */
    default boolean lockTimedOut(SQLException failure) {
        return false;
    }

    /**
     * How many times the session has ended a transaction with {@code COMMIT} and with {@code ROLLBACK} so far, as
     * {@code {commits, rollbacks}}, where a procedure can do so inside the transaction work runs; null elsewhere.
     */
    default long @Nullable [] transactionEnds(Connection raw) throws SQLException {
        return null;
    }

    /** Whether read-only and isolation are set with {@code SET TRANSACTION} (else with the JDBC setters). */
    default boolean setTransaction() {
        return true;
    }

    /** Whether statements are bounded by the deadline on the server and the socket ({@link ServerTimeouts}). */
    default boolean postgres() {
        return false;
    }

    /** What to do instead of {@code setSchema} and {@code setCatalog}. */
    String schemaAdvice();

    /** The promises this database does not get, for the one line said when the barrier first meets it; or null. */
    @Nullable
    String unkept();

    /** PostgreSQL (also behind PgBouncer): every promise. */
    record Postgres() implements Dialect {
        @Override
        public @Nullable Finding inspect(String sql) {
            return TransactionControl.inspect(sql);
        }

        @Override
        public boolean postgres() {
            return true;
        }

        @Override
        public boolean statementTimedOut(SQLException failure) {
            return "57014".equals(failure.getSQLState());
        }

        @Override
        public boolean lockTimedOut(SQLException failure) {
            return "55P03".equals(failure.getSQLState());
        }

        @Override
        public String schemaAdvice() {
            return "use SET LOCAL search_path inside work instead, which ends with the transaction";
        }

        @Override
        public @Nullable String unkept() {
            return null;
        }
    }

    /**
     * MySQL or MariaDB, with the session's {@code sql_mode} ({@code NO_BACKSLASH_ESCAPES}, {@code ANSI_QUOTES}) and
     * whether InnoDB rolls the whole transaction back on a lock wait timeout ({@code innodb_rollback_on_timeout}).
     */
    record MySql(String product, boolean mariaDb, boolean backslashes, boolean ansiQuotes, boolean rollbackOnTimeout)
            implements Dialect {
        /** MariaDB's {@code max_statement_time} exceeded. */
        static final int STATEMENT_TIMEOUT = 1969;
        /** MySQL's {@code max_execution_time} exceeded. */
        static final int EXECUTION_TIMEOUT = 3024;

        /** InnoDB's deadlock: the whole transaction rolled back. */
        static final int DEADLOCK = 1213;
        /** InnoDB's lock wait timeout: the statement, or the whole transaction with innodb_rollback_on_timeout. */
        static final int LOCK_WAIT_TIMEOUT = 1205;

        @Override
        public @Nullable Finding inspect(String sql) {
            return MySqlStatements.inspect(sql, backslashes, ansiQuotes);
        }

        /** The user variables {@code sql} assigns (see {@link MySqlStatements#assignedVariables}). */
        Set<String> assignedVariables(String sql) {
            return MySqlStatements.assignedVariables(sql, backslashes, ansiQuotes);
        }

        @Override
        public boolean rolledBackWhole(SQLException failure) {
            for (SQLException e = failure; e != null; e = e.getNextException()) {
                int code = e.getErrorCode();
                if (code == DEADLOCK || (code == LOCK_WAIT_TIMEOUT && rollbackOnTimeout)) {
                    return true;
                }
                if (e.getNextException() == e) {
                    break;
                }
            }
            return false;
        }

        @Override
        public boolean statementTimedOut(SQLException failure) {
            return failure.getErrorCode() == STATEMENT_TIMEOUT || failure.getErrorCode() == EXECUTION_TIMEOUT;
        }

        @Override
        public boolean lockTimedOut(SQLException failure) {
            return failure.getErrorCode() == LOCK_WAIT_TIMEOUT;
        }

        /** The session's {@code Com_commit} and {@code Com_rollback}: statements inside procedures count too. */
        @Override
        public long[] transactionEnds(Connection raw) throws SQLException {
            var ends = new long[2];
            try (Statement s = raw.createStatement();
                    var r = s.executeQuery(
                            "SHOW SESSION STATUS WHERE Variable_name IN ('Com_commit', 'Com_rollback')")) {
                while (r.next()) {
                    ends[r.getString(1).equalsIgnoreCase("Com_commit") ? 0 : 1] = r.getLong(2);
                }
            }
            return ends;
        }

        @Override
        public String schemaAdvice() {
            return "qualify the names with their database (db.table) inside work instead";
        }

        @Override
        public String unkept() {
            return mariaDb
                    ? "a procedure's implicit commit (DDL inside a CALL) is not detected"
                    : "a deadline bounds a SELECT on the server (max_execution_time) but other statements only from "
                            + "the client (the socket); a procedure's implicit commit (DDL inside a CALL) is not "
                            + "detected";
        }
    }

    /** Any other database: the JDBC-level guard and transaction-control SQL only. */
    record Other(String product) implements Dialect {
        @Override
        public @Nullable Finding inspect(String sql) {
            return TransactionControl.inspectTransactionControl(sql);
        }

        @Override
        public boolean setTransaction() {
            return false;
        }

        @Override
        public String schemaAdvice() {
            return "qualify the names inside work instead";
        }

        @Override
        public String unkept() {
            return "statements that end the transaction implicitly (DDL on many databases) are not refused, deadlines "
                    + "bound neither the statement on the server nor the socket, a failure that work catches after the "
                    + "database rolled the transaction back is not detected, and session changes made in SQL reach "
                    + "the next caller";
        }
    }

    /** The dialect of {@code raw}'s database, from its metadata (and, on MySQL, two session variables). */
    static Dialect of(Connection raw) throws SQLException {
        DatabaseMetaData md = raw.getMetaData();
        String name = md.getDatabaseProductName();
        String product = name + " " + md.getDatabaseProductVersion() + " (" + md.getDriverName() + " "
                + md.getDriverVersion() + ")";
        String lower = name == null ? "" : name.toLowerCase(Locale.ROOT);
        if (lower.equals("postgresql")) {
            return new Postgres();
        }
        if (lower.contains("mysql") || lower.contains("mariadb")) {
            try (Statement s = raw.createStatement();
                    var r = s.executeQuery("SELECT @@sql_mode, @@innodb_rollback_on_timeout, @@version")) {
                r.next();
                String mode = String.valueOf(r.getString(1)).toUpperCase(Locale.ROOT);
                boolean mariaDb =
                        String.valueOf(r.getString(3)).toLowerCase(Locale.ROOT).contains("mariadb");
                return new MySql(
                        product,
                        mariaDb,
                        !mode.contains("NO_BACKSLASH_ESCAPES"),
                        mode.contains("ANSI_QUOTES"),
                        r.getBoolean(2));
            }
        }
        return new Other(product);
    }
}
