package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource.Point;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Thousands of operations from virtual threads with random workloads, deadlines, interrupts, cancellations,
 * failing callbacks, injected JDBC faults and real server faults ({@code pg_terminate_backend} of busy backends,
 * statement and lock timeouts on contended rows). Every operation inserts a row with its own id, then the run
 * checks: all permits back, no active connection, each committed id present exactly once, each id that failed
 * before commit absent, and each outcome-unknown id counted as present or absent.
 *
 * <p>The seed fixes the mix of operations (kinds, workloads, deadlines, which are cancelled or interrupted) and
 * the sequence of fault decisions; which operation meets which fault still depends on scheduling. Rerun with
 * {@code -Dchaos.seed=N}; length {@code -Dchaos.operations=N} (the {@code soak} profile runs a long one).
 */
class ChaosTest {
    enum Reported {
        COMMITTED,
        FAILED_BEFORE_COMMIT,
        OUTCOME_UNKNOWN
    }

    @Test
    void chaos() throws Exception {
        long seed = Long.getLong("chaos.seed", System.nanoTime());
        int operations = Integer.getInteger("chaos.operations", 3000);
        System.out.println(
                "chaos: seed=" + seed + " operations=" + operations + " (rerun with -Dchaos.seed=" + seed + ")");
        var report = run(seed, operations);
        System.out.println("chaos: " + report);
    }

    record Report(
            long seed,
            int operations,
            Map<Reported, Long> outcomes,
            Map<String, Long> failures,
            Map<Point, Integer> injected,
            long terminated,
            long unknownPresent,
            long unknownAbsent) {}

    static Report run(long seed, int operations) throws Exception {
        var random = new Random(seed);
        try (Connection setup = Db.server().connect();
                var s = setup.createStatement()) {
            s.execute("DROP TABLE IF EXISTS chaos_ops");
            s.execute("CREATE TABLE chaos_ops (id bigint PRIMARY KEY, workload text)");
            s.execute("DROP TABLE IF EXISTS chaos_hot");
            s.execute("CREATE TABLE chaos_hot (id int PRIMARY KEY, n bigint)");
            s.execute("INSERT INTO chaos_hot SELECT g, 0 FROM generate_series(1, 3) g");
        }
        try (HikariDataSource pool = Db.server().pool(6, Duration.ofMillis(500), "chaos")) {
            var faulty = new FaultyDataSource(pool, seed)
                    .fail(Point.GET_CONNECTION, 0.02)
                    .fail(Point.SET_AUTO_COMMIT, 0.01)
                    .fail(Point.COMMIT, 0.02)
                    .fail(Point.COMMIT_AFTER, 0.02)
                    .fail(Point.ROLLBACK, 0.05)
                    .fail(Point.CLOSE, 0.02);
            var gate = DbBulkhead.builder(faulty)
                    .name("chaos")
                    .poolSize(6)
                    .workload("interactive", 3, 6)
                    .workload("batch", 2, 2)
                    .build();
            var reported = new ConcurrentHashMap<Long, Reported>();
            var failures = new ConcurrentHashMap<String, LongAdder>();
            var terminated = new LongAdder();
            var stop = new AtomicBoolean();
            Thread killer =
                    Thread.ofPlatform().name("chaos-killer").start(() -> killBusyBackends(seed, stop, terminated));
            var futures = new ArrayList<Future<?>>();
            var threads = new ConcurrentHashMap<Long, Thread>();
            try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < operations; i++) {
                    long id = i + 1L;
                    int kind = random.nextInt(12);
                    boolean batch = random.nextInt(4) == 0;
                    boolean withDeadline = random.nextBoolean();
                    long budgetMillis = 20 + random.nextInt(400);
                    futures.add(executor.submit(() -> {
                        threads.put(id, Thread.currentThread());
                        try {
                            Workload w = gate.workload(batch ? "batch" : "interactive");
                            SqlWork<Integer> work = c -> chaosWork(c, id, kind, w.name());
                            if (withDeadline) {
                                w.transaction(Deadline.in(Duration.ofMillis(budgetMillis)), work);
                            } else {
                                w.transaction(Duration.ofMillis(budgetMillis / 4), work);
                            }
                            reported.put(id, Reported.COMMITTED);
                        } catch (CommitOutcomeUnknownException e) {
                            reported.put(id, Reported.OUTCOME_UNKNOWN);
                        } catch (SQLException | RuntimeException | InterruptedException | Error e) {
                            reported.put(id, Reported.FAILED_BEFORE_COMMIT);
                            failures.computeIfAbsent(name(e), k -> new LongAdder())
                                    .increment();
                        } finally {
                            threads.remove(id);
                        }
                        return null;
                    }));
                    int chaos = random.nextInt(40);
                    if (chaos == 0) {
                        futures.getLast().cancel(true);
                    } else if (chaos == 1) {
                        Thread t = threads.get(id - random.nextInt(5));
                        if (t != null) {
                            t.interrupt();
                        }
                    }
                    // About 800 arrivals a second, some 2x what the budgets serve: rejections, queueing and
                    // completions all happen.
                    LockSupport.parkNanos(1_250_000);
                }
            } finally {
                stop.set(true);
                killer.join();
            }
            // A task cancelled before it started never ran: nothing to report, and it must have written nothing.
            long cancelledBeforeStart = 0;
            for (int i = 0; i < operations; i++) {
                long id = i + 1L;
                if (!reported.containsKey(id)) {
                    assertThat(futures.get(i).isCancelled())
                            .as("seed %d: operation %d never reported", seed, id)
                            .isTrue();
                    reported.put(id, Reported.FAILED_BEFORE_COMMIT);
                    failures.computeIfAbsent("cancelled before start", k -> new LongAdder())
                            .increment();
                    cancelledBeforeStart++;
                }
            }
            assertThat(reported)
                    .as(
                            "seed %d: every operation accounted for (%d cancelled before start)",
                            seed, cancelledBeforeStart)
                    .hasSize(operations);
            for (Workload w : gate.workloads()) {
                Db.assertAllReleased(w, pool);
            }
            assertThat(faulty.openConnections()).as("seed %d", seed).isZero();
            return verifyRows(seed, operations, reported, failures, faulty, terminated.sum());
        }
    }

    private static String name(Throwable e) {
        if (e instanceof BulkheadRejectedException r) {
            return "rejected " + r.reason();
        }
        if (e instanceof SQLException sql) {
            return "SQLState " + sql.getSQLState();
        }
        return e.getClass().getSimpleName();
    }

    private static Integer chaosWork(Connection c, long id, int kind, String workload) throws SQLException {
        try (var insert = c.prepareStatement("INSERT INTO chaos_ops (id, workload) VALUES (?, ?)")) {
            insert.setLong(1, id);
            insert.setString(2, workload);
            insert.executeUpdate();
        }
        try (var s = c.createStatement()) {
            switch (kind) {
                case 0 -> throw new SQLException("work failed after its insert");
                case 1 -> throw new IllegalStateException("bug in work after its insert");
                case 2, 3 -> {
                    // Contended rows: a short lock timeout turns long lock waits into 55P03.
                    s.execute("SET LOCAL lock_timeout = '50ms'");
                    s.execute("UPDATE chaos_hot SET n = n + 1 WHERE id = " + (1 + id % 3));
                    s.execute("SELECT pg_sleep(0.005)");
                }
                case 4 -> {
                    s.execute("SET LOCAL statement_timeout = '15ms'");
                    s.execute("SELECT pg_sleep(0.05)"); // 57014
                }
                case 5 -> s.execute("SELECT pg_sleep(0.03)");
                default -> s.execute("SELECT pg_sleep(0.002)");
            }
        }
        return 1;
    }

    /** From its own connection, terminates a random busy backend of the pool every 20–80 ms. */
    private static void killBusyBackends(long seed, AtomicBoolean stop, LongAdder terminated) {
        var random = new Random(seed ^ 0x5DEECE66DL);
        try (Connection admin = Db.server().connect()) {
            while (!stop.get()) {
                LockSupport.parkNanos(Duration.ofMillis(20 + random.nextInt(60)).toNanos());
                try (var s = admin.createStatement();
                        var r = s.executeQuery("SELECT pg_terminate_backend(pid) "
                                + "FROM pg_stat_activity WHERE application_name = 'chaos' AND state <> 'idle' "
                                + "ORDER BY random() LIMIT 1")) {
                    while (r.next()) {
                        if (r.getBoolean(1)) {
                            terminated.increment();
                        }
                    }
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("the chaos killer lost its own connection", e);
        }
    }

    private static Report verifyRows(
            long seed,
            int operations,
            Map<Long, Reported> reported,
            Map<String, LongAdder> failures,
            FaultyDataSource faulty,
            long terminated)
            throws SQLException {
        Set<Long> present = ConcurrentHashMap.newKeySet();
        try (Connection c = Db.server().connect();
                var s = c.createStatement();
                var r = s.executeQuery("SELECT id, count(*) FROM chaos_ops GROUP BY id")) {
            while (r.next()) {
                assertThat(r.getLong(2))
                        .as("seed %d: rows of id %d", seed, r.getLong(1))
                        .isEqualTo(1);
                present.add(r.getLong(1));
            }
        }
        var outcomes = new EnumMap<Reported, Long>(Reported.class);
        long unknownPresent = 0;
        long unknownAbsent = 0;
        List<Long> wrong = new ArrayList<>();
        for (var e : reported.entrySet()) {
            outcomes.merge(e.getValue(), 1L, Long::sum);
            boolean there = present.contains(e.getKey());
            switch (e.getValue()) {
                case COMMITTED -> {
                    if (!there) {
                        wrong.add(e.getKey());
                    }
                }
                case FAILED_BEFORE_COMMIT -> {
                    if (there) {
                        wrong.add(e.getKey());
                    }
                }
                case OUTCOME_UNKNOWN -> {
                    if (there) {
                        unknownPresent++;
                    } else {
                        unknownAbsent++;
                    }
                }
            }
        }
        assertThat(wrong)
                .as("seed %d: ids whose row contradicts what their caller was told", seed)
                .isEmpty();
        assertThat(outcomes.getOrDefault(Reported.COMMITTED, 0L))
                .as("seed %d: some work got through", seed)
                .isPositive();
        var injected = new EnumMap<Point, Integer>(Point.class);
        for (Point p : Point.values()) {
            injected.put(p, faulty.injected(p));
        }
        var failureCounts = new TreeMap<String, Long>();
        failures.forEach((k, v) -> failureCounts.put(k, v.sum()));
        return new Report(
                seed, operations, outcomes, failureCounts, injected, terminated, unknownPresent, unknownAbsent);
    }
}
