package dev.dbbulkhead.tools.overload;

import java.util.Arrays;

/** How a pool of P connections is split into a workload per kind of operation, by hand (docs/sizing.md §5). */
final class Splits {
    private Splits() {}

    /**
     * sizing.md's rule, from each kind's hold alone ({@code holds}, ms) and share of arrivals ({@code shares}): with H
     * the hold of the median operation, a kind that holds more than 2 H gets {@code max(1, floor(P × share × H /
     * hold))}, the rule the learned kinds apply; the other kinds share the rest in proportion to their arrivals.
     */
    static int[] byRule(int[] holds, double[] shares, int pool) {
        double median = median(holds, shares);
        int[] split = new int[holds.length];
        double[] rest = new double[holds.length];
        int left = pool;
        for (int k = 0; k < holds.length; k++) {
            if (holds[k] > 2 * median) {
                split[k] = (int) Math.max(1, Math.floor(pool * shares[k] * median / holds[k]));
                left -= split[k];
            } else {
                rest[k] = shares[k];
            }
        }
        int[] others = byArrivals(rest, left);
        for (int k = 0; k < holds.length; k++) {
            split[k] += others[k];
        }
        return split;
    }

    /** The hold of the median operation: kinds in the order of their holds, weighted by their shares. */
    static double median(int[] holds, double[] shares) {
        Integer[] order = new Integer[holds.length];
        for (int k = 0; k < order.length; k++) {
            order[k] = k;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(holds[a], holds[b]));
        double total = Arrays.stream(shares).sum();
        double below = 0;
        for (int k : order) {
            below += shares[k];
            if (below >= total / 2) {
                return holds[k];
            }
        }
        return holds[order[order.length - 1]];
    }

    /**
     * {@code pool} split in proportion to {@code shares} (largest remainders), at least one for every kind with a
     * share; kinds without one get none.
     */
    static int[] byArrivals(double[] shares, int pool) {
        double total = Arrays.stream(shares).sum();
        int[] split = new int[shares.length];
        double[] remainder = new double[shares.length];
        int given = 0;
        for (int k = 0; k < shares.length; k++) {
            if (shares[k] > 0) {
                double exact = pool * shares[k] / total;
                split[k] = Math.max(1, (int) Math.floor(exact));
                remainder[k] = exact - Math.floor(exact);
                given += split[k];
            }
        }
        while (given < pool) {
            int best = 0;
            for (int k = 1; k < shares.length; k++) {
                best = remainder[k] > remainder[best] ? k : best;
            }
            split[best]++;
            remainder[best] = -1;
            given++;
        }
        return split;
    }
}
