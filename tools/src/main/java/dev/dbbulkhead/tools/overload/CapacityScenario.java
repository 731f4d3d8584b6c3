package dev.dbbulkhead.tools.overload;

import dev.dbbulkhead.testkit.LockSlots;
import dev.dbbulkhead.tools.support.Labels;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import javax.sql.DataSource;

/**
 * The overload scenarios whose capacity is set by the database itself, for the adaptive limits:
 * <ul>
 * <li>{@code s1-cpu}: each operation burns CPU in PostgreSQL (md5 over a calibrated {@code generate_series}, about
 * {@code cpuMillis} alone), so throughput peaks near the number of cores and latency grows past it;</li>
 * <li>{@code s2-locks}: each operation holds one of K advisory locks for {@code holdMillis}: capacity is exactly
 * K;</li>
 * <li>{@code s3-step}: the same with K = 8 for the first third of the run, 2 for the second, 8 again for the last;</li>
 * <li>{@code s4-mixed}: the K locks, 90 % of the operations holding one for 2 ms and 10 % for 100 ms;</li>
 * <li>{@code s5-two-workloads}: the K locks shared by an interactive workload (5 ms, 100 ms deadline) and a batch
 * one (50 ms, 5 s deadline), run by {@link TwoWorkloads};</li>
 * <li>{@code s6-burst}: bursts of callers arriving at once (every two deadlines), each operation
 * {@code pg_sleep(holdMillis)}: what a queue bounded by a count cuts, and a deadline absorbs;</li>
 * <li>{@code s7-shifting}: three kinds on the K locks, 2 ms, 20 ms (20 % of arrivals) and 200 ms, the slowest kind's
 * share stepping 2 % → 20 % → 2 % by thirds of the run (the fastest has the rest);</li>
 * <li>{@code s8-median-shift}: the same three kinds, the 200 ms one 2 % of arrivals, the 20 ms one 20 % → 60 % → 20 %:
 * in the middle third the median operation is a 20 ms one, which moves the learned caps.</li>
 * </ul>
 */
enum CapacityScenario {
    S1_CPU("s1-cpu"),
    S2_LOCKS("s2-locks"),
    S3_STEP("s3-step"),
    S4_MIXED("s4-mixed"),
    S5_TWO("s5-two-workloads"),
    S6_BURST("s6-burst"),
    S7_SHIFT("s7-shifting"),
    S8_MEDIAN("s8-median-shift");

    /** The kinds of operation of the mixed scenarios, at most. */
    static final int KINDS = 3;
    /** Their holds, ms: s4's two kinds are the first and the last. */
    static final int[] MIXED_HOLDS = {2, 20, 200};

    static final int STEP_HIGH = 8;
    static final int STEP_LOW = 2;

    final String label;

    CapacityScenario(String label) {
        this.label = label;
    }

    /** Whether its operations are of several kinds. */
    boolean mixed() {
        return this == S4_MIXED || this == S7_SHIFT || this == S8_MEDIAN;
    }

    static boolean isOne(String label) {
        return Labels.find(values(), s -> s.label, label).isPresent();
    }

    static CapacityScenario byLabel(String label) {
        return Labels.of(values(), s -> s.label, label, "scenario");
    }

    /** Whether {@code fraction} (0..1) of the run is in its middle third. */
    static boolean middle(double fraction) {
        return fraction >= 1 / 3.0 && fraction < 2 / 3.0;
    }

    /** What one operation runs, and its capacity over time. */
    record Work(CapacityScenario scenario, int md5Rounds, int locks, int holdMillis) {
        /** The SQL of an operation starting {@code fraction} (0..1) into the run; {@code u}: uniform in [0, 1). */
        String sql(double fraction, double u) {
            return switch (scenario) {
                case S1_CPU -> "SELECT count(md5(g::text)) FROM generate_series(1, " + md5Rounds + ") g";
                case S2_LOCKS, S5_TWO -> LockSlots.sql(locks, holdMillis);
                case S3_STEP -> LockSlots.sql(capacityAt(fraction), holdMillis);
                // The slow kind's text has a shape of its own (an alias), as a report's does: kinds learned from the
                // statement's shape can tell them apart when one call site sends both.
                case S4_MIXED ->
                    kind(fraction, u) == 0 ? LockSlots.sql(locks, 2) : LockSlots.sql(locks, 100) + " AS report";
                case S7_SHIFT, S8_MEDIAN -> {
                    int kind = kind(fraction, u);
                    yield LockSlots.sql(locks, MIXED_HOLDS[kind]) + (kind == 0 ? "" : " AS kind" + kind);
                }
                case S6_BURST -> "SELECT pg_sleep(" + holdMillis / 1000.0 + ")";
            };
        }

        /**
         * The kind of an operation drawn with {@code u} at {@code fraction} into the run, 0 the fastest: on s4-mixed 0
         * for a 2 ms one, 1 for a 100 ms one; on s7-shifting 0, 1, 2 for 2, 20, 200 ms; else 0.
         */
        int kind(double fraction, double u) {
            double[] shares = shares(fraction);
            double below = 0;
            for (int k = 0; k < shares.length; k++) {
                below += shares[k];
                if (u < below) {
                    return k;
                }
            }
            return shares.length - 1;
        }

        /** The arrival share of each kind at {@code fraction} into the run. */
        double[] shares(double fraction) {
            return switch (scenario) {
                case S4_MIXED -> new double[] {0.9, 0.1};
                case S7_SHIFT -> {
                    double slow = middle(fraction) ? 0.2 : 0.02;
                    yield new double[] {0.8 - slow, 0.2, slow};
                }
                case S8_MEDIAN -> {
                    double mid = middle(fraction) ? 0.6 : 0.2;
                    yield new double[] {0.98 - mid, mid, 0.02};
                }
                default -> new double[] {1};
            };
        }

        /** Each kind's hold alone, ms (the mixed scenarios). */
        int[] holds() {
            return switch (scenario) {
                case S4_MIXED -> new int[] {2, 100};
                case S7_SHIFT, S8_MEDIAN -> MIXED_HOLDS;
                default -> new int[] {holdMillis};
            };
        }

        /** How many kinds of operation it mixes. */
        int kinds() {
            return shares(0).length;
        }

        /** K at {@code fraction} into the run (the lock scenarios); 0 for the CPU one. */
        int capacityAt(double fraction) {
            return switch (scenario) {
                case S1_CPU, S6_BURST -> 0;
                case S2_LOCKS, S4_MIXED, S5_TWO, S7_SHIFT, S8_MEDIAN -> locks;
                case S3_STEP -> fraction < 1 / 3.0 || fraction >= 2 / 3.0 ? STEP_HIGH : STEP_LOW;
            };
        }
    }

    /** Prepares the database (the lock function) and calibrates the work. */
    Work prepare(DataSource pool, int locks, int holdMillis, double cpuMillis) throws SQLException {
        try (Connection c = pool.getConnection();
                var s = c.createStatement()) {
            LockSlots.install(c);
            int rounds = this == S1_CPU ? calibrate(s, cpuMillis) : 0;
            return new Work(this, rounds, locks, holdMillis);
        }
    }

    /** md5 rounds that take about {@code millis} alone: the median of a few runs, scaled, twice. */
    private static int calibrate(java.sql.Statement s, double millis) throws SQLException {
        int rounds = 10_000;
        for (int pass = 0; pass < 2; pass++) {
            long[] t = new long[7];
            for (int i = 0; i < t.length; i++) {
                long start = System.nanoTime();
                s.execute("SELECT count(md5(g::text)) FROM generate_series(1, " + rounds + ") g");
                t[i] = System.nanoTime() - start;
            }
            Arrays.sort(t);
            rounds = (int) Math.max(100, rounds * millis * 1e6 / t[t.length / 2]);
        }
        return rounds;
    }
}
