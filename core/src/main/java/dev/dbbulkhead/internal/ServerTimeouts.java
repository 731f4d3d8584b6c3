package dev.dbbulkhead.internal;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * On PostgreSQL, bounds a transaction's statements by its deadline: {@code statement_timeout} (and optionally
 * {@code lock_timeout}) set for this transaction only ({@code set_config(..., true)}, as {@code SET LOCAL}) to the
 * remaining time, unless the session already has a stricter one (from the role, {@code connectionInitSql} or the
 * pool): the transaction gets the smaller of the two, never a looser one. One round trip; transaction-scoped, so it
 * works behind a transaction-pooling PgBouncer. The client side is bounded too ({@link #networkMillis}). On MySQL and
 * MariaDB, the session's limits instead, put back after the transaction ({@link #applyMySql}).
 */
final class ServerTimeouts {
    /** PostgreSQL's largest timeout: an int of milliseconds. */
    static final long MAX_MILLIS = Integer.MAX_VALUE;
    /**
     * How much longer than the deadline the client waits for an answer: enough for the server's own cancellation
     * (the statement timeout, at the deadline) to arrive first whenever the server can answer at all.
     */
    static final long GRACE_MILLIS = 30;

    private ServerTimeouts() {}

    /** Whole milliseconds, rounded up, at least 1 (0 would mean "no timeout"), at most {@link #MAX_MILLIS}. */
    static long millis(long remainingNanos) {
        long millis = remainingNanos <= 0 ? 1 : remainingNanos / 1_000_000 + (remainingNanos % 1_000_000 == 0 ? 0 : 1);
        return Math.min(Math.max(1, millis), MAX_MILLIS);
    }

    /**
     * The network timeout that bounds the client's wait for the server: the deadline's remaining time and the grace,
     * in whole milliseconds. Where the server cannot cancel anything (a transaction queued in PgBouncer for a server
     * connection), this is what ends the wait; pgJDBC then closes the connection, so nothing it carried commits.
     */
    static int networkMillis(long remainingNanos) {
        return (int) Math.min(Integer.MAX_VALUE, millis(remainingNanos) + GRACE_MILLIS);
    }

    /** Whether the driver gave up waiting for the server (the network timeout), here or in a cause. */
    static boolean timedOutOnTheSocket(SQLException e) {
        Throwable t = e;
        for (int depth = 0; t != null && depth < 8; depth++, t = t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Applies the deadline's remaining time.
     *
     * @return true when the statement timeout now in force is the deadline's (the session had none as strict), so
     *     that a statement it cancels (57014) is the deadline's doing
     */
    static boolean apply(Connection raw, long remainingNanos, boolean lockTimeout) throws SQLException {
        long m = millis(remainingNanos);
        // The session's settings in milliseconds (0: none), read with current_setting: its text ("150ms", "5s",
        // "1min", "0") casts to an interval. Reading pg_settings instead builds every setting of the server, about
        // 350 us of server CPU per transaction. "Ours" when the session's is not stricter.
        String sql = "SELECT set_config('statement_timeout', " + keepStricter("s", m) + ", true), s NOT BETWEEN 1 AND "
                + (m - 1) + (lockTimeout ? ", set_config('lock_timeout', " + keepStricter("l", m) + ", true)" : "")
                + " FROM (SELECT " + inMillis("statement_timeout") + " AS s"
                + (lockTimeout ? ", " + inMillis("lock_timeout") + " AS l" : "") + ") t";
        try (Statement statement = raw.createStatement();
                ResultSet r = statement.executeQuery(sql)) {
            r.next();
            return r.getBoolean(2);
        }
    }

    /**
     * What {@link #applyMySql} set: the {@code SET} that puts the session's own values back once the transaction has
     * ended (session variables are not transactional on MySQL), and whether the statement limit in force is the
     * deadline's.
     */
    record MySqlTimeouts(@Nullable String restore, boolean ours) {}

    /**
     * On MySQL and MariaDB, which have no transaction-scoped setting: the statement time limit
     * ({@code max_statement_time}, seconds, on MariaDB; {@code max_execution_time}, milliseconds and for
     * {@code SELECT} only, on MySQL) and, with {@code lockTimeout}, {@code innodb_lock_wait_timeout} (whole seconds,
     * at least 1) set for the session to the deadline's remaining time, unless the session already has a stricter
     * one. Two round trips; {@link MySqlTimeouts#restore} (null when nothing was set) must run after the transaction.
     */
    static MySqlTimeouts applyMySql(Connection raw, long remainingNanos, boolean lockTimeout, boolean mariaDb)
            throws SQLException {
        long m = millis(remainingNanos);
        String limit = mariaDb ? "max_statement_time" : "max_execution_time";
        try (Statement statement = raw.createStatement()) {
            String current;
            long lockSeconds;
            try (ResultSet r =
                    statement.executeQuery("SELECT @@session." + limit + ", @@session.innodb_lock_wait_timeout")) {
                r.next();
                current = r.getString(1);
                lockSeconds = r.getLong(2);
            }
            double currentMillis = mariaDb ? Double.parseDouble(current) * 1000 : Double.parseDouble(current);
            boolean ours = currentMillis <= 0 || currentMillis > m;
            var set = new ArrayList<String>(2);
            var back = new ArrayList<String>(2);
            if (ours) {
                set.add("@@session." + limit + " = " + (mariaDb ? String.format(Locale.ROOT, "%.3f", m / 1000.0) : m));
                back.add("@@session." + limit + " = " + current);
            }
            long wait = Math.max(1, (m + 999) / 1000);
            if (lockTimeout && lockSeconds > wait) {
                set.add("@@session.innodb_lock_wait_timeout = " + wait);
                back.add("@@session.innodb_lock_wait_timeout = " + lockSeconds);
            }
            if (set.isEmpty()) {
                return new MySqlTimeouts(null, false);
            }
            statement.execute("SET " + String.join(", ", set));
            return new MySqlTimeouts("SET " + String.join(", ", back), ours);
        }
    }

    private static String inMillis(String setting) {
        return "(extract(epoch FROM current_setting('" + setting + "')::interval) * 1000)::bigint";
    }

    private static String keepStricter(String alias, long millis) {
        return "CASE WHEN " + alias + " BETWEEN 1 AND " + millis + " THEN " + alias + "::text ELSE '" + millis
                + "' END";
    }
}
