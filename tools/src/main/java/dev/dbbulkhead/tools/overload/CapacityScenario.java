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
 * <li>{@code s2-locks}: each operation holds one of K advisory locks for {@code holdMillis}: capacity is exactly K;</li>
 * <li>{@code s3-step}: the same with K = 8 for the first third of the run, 2 for the second, 8 again for the last;</li>
 * <li>{@code s4-mixed}: the K locks, 90 % of the operations holding one for 2 ms and 10 % for 100 ms;</li>
 * <li>{@code s5-two-workloads}: the K locks shared by an interactive workload (5 ms, 100 ms deadline) and a batch
 * one (50 ms, 5 s deadline), run by {@link TwoWorkloads};</li>
 * <li>{@code s6-burst}: bursts of callers arriving at once (every two deadlines), each operation
 * {@code pg_sleep(holdMillis)}: what a queue bounded by a count cuts, and a deadline absorbs.</li>
 * </ul>
 */
enum CapacityScenario {
    S1_CPU("s1-cpu"),
    S2_LOCKS("s2-locks"),
    S3_STEP("s3-step"),
    S4_MIXED("s4-mixed"),
    S5_TWO("s5-two-workloads"),
    S6_BURST("s6-burst");

    static final int STEP_HIGH = 8;
    static final int STEP_LOW = 2;

    final String label;

    CapacityScenario(String label) {
        this.label = label;
    }

    static boolean isOne(String label) {
        return Labels.find(values(), s -> s.label, label).isPresent();
    }

    static CapacityScenario byLabel(String label) {
        return Labels.of(values(), s -> s.label, label, "scenario");
    }

    /** What one operation runs, and its capacity over time. */
    record Work(CapacityScenario scenario, int md5Rounds, int locks, int holdMillis) {
        /** The SQL of an operation starting {@code fraction} (0..1) into the run; {@code u}: uniform in [0, 1). */
        String sql(double fraction, double u) {
            return switch (scenario) {
                case S1_CPU -> "SELECT count(md5(g::text)) FROM generate_series(1, " + md5Rounds + ") g";
                case S2_LOCKS, S5_TWO -> LockSlots.sql(locks, holdMillis);
                case S3_STEP -> LockSlots.sql(capacityAt(fraction), holdMillis);
                case S4_MIXED -> LockSlots.sql(locks, u < 0.9 ? 2 : 100);
                case S6_BURST -> "SELECT pg_sleep(" + holdMillis / 1000.0 + ")";
            };
        }

        /** The kind of an operation drawn with {@code u}: on s4-mixed 0 for a 2 ms one, 1 for a 100 ms one; else 0. */
        int kind(double u) {
            return scenario == S4_MIXED && u >= 0.9 ? 1 : 0;
        }

        /** K at {@code fraction} into the run (the lock scenarios); 0 for the CPU one. */
        int capacityAt(double fraction) {
            return switch (scenario) {
                case S1_CPU, S6_BURST -> 0;
                case S2_LOCKS, S4_MIXED, S5_TWO -> locks;
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
