package dev.dbbulkhead.tools.fleet;

import java.util.Arrays;
import java.util.stream.Collectors;

/** Where the fleet's instances connect, and how their pools and limits are sized. */
enum FleetTopology {
    DIRECT_OVER_BUDGET("direct-over-budget", false, false, false),
    DIRECT_WITHIN_BUDGET("direct-within-budget", false, true, false),
    PGBOUNCER("pgbouncer", true, false, false),
    DIRECT_WITHIN_BUDGET_ADAPTIVE("direct-within-budget-adaptive", false, true, true),
    PGBOUNCER_ADAPTIVE("pgbouncer-adaptive", true, false, true);

    /** The name on the command line and in the report. */
    final String label;
    /** Through PgBouncer, rather than straight to PostgreSQL. */
    final boolean viaPgBouncer;
    /** Each pool sized so that the peak of the deploy fits the connection limit. */
    final boolean withinBudget;
    /** Every instance's limit adaptive (B = its pool). */
    final boolean adaptive;

    FleetTopology(String label, boolean viaPgBouncer, boolean withinBudget, boolean adaptive) {
        this.label = label;
        this.viaPgBouncer = viaPgBouncer;
        this.withinBudget = withinBudget;
        this.adaptive = adaptive;
    }

    /** The topology named {@code label}; an error naming the known ones otherwise. */
    static FleetTopology of(String label) {
        for (FleetTopology t : values()) {
            if (t.label.equals(label)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown topology '" + label + "'; known: "
                + Arrays.stream(values()).map(t -> t.label).collect(Collectors.joining(", ")));
    }
}
