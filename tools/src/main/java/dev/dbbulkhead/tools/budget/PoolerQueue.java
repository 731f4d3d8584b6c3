package dev.dbbulkhead.tools.budget;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The queue in PgBouncer that no barrier sees: clients of a database waiting for a server connection
 * ({@code cl_waiting} in {@code SHOW POOLS}, over every user's pool), with the longest wait ({@code maxwait}). A
 * barrier's permit holder that waits there still counts as executing, and its deadline is all that bounds it; a fleet
 * whose instances admit no more than PgBouncer has server connections keeps it empty.
 */
record PoolerQueue(String database, int clientsActive, int clientsWaiting, int serversActive, double maxWaitSeconds) {

    static PoolerQueue of(List<Map<String, String>> pools, String database) {
        int active = 0;
        int waiting = 0;
        int servers = 0;
        double maxWait = 0;
        for (Map<String, String> row : pools) {
            if (!database.equals(row.get("database"))) {
                continue;
            }
            active += number(row.get("cl_active"));
            waiting += number(row.get("cl_waiting"));
            servers += number(row.get("sv_active"));
            double wait = number(row.get("maxwait")) + number(row.get("maxwait_us")) / 1e6;
            maxWait = Math.max(maxWait, wait);
        }
        return new PoolerQueue(database, active, waiting, servers, maxWait);
    }

    private static int number(@Nullable String s) {
        if (s == null || s.isBlank()) {
            return 0;
        }
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    String describe() {
        return String.format(
                Locale.ROOT,
                "  queue no barrier sees, now: %d client(s) waiting for a server "
                        + "connection (longest %.3f s), %d active, %d server connection(s) busy",
                clientsWaiting,
                maxWaitSeconds,
                clientsActive,
                serversActive);
    }

    /**
     * The per-instance B that keeps that queue empty: the fleet's admitted transactions, peak instances × B, must not
     * exceed the server connections PgBouncer opens for the database (without its reserve pool, which only opens once
     * clients have waited).
     */
    static String suggestion(PgBouncerSettings settings, int peakInstances) {
        long perInstance = settings.maxDbConnections() / Math.max(1, peakInstances);
        if (perInstance < 1) {
            return "suggested B per instance: none fits: " + peakInstances + " instances at the peak share "
                    + settings.maxDbConnections() + " server connection(s) of PgBouncer; some of them will always wait "
                    + "in its queue (raise max_db_connections, or use fewer instances)";
        }
        return "suggested B per instance: at most " + perInstance + " (= " + settings.maxDbConnections()
                + " max_db_connections / " + peakInstances + " peak instances), so that the fleet's admitted "
                + "transactions never outnumber PgBouncer's server connections and none waits in its queue; or an "
                + "adaptive limit per instance, which finds its share itself (docs/fleet.md)";
    }
}
