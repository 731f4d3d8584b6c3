package dev.dbbulkhead.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.DeadlineExceededException;
import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.Priority;
import dev.dbbulkhead.QueueTimeoutException;
import dev.dbbulkhead.WorkloadConfig;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The meters after real transactions on PostgreSQL. */
class DbBulkheadMetricsTest {
    private HikariDataSource pool;
    private SimpleMeterRegistry registry;
    private DbBulkheadMetrics metrics;

    @BeforeEach
    void start() {
        pool = TestDatabase.get().pool(4, Duration.ofSeconds(2));
        registry = new SimpleMeterRegistry();
        metrics = new DbBulkheadMetrics(registry, Tags.of("service", "orders"));
    }

    @AfterEach
    void stop() {
        pool.close();
    }

    private DbBulkhead gate(javax.sql.DataSource source, int b, int q) {
        return metrics.bind(DbBulkhead.builder(source)
                .name("orders-db")
                .listener(metrics)
                .workload("interactive", b, q)
                .build());
    }

    private double counter(String name, String tag, String value) {
        return registry.get(name)
                .tags("bulkhead", "orders-db", "workload", "interactive", tag, value)
                .counter()
                .count();
    }

    private long timerCount(String name) {
        return registry.get(name)
                .tags("bulkhead", "orders-db", "workload", "interactive", "service", "orders")
                .timer()
                .count();
    }

    private double gauge(String name) {
        return registry.get(name)
                .tags("bulkhead", "orders-db", "workload", "interactive")
                .gauge()
                .value();
    }

    /** A workload that learns kinds gets a row per kind in each kind gauge, listed as kinds come. */
    @Test
    void eachKindOfOperationHasItsGauges() throws Exception {
        var db = metrics.bind(DbBulkhead.builder(pool)
                .name("orders-db")
                .listener(metrics)
                .workload(WorkloadConfig.recommended("interactive", 2).toBuilder()
                        .kinds(true)
                        .build())
                .build());
        var w = db.workload("interactive");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            for (String kind : new String[] {"lookup", "report"}) {
                w.transaction(
                        dev.dbbulkhead.TransactionOptions.queueWait(Duration.ofSeconds(1))
                                .kind(kind),
                        c -> c.isValid(1));
            }
            for (String kind : new String[] {"lookup", "report"}) {
                assertThat(registry.find(BulkheadMeterNames.KIND_ARRIVALS)
                                .tags("workload", "interactive", "kind", kind)
                                .gauge())
                        .as(kind)
                        .isNotNull();
            }
        });
        // A cap, or -1 for none: whether two kinds that cost the same are capped depends on their measured holds,
        // which a loaded machine can set apart, so which is not asserted; one caller at a time is never refused for it.
        double cap = registry.get(BulkheadMeterNames.KIND_CAP)
                .tags("kind", "report", "service", "orders")
                .gauge()
                .value();
        assertThat(cap == -1 || cap >= 1).as("a cap of %s", cap).isTrue();
        assertThat(registry.get(BulkheadMeterNames.KIND_INSIDE)
                        .tags("kind", "lookup")
                        .gauge()
                        .value())
                .isZero();
        assertThat(counter(BulkheadMeterNames.REJECTIONS, "reason", "kind_capped"))
                .isZero();
    }

    /**
     * One call site (one lambda) that sends two shapes of statement: each shape gets its rows, named by its text, as a
     * kind of its own would.
     */
    @Test
    void shapesFromOneCallSiteHaveGaugesAsKindsDo() throws Exception {
        var db = metrics.bind(DbBulkhead.builder(pool)
                .name("orders-db")
                .listener(metrics)
                .workload(WorkloadConfig.recommended("interactive", 2))
                .build());
        var w = db.workload("interactive");
        String[] statements = {"SELECT 1 AS lookup", "SELECT 2 AS report"};
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            for (String sql : statements) {
                w.transaction(Duration.ofSeconds(1), c -> {
                    try (var s = c.createStatement()) {
                        return s.execute(sql);
                    }
                });
            }
            for (String shape : new String[] {"select ? as lookup", "select ? as report"}) {
                assertThat(registry.find(BulkheadMeterNames.KIND_ARRIVALS)
                                .tags("workload", "interactive", "kind", shape)
                                .gauge())
                        .as(shape)
                        .isNotNull();
            }
        });
        assertThat(w.kinds()).extracting(KindStats::name).contains("select ? as lookup", "select ? as report");
    }

    @Test
    void committedAndRolledBackOperationsAreCountedAndTimed() throws Exception {
        var gate = gate(pool, 2, 2);
        for (int i = 0; i < 3; i++) {
            gate.transaction(Duration.ZERO, c -> {
                try (var s = c.createStatement()) {
                    s.execute("SELECT pg_sleep(0.01)");
                }
                return null;
            });
        }
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    throw new SQLException("boom");
                }))
                .hasMessage("boom");
        assertThat(counter(BulkheadMeterNames.OPERATIONS, "outcome", "committed"))
                .isEqualTo(3);
        assertThat(counter(BulkheadMeterNames.OPERATIONS, "outcome", "rolled_back"))
                .isEqualTo(1);
        assertThat(timerCount(BulkheadMeterNames.PERMIT_WAIT)).isEqualTo(4);
        assertThat(timerCount(BulkheadMeterNames.CONNECTION_WAIT)).isEqualTo(4);
        assertThat(timerCount(BulkheadMeterNames.CONNECTION_USE)).isEqualTo(4);
        assertThat(timerCount(BulkheadMeterNames.WORK)).isEqualTo(4);
        var work = registry.get(BulkheadMeterNames.WORK).timer();
        assertThat(work.totalTime(TimeUnit.MILLISECONDS))
                .as("3 × pg_sleep(10 ms)")
                .isGreaterThanOrEqualTo(30);
        assertThat(registry.get(BulkheadMeterNames.CONNECTION_USE).timer().totalTime(TimeUnit.NANOSECONDS))
                .as("the connection is held at least as long as work runs")
                .isGreaterThanOrEqualTo(work.totalTime(TimeUnit.NANOSECONDS));
        assertThat(gauge(BulkheadMeterNames.PERMITS_MAX)).isEqualTo(2);
        assertThat(gauge(BulkheadMeterNames.SLOTS_MAX)).isEqualTo(4);
        assertThat(gauge(BulkheadMeterNames.PERMITS_AVAILABLE)).isEqualTo(2);
    }

    /** Sizing's hold time on every admission path: a lease (the starter's @DbWorkload methods) as transaction(). */
    @Test
    void thePermitHoldIsRecordedOnEveryPath() throws Exception {
        var gate = gate(pool, 2, 2);
        gate.transaction(Duration.ZERO, c -> {
            try (var s = c.createStatement()) {
                s.execute("SELECT pg_sleep(0.01)");
            }
            return null;
        });
        try (var lease = gate.acquire(Duration.ZERO);
                var c = pool.getConnection();
                var s = c.createStatement()) {
            s.execute("SELECT pg_sleep(0.01)");
        }
        var hold = registry.get(BulkheadMeterNames.PERMIT_HOLD).timer();
        assertThat(hold.count()).as("the transaction and the lease").isEqualTo(2);
        assertThat(hold.totalTime(TimeUnit.MILLISECONDS))
                .as("2 × pg_sleep(10 ms)")
                .isGreaterThanOrEqualTo(20);
    }

    @Test
    void eachRejectionReasonHasItsCounterAndTheGaugesShowWhatIsInside() throws Exception {
        var gate = gate(pool, 1, 1);
        var entered = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        var waiterThread = new AtomicReference<Thread>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<?> holder = executor.submit(() -> gate.transaction(Duration.ZERO, c -> {
                entered.countDown();
                awaitLatch(release);
                return null;
            }));
            assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
            // queue timeout
            assertThatThrownBy(() -> gate.transaction(Duration.ofMillis(20), c -> 1))
                    .isInstanceOf(QueueTimeoutException.class);
            // deadline already passed
            assertThatThrownBy(() -> gate.transaction(Deadline.in(Duration.ofMillis(-1)), c -> 1))
                    .isInstanceOf(DeadlineExceededException.class);
            // a waiter fills Q, then admission is full
            Future<Integer> waiter = executor.submit(() -> {
                waiterThread.set(Thread.currentThread());
                return gate.transaction(Duration.ofSeconds(30), c -> 1);
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> gauge(BulkheadMeterNames.PENDING) == 1);
            assertThat(gauge(BulkheadMeterNames.EXECUTING)).isEqualTo(1);
            assertThat(gauge(BulkheadMeterNames.SLOTS_AVAILABLE)).isZero();
            assertThatThrownBy(() -> gate.transaction(Duration.ofSeconds(1), c -> 1))
                    .isInstanceOf(AdmissionFullException.class);
            // interrupt the waiter
            waiterThread.get().interrupt();
            assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(InterruptedException.class);
            release.countDown();
            holder.get(10, TimeUnit.SECONDS);
        }
        assertThat(counter(BulkheadMeterNames.REJECTIONS, "reason", "queue_timeout"))
                .isEqualTo(1);
        assertThat(counter(BulkheadMeterNames.REJECTIONS, "reason", "deadline")).isEqualTo(1);
        assertThat(counter(BulkheadMeterNames.REJECTIONS, "reason", "admission_full"))
                .isEqualTo(1);
        assertThat(counter(BulkheadMeterNames.REJECTIONS, "reason", "interrupted"))
                .isEqualTo(1);
        assertThat(counter(BulkheadMeterNames.OPERATIONS, "outcome", "committed"))
                .isEqualTo(1);
        assertThat(gauge(BulkheadMeterNames.EXECUTING)).isZero();
        assertThat(gauge(BulkheadMeterNames.PENDING)).isZero();
    }

    @Test
    void outcomeUnknownAndNoConnectionAreCounted() {
        var faulty = new FaultyDataSource(pool).fail(FaultyDataSource.Point.COMMIT);
        var gate = gate(faulty, 1, 0);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> 1)).isInstanceOf(SQLException.class);
        faulty.fail(FaultyDataSource.Point.COMMIT, 0).fail(FaultyDataSource.Point.GET_CONNECTION);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> 1)).isInstanceOf(SQLException.class);
        assertThat(counter(BulkheadMeterNames.OPERATIONS, "outcome", "outcome_unknown"))
                .isEqualTo(1);
        assertThat(counter(BulkheadMeterNames.OPERATIONS, "outcome", "no_connection"))
                .isEqualTo(1);
        assertThat(timerCount(BulkheadMeterNames.CONNECTION_USE))
                .as("no hold without a connection")
                .isEqualTo(1);
    }

    @Test
    void predictiveWorkloadsShowTheirRecentHoldTimeAndExpectedWait() throws Exception {
        var gate = metrics.bind(DbBulkhead.builder(pool)
                .name("orders-db")
                .listener(metrics)
                .workload(WorkloadConfig.builder("interactive")
                        .concurrent(1)
                        .extraSlots(4)
                        .predictiveRejection(true)
                        .build())
                .build());
        for (int i = 0; i < 3; i++) {
            gate.transaction(Duration.ZERO, c -> {
                try (var s = c.createStatement()) {
                    s.execute("SELECT pg_sleep(0.05)");
                }
                return null;
            });
        }
        assertThat(gauge(BulkheadMeterNames.HOLD_RECENT)).as("seconds").isBetween(0.04, 2.0);
        assertThat(gauge(BulkheadMeterNames.WAIT_EXPECTED))
                .as("a permit is free")
                .isZero();
        try (var lease = gate.acquire(Duration.ZERO)) {
            assertThat(gauge(BulkheadMeterNames.WAIT_EXPECTED))
                    .as("behind the held permit: (0 + 1) × hold / 1")
                    .isEqualTo(gauge(BulkheadMeterNames.HOLD_RECENT));
        }
        assertThat(registry.find(BulkheadMeterNames.HOLD_RECENT)
                        .tags("workload", "other")
                        .gauge())
                .isNull();
        assertThat(gauge(BulkheadMeterNames.LIMIT)).as("fixed: L = B").isEqualTo(1);
        assertThat(registry.find(BulkheadMeterNames.ELASTIC_AT_FLOOR).gauge())
                .as("not elastic")
                .isNull();
        assertThat(registry.find(BulkheadMeterNames.LIMIT)
                        .tag(BulkheadMeterNames.PRIORITY, "regular")
                        .gauge())
                .as("every meter carries the workload's priority")
                .isNotNull();
    }

    @Test
    void anElasticWorkloadShowsWhenItIsHeldToItsFloor() {
        metrics.bind(DbBulkhead.builder(pool)
                .name("orders-db")
                .listener(metrics)
                .poolSize(4)
                .workload(WorkloadConfig.builder("interactive").concurrent(3).build())
                .workload(WorkloadConfig.builder("batch")
                        .concurrent(2)
                        .priority(Priority.ELASTIC)
                        .build())
                .build());
        assertThat(registry.find(BulkheadMeterNames.ELASTIC_AT_FLOOR)
                        .tag(BulkheadMeterNames.PRIORITY, "elastic")
                        .gauge()
                        .value())
                .as("elastic work starts at its floor")
                .isEqualTo(1);
    }

    @Test
    void workloadsUnderPrioritiesShowTheAllowanceTheObjectiveAndWhy() throws Exception {
        var gate = metrics.bind(DbBulkhead.builder(pool)
                .name("orders-db")
                .listener(metrics)
                .poolSize(4)
                .workload(WorkloadConfig.builder("interactive")
                        .concurrent(2)
                        .latencyObjective(Duration.ofSeconds(1))
                        .build())
                .workload(WorkloadConfig.builder("batch")
                        .concurrent(2)
                        .priority(Priority.ELASTIC)
                        .build())
                .build());
        assertThat(registry.find(BulkheadMeterNames.ELASTIC_ALLOWANCE)
                        .tag(BulkheadMeterNames.WORKLOAD, "batch")
                        .gauge()
                        .value())
                .as("elastic work starts at its floor")
                .isEqualTo(1);
        assertThat(registry.find(BulkheadMeterNames.ELASTIC_ALLOWANCE)
                        .tag(BulkheadMeterNames.WORKLOAD, "interactive")
                        .gauge())
                .as("a regular workload has no allowance")
                .isNull();
        assertThat(registry.find(BulkheadMeterNames.LATENCY_OBJECTIVE)
                        .tag(BulkheadMeterNames.WORKLOAD, "interactive")
                        .gauge()
                        .value())
                .as("the objective set, in seconds")
                .isEqualTo(1.0);
        // No regular operation: after a window the elastic workload is idle, given all the room (2 + 2 of 4).
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(registry.find(BulkheadMeterNames.SHARING_STATE)
                                .tags(BulkheadMeterNames.WORKLOAD, "batch", BulkheadMeterNames.STATE, "idle")
                                .gauge()
                                .value())
                        .isEqualTo(1));
        assertThat(registry.find(BulkheadMeterNames.SHARING_STATE)
                        .tag(BulkheadMeterNames.WORKLOAD, "batch")
                        .gauges())
                .as("one gauge per state, one of them 1")
                .hasSize(dev.dbbulkhead.Sharing.State.values().length)
                .filteredOn(g -> g.value() == 1)
                .hasSize(1);
        for (int i = 0; i < 120; i++) {
            gate.workload("interactive").transaction(Duration.ofSeconds(1), c -> c.isValid(1));
        }
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(registry.find(BulkheadMeterNames.LATENCY_P99)
                                .tag(BulkheadMeterNames.WORKLOAD, "interactive")
                                .gauge()
                                .value())
                        .as("the p99 of the last window, in seconds")
                        .isPositive()
                        .isLessThan(1.0));
    }

    @Test
    void adaptiveWorkloadsShowTheirLimitAndRecentHold() throws Exception {
        var gate = metrics.bind(DbBulkhead.builder(pool)
                .name("orders-db")
                .listener(metrics)
                .workload(WorkloadConfig.builder("interactive")
                        .concurrent(2)
                        .extraSlots(4)
                        .adaptiveLimitMin(1)
                        .build())
                .build());
        assertThat(gauge(BulkheadMeterNames.LIMIT)).as("starts at B").isEqualTo(2);
        assertThat(gauge(BulkheadMeterNames.HOLD_RECENT))
                .as("nothing measured yet")
                .isZero();
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (gauge(BulkheadMeterNames.HOLD_RECENT) == 0 && System.nanoTime() < until) {
            gate.transaction(Duration.ofSeconds(1), c -> {
                try (var s = c.createStatement()) {
                    s.execute("SELECT pg_sleep(0.002)");
                }
                return null;
            });
        }
        assertThat(gauge(BulkheadMeterNames.HOLD_RECENT))
                .as("seconds, after the first operation")
                .isBetween(0.001, 1.0);
        assertThat(gauge(BulkheadMeterNames.LIMIT))
                .isEqualTo(gate.defaultWorkload().limit());
    }

    @Test
    void leasesLeftOpenAreCountedAsSuspectedLeaksAndOnceTheirThreadEndedAsReclaimed() throws Exception {
        var gate = metrics.bind(DbBulkhead.builder(pool)
                .name("orders-db")
                .listener(metrics)
                .leakDetectionThreshold(Duration.ofMillis(50))
                .workload("interactive", 2, 0)
                .build());
        var w = gate.defaultWorkload();
        Thread t = Thread.ofVirtual().start(() -> {
            try {
                w.acquire(Duration.ofSeconds(1)); // never closed
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            // The thread lives on past the threshold: a lease whose thread ended first is reclaimed, not suspected.
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> counter(BulkheadMeterNames.LEAKS_SUSPECTED, "service", "orders") == 1);
        });
        t.join();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            System.gc();
            return registry.get(BulkheadMeterNames.RECLAIMED).functionCounter().count() == 1;
        });
        assertThat(counter(BulkheadMeterNames.LEAKS_SUSPECTED, "service", "orders"))
                .isEqualTo(1);
        assertThat(w.available()).isEqualTo(2);
    }

    private static void awaitLatch(CountDownLatch latch) throws SQLException {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new SQLException("test coordination timed out");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException(e);
        }
    }
}
