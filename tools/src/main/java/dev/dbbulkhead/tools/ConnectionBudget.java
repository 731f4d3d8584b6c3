package dev.dbbulkhead.tools;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The fleet's connection arithmetic: {@code peak instances × pool size + other clients ≤ budget}, where the
 * budget is {@code max_connections − superuser_reserved_connections}. Immutable; {@link #of} checks every input.
 */
record ConnectionBudget(int instances, int surge, int poolSize, Map<String, Integer> others, int maxConnections,
        int reserved) {

    ConnectionBudget {
        others = Collections.unmodifiableMap(new LinkedHashMap<>(others)); // in the order given
    }

    static ConnectionBudget of(int instances, int surge, int poolSize, Map<String, Integer> others,
            int maxConnections, int reserved) {
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
            errors.add("reserved connections (" + reserved + ") must be fewer than max_connections ("
                    + maxConnections + ")");
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
        if (!errors.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", errors));
        }
        return new ConnectionBudget(instances, surge, poolSize, new LinkedHashMap<>(others), maxConnections,
                reserved);
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

    long demand() {
        return fleet() + otherClients();
    }

    int budget() {
        return maxConnections - reserved;
    }

    boolean fits() {
        return demand() <= budget();
    }

    /** The largest pool size per instance that fits, or 0 when even the other clients do not fit. */
    long largestPoolThatFits() {
        long room = budget() - otherClients();
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
        lines.add("demand              = " + fleet() + " + " + otherClients() + " = " + demand());
        lines.add("budget              = " + maxConnections + " (max_connections) − " + reserved
                + " (reserved) = " + budget());
        if (fits()) {
            lines.add("OK: " + demand() + " ≤ " + budget() + " (" + (budget() - demand()) + " to spare)");
        } else {
            lines.add("OVER BUDGET: " + demand() + " > " + budget() + " by " + (demand() - budget())
                    + "; the largest pool size that fits is " + largestPoolThatFits());
        }
        return lines;
    }
}
