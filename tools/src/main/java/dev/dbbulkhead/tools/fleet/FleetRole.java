package dev.dbbulkhead.tools.fleet;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * The fleet's role on the server ({@link FleetCommand#ROLE}): every instance logs in as it, and its {@code CONNECTION
 * LIMIT} is the budget the fleet shares.
 */
final class FleetRole {
    private FleetRole() {}

    /** Creates the role if it is missing and sets its connection limit to {@code limit}. */
    static void prepare(String dbUrl, String user, String password, int limit) throws SQLException {
        try (Connection admin = DriverManager.getConnection(dbUrl, user, password);
                var s = admin.createStatement()) {
            s.execute("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" + FleetCommand.ROLE
                    + "') THEN CREATE ROLE " + FleetCommand.ROLE + " LOGIN; END IF; END $$");
            s.execute("ALTER ROLE " + FleetCommand.ROLE + " CONNECTION LIMIT " + limit);
        }
    }

    /** Ends every session of the role (trying again for up to 5 s), so that a run starts from none. */
    static void clear(String dbUrl, String user, String password) throws SQLException, InterruptedException {
        try (Connection admin = DriverManager.getConnection(dbUrl, user, password);
                var s = admin.createStatement()) {
            for (int i = 0; i < 50; i++) {
                try (var r = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        + "WHERE usename = '" + FleetCommand.ROLE + "'")) {
                    r.next();
                    if (r.getInt(1) == 0) {
                        return;
                    }
                }
                Thread.sleep(100);
            }
        }
    }
}
