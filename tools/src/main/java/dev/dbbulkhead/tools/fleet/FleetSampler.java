package dev.dbbulkhead.tools.fleet;

import dev.dbbulkhead.tools.support.AdminConsole;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * Every 200 ms during a fleet run: the fleet role's server connections ({@code pg_stat_activity}) and, behind
 * PgBouncer, its {@code SHOW POOLS} row (clients active and waiting, server connections). Runs on its own thread.
 */
final class FleetSampler implements Runnable {
    /** One sample; the PgBouncer columns are -1 without PgBouncer. */
    record Sample(long millis, int serverConnections, int clientsActive, int clientsWaiting, int poolerServers) {}

    private volatile long startMillis;

    /** When sampling started, epoch milliseconds (the instances' limit reports are in epoch milliseconds). */
    long startMillis() {
        return startMillis;
    }

    private final String url;
    private final String user;
    private final String password;
    private final @Nullable String console;
    private final String role;
    private final List<Sample> samples = new CopyOnWriteArrayList<>();
    private volatile boolean stopped;
    private volatile @Nullable String failure;

    FleetSampler(String url, String user, String password, @Nullable String console, String role) {
        this.url = url;
        this.user = user;
        this.password = password;
        this.console = console;
        this.role = role;
    }

    @Override
    public void run() {
        long start = System.nanoTime();
        startMillis = System.currentTimeMillis();
        AdminConsole pgbouncer = null;
        try (Connection c = DriverManager.getConnection(url, user, password);
                var q = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE usename = ?")) {
            q.setString(1, role);
            if (console != null) {
                pgbouncer = AdminConsole.connect(console, user, password);
            }
            while (!stopped) {
                int server;
                try (var r = q.executeQuery()) {
                    r.next();
                    server = r.getInt(1);
                }
                int active = -1;
                int waiting = -1;
                int servers = -1;
                if (pgbouncer != null) {
                    active = 0;
                    waiting = 0;
                    servers = 0;
                    for (Map<String, String> row : pgbouncer.query("SHOW POOLS")) {
                        if (role.equals(row.get("user"))) {
                            active += number(row.get("cl_active"));
                            waiting += number(row.get("cl_waiting"));
                            servers += number(row.get("sv_active"))
                                    + number(row.get("sv_idle"))
                                    + number(row.get("sv_used"))
                                    + number(row.get("sv_tested"))
                                    + number(row.get("sv_login"));
                        }
                    }
                }
                samples.add(new Sample((System.nanoTime() - start) / 1_000_000, server, active, waiting, servers));
                Thread.sleep(200);
            }
        } catch (SQLException | java.io.IOException | IllegalArgumentException e) {
            failure = "sampling stopped: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            if (pgbouncer != null) {
                try {
                    pgbouncer.close();
                } catch (java.io.IOException ignored) {
                    // the run is over
                }
            }
        }
    }

    private static int number(@Nullable String s) {
        return s == null || s.isEmpty() ? 0 : Integer.parseInt(s);
    }

    void stop() {
        stopped = true;
    }

    List<Sample> samples() {
        return List.copyOf(samples);
    }

    /** Why sampling stopped early, or null. */
    @Nullable
    String failure() {
        return failure;
    }
}
