package dev.dbbulkhead.tools.support;

import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * What the server allows, read before a run, and how to tell a failure that is the server's (it refused connections,
 * the login, the database) from one of the SQL a command was given.
 */
public final class ServerLimits {
    private ServerLimits() {}

    /**
     * The connections the server still has for this user: {@code max_connections} less the reserved ones and those
     * open now, as {@code {free, max_connections, open}}.
     */
    public static int[] freeConnections(Connection c) throws SQLException {
        try (var s = c.createStatement();
                var r = s.executeQuery("SELECT current_setting('max_connections')::int, "
                        + "current_setting('superuser_reserved_connections')::int, "
                        + "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int")) {
            r.next();
            int max = r.getInt(1);
            int open = r.getInt(3);
            return new int[] {Math.max(0, max - r.getInt(2) - open), max, open};
        }
    }

    /**
     * Refuses {@code wanted} connections ({@code option}'s value) before a run when the server has fewer free, with
     * both numbers; the server's own failure to connect is named as the server's.
     */
    public static void checkFreeConnections(TestDatabase db, String option, int wanted) {
        int[] free;
        try (Connection c = db.connect()) {
            free = freeConnections(c);
        } catch (SQLException e) {
            throw new IllegalStateException(serverFailure(e));
        }
        if (wanted > free[0]) {
            throw new IllegalArgumentException(option + "=" + wanted + " is more connections than the server has free: "
                    + free[0] + " (max_connections " + free[1] + ", " + free[2] + " open, and the reserved ones); "
                    + "lower " + option + " or raise max_connections");
        }
    }

    /**
     * Whether {@code e} (or a cause) is the server's refusal rather than a statement's failure: a connection failure
     * (class 08), too many connections or out of resources (53), the login (28), the database missing (3D000), or the
     * server shutting down (57P).
     */
    public static boolean isServers(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && sql.getSQLState() != null) {
                String state = sql.getSQLState();
                if (state.startsWith("08")
                        || state.startsWith("53")
                        || state.startsWith("28")
                        || state.equals("3D000")
                        || state.startsWith("57P")) {
                    return true;
                }
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    /** One line that says the server refused, and what it said. */
    public static String serverFailure(Throwable e) {
        return "the server refused (not the SQL given): " + Failures.oneLine(e);
    }
}
