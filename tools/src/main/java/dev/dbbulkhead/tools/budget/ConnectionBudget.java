package dev.dbbulkhead.tools.budget;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The fleet's connection arithmetic: {@code peak instances × pool size + other clients ≤ budget}, where the
 * budget is {@code max_connections − superuser_reserved_connections}. Behind poolers (PgBouncer) it has two tiers:
 * {@code peak instances × pool size ≤ poolers × max_client_conn} (what the poolers accept), and
 * {@code poolers × (max_db_connections + reserve_pool) + other clients ≤ budget} (what they open to PostgreSQL).
 * Immutable; {@link #of} checks every input.
 */
public record ConnectionBudget(
        int instances,
        int surge,
        int poolSize,
        Map<String, Integer> others,
        int maxConnections,
        int reserved,
        @Nullable Poolers poolers) {

    /** {@code count} poolers, each with {@code settings}; null in a direct budget. */
    record Poolers(int count, PgBouncerSettings settings) {
        long clientCapacity() {
            return (long) count * settings.maxClientConn();
        }

        long serverConnections() {
            return (long) count * settings.serverConnections();
        }
    }

    public ConnectionBudget {
        others = Collections.unmodifiableMap(new LinkedHashMap<>(others)); // in the order given
    }

    public static ConnectionBudget of(
            int instances, int surge, int poolSize, Map<String, Integer> others, int maxConnections, int reserved) {
        return of(instances, surge, poolSize, others, maxConnections, reserved, null);
    }

    static ConnectionBudget of(
            int instances,
            int surge,
            int poolSize,
            Map<String, Integer> others,
            int maxConnections,
            int reserved,
            @Nullable Poolers poolers) {
        List<String> errors = new ArrayList<>();
        if (instances < 1) {
            errors.add("--instances must be >= 1, was " + instances);
        }
        if (surge < 0) {
            errors.add("--surge must be >= 0, was " + surge);
        }
        if (poolSize < 1) {
            errors.add("--pool must be >= 1, was " + poolSize);
        }
        if (maxConnections < 1) {
            errors.add("max_connections must be >= 1, was " + maxConnections);
        }
        if (reserved < 0) {
            errors.add("reserved connections must be >= 0, was " + reserved);
        } else if (maxConnections >= 1 && reserved >= maxConnections) {
            errors.add("reserved connections (" + reserved + ") must be fewer than max_connections (" + maxConnections
                    + ")");
        }
        others.forEach((name, n) -> {
            if (n == null || n < 0) {
                errors.add("--other " + name + " must be >= 0, was " + n);
            }
        });
        if ((long) instances + surge > 100_000) {
            errors.add("--instances + --surge must be <= 100000, was " + ((long) instances + surge));
        }
        if (poolSize > 100_000) {
            errors.add("--pool must be <= 100000, was " + poolSize);
        }
        if (poolers != null) {
            if (poolers.count() < 1) {
                errors.add("--poolers must be >= 1, was " + poolers.count());
            }
            if (poolers.settings().maxClientConn() < 1) {
                errors.add("max_client_conn must be >= 1, was "
                        + poolers.settings().maxClientConn());
            }
            if (poolers.settings().maxDbConnections() < 1) {
                errors.add("max_db_connections must be >= 1, was "
                        + poolers.settings().maxDbConnections());
            }
            if (poolers.settings().reservePool() < 0) {
                errors.add("reserve_pool_size must be >= 0, was "
                        + poolers.settings().reservePool());
            }
        }
        if (!errors.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", errors));
        }
        return new ConnectionBudget(
                instances, surge, poolSize, new LinkedHashMap<>(others), maxConnections, reserved, poolers);
    }

    int peakInstances() {
        return instances + surge;
    }

    long fleet() {
        return (long) peakInstances() * poolSize;
    }

    long otherClients() {
        return others.values().stream().mapToLong(Integer::longValue).sum();
    }

    /** What PostgreSQL must accept: the fleet's pools, or the poolers' server connections, plus the others. */
    long demand() {
        return (poolers == null ? fleet() : poolers.serverConnections()) + otherClients();
    }

    /** Behind poolers: whether they accept every instance's pool. Always true without poolers. */
    boolean clientsFit() {
        return poolers == null || fleet() <= poolers.clientCapacity();
    }

    int budget() {
        return maxConnections - reserved;
    }

    boolean fits() {
        return clientsFit() && demand() <= budget();
    }

    /** The largest pool size per instance that fits, or 0 when even the other clients do not fit. */
    public long largestPoolThatFits() {
        long room = poolers != null ? poolers.clientCapacity() : budget() - otherClients();
        return room <= 0 ? 0 : room / peakInstances();
    }

    /** The arithmetic, line by line, for a person to check. */
    List<String> explain() {
        var lines = new ArrayList<String>();
        lines.add("peak instances      = " + instances + " (autoscaling maximum) + " + surge
                + " (rolling-deploy surge) = " + peakInstances());
        lines.add("fleet connections   = " + peakInstances() + " × " + poolSize + " (pool size) = " + fleet());
        if (others.isEmpty()) {
            lines.add("other clients       = 0");
        } else {
            var parts = new ArrayList<String>();
            others.forEach((name, n) -> parts.add(name + " " + n));
            lines.add("other clients       = " + String.join(" + ", parts) + " = " + otherClients());
        }
        if (poolers != null) {
            var p = poolers.settings();
            lines.add("tier 1: clients → " + poolers.count() + " PgBouncer(s), database '" + p.database() + "' ("
                    + p.poolMode() + " pooling)");
            lines.add("  accepted          = " + poolers.count() + " × " + p.maxClientConn() + " (max_client_conn) = "
                    + poolers.clientCapacity());
            lines.add(
                    clientsFit()
                            ? "  OK: " + fleet() + " ≤ " + poolers.clientCapacity()
                            : "  OVER: " + fleet() + " > " + poolers.clientCapacity() + " by "
                                    + (fleet() - poolers.clientCapacity()) + "; the poolers refuse the excess clients");
            lines.add("tier 2: PgBouncer(s) → PostgreSQL");
            lines.add("  server connections = " + poolers.count() + " × (" + p.maxDbConnections()
                    + " max_db_connections + " + p.reservePool() + " reserve_pool) = " + poolers.serverConnections());
        }
        lines.add("demand              = " + (poolers == null ? fleet() : poolers.serverConnections()) + " + "
                + otherClients() + " = " + demand());
        lines.add("budget              = " + maxConnections + " (max_connections) − " + reserved + " (reserved) = "
                + budget());
        if (demand() <= budget() && clientsFit()) {
            lines.add("OK: " + demand() + " ≤ " + budget() + " (" + (budget() - demand()) + " to spare)");
        } else if (demand() <= budget()) {
            lines.add("OVER BUDGET at tier 1: the largest pool size per instance that the poolers accept is "
                    + largestPoolThatFits());
        } else if (poolers == null) {
            lines.add("OVER BUDGET: " + demand() + " > " + budget() + " by " + (demand() - budget())
                    + "; the largest pool size that fits is " + largestPoolThatFits());
        } else {
            lines.add("OVER BUDGET at tier 2: " + demand() + " > " + budget() + " by " + (demand() - budget())
                    + "; lower max_db_connections (or reserve_pool) or the number of poolers");
        }
        return lines;
    }
}
