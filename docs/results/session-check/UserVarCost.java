import java.sql.*;
import java.util.*;

/** Throwaway: what a transaction costs with and without resetting user variables, on MariaDB, one connection. */
public class UserVarCost {
    public static void main(String[] a) throws Exception {
        String url = a[0];
        int n = Integer.parseInt(a[1]);
        try (Connection c = DriverManager.getConnection(url, "root", "")) {
            Map<String, List<Double>> res = new LinkedHashMap<>();
            for (int round = 0; round < 5; round++) {
                for (String mode : List.of("plain", "assign", "assign+unset", "assign+reset")) {
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        c.setAutoCommit(false);
                        try (Statement s = c.createStatement()) {
                            s.execute(mode.equals("plain") ? "SELECT 1" : "SET @tenant = 42");
                        }
                        c.commit();
                        c.setAutoCommit(true);
                        if (mode.equals("assign+unset")) {
                            try (Statement s = c.createStatement()) { s.execute("SET @`tenant` = NULL"); }
                        } else if (mode.equals("assign+reset")) {
                            ((org.mariadb.jdbc.Connection) c.unwrap(org.mariadb.jdbc.Connection.class)).reset();
                        }
                    }
                    res.computeIfAbsent(mode, k -> new ArrayList<>()).add((System.nanoTime() - t0) / 1e3 / n);
                }
            }
            try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT IFNULL(@tenant, '-'), @@autocommit, @@session.wait_timeout")) {
                r.next();
                System.out.println("after reset: @tenant=" + r.getString(1) + " autocommit=" + r.getString(2) + " wait_timeout=" + r.getString(3));
            }
            res.forEach((k, v) -> { Collections.sort(v); System.out.printf("%-14s median %.1f us per transaction (min %.1f, max %.1f)%n", k, v.get(2), v.get(0), v.get(4)); });
        }
    }
}
