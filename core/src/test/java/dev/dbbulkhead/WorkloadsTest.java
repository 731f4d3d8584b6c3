package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.NoopDataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Named workloads with their own budgets over one pool. */
class WorkloadsTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(8);

    private static HikariDataSource pool() {
        return POOL.get();
    }

    @Test
    void eachWorkloadHasItsOwnBudgetAndTheFirstIsTheDefault() {
        var gate = POOL.track(DbBulkhead.builder(pool())
                .name("orders")
                .workload("interactive", 5, 10)
                .workload("batch", 2, 0)
                .build());
        assertThat(gate.defaultWorkload().name()).isEqualTo("interactive");
        assertThat(gate.available()).isEqualTo(5);
        assertThat(gate.availableSlots()).isEqualTo(15);
        assertThat(gate.workload("batch").available()).isEqualTo(2);
        assertThat(gate.workload("batch").availableSlots()).isEqualTo(2);
        assertThat(gate.workloads()).extracting(Workload::name).containsExactly("interactive", "batch");
        assertThat(gate.name()).isEqualTo("orders");
    }

    @Test
    void anUnknownWorkloadIsNamedWithTheKnownOnes() {
        var gate = POOL.track(
                DbBulkhead.builder(pool()).workload("interactive", 1, 0).build());
        assertThatThrownBy(() -> gate.workload("reports"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown workload 'reports'")
                .hasMessageContaining("[interactive]");
    }

    @Test
    void aDuplicateWorkloadIsRejected() {
        assertThatThrownBy(
                        () -> DbBulkhead.builder(pool()).workload("batch", 1, 0).workload("batch", 2, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workload 'batch': workloadName must be unique in db-bulkhead 'db': it is declared twice, "
                        + "was 'batch'");
    }

    @Test
    void badWorkloadNumbersNameTheWorkloadTheFieldAndTheValue() {
        assertThatThrownBy(() -> DbBulkhead.builder(pool()).workload("batch", 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workload 'batch': concurrent must be >= 1, was 0");
        assertThatThrownBy(() -> DbBulkhead.builder(pool()).workload("batch", 1, -3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workload 'batch': extraSlots must be >= 0, was -3");
        assertThatThrownBy(() -> DbBulkhead.builder(pool()).workload(" ", 1, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("workloadName must not be blank, was ' '");
        assertThatThrownBy(() -> DbBulkhead.builder(pool()).workload(null, 1, 0))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("workload name must not be null");
    }

    @Test
    void aBuilderWithoutWorkloadsIsRefused() {
        assertThatThrownBy(() -> POOL.track(DbBulkhead.builder(pool()).build()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("declare at least one workload");
    }

    @Test
    void badBuilderSettingsNameTheFieldAndTheValue() {
        assertThatThrownBy(() -> DbBulkhead.builder(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("source must not be null");
        assertThatThrownBy(() -> DbBulkhead.builder(pool()).poolSize(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("poolSize must be >= 1, was 0");
        assertThatThrownBy(() -> DbBulkhead.builder(pool()).name(""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("name must not be blank, was ''");
        assertThatThrownBy(() -> DbBulkhead.builder(pool()).listener(null))
                .isInstanceOf(NullPointerException.class)
                .hasMessage("listener must not be null");
        assertThatThrownBy(() -> DbBulkhead.builder(pool()).sizingHint(Duration.ofMillis(50), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("sizingHintHoldTime must be > 0, was PT0S");
    }

    @Test
    void workloadsAddingUpToMoreThanTheHikariPoolSizeAreRefused() {
        assertThatThrownBy(() -> POOL.track(DbBulkhead.builder(pool())
                        .workload("interactive", 6, 10)
                        .workload("batch", 3, 0)
                        .build()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("poolSize of db-bulkhead 'db' must be at least what the workloads' concurrent add up to, 9 "
                        + "[interactive=6, batch=3] (lower them or use separate pools), was 8");
        POOL.track(DbBulkhead.builder(pool())
                .workload("interactive", 6, 10)
                .workload("batch", 2, 0)
                .build());
    }

    @Test
    void workloadsAddingUpToMoreThanAGivenPoolSizeAreRefused() {
        var notHikari = new dev.dbbulkhead.testkit.FaultyDataSource(pool());
        assertThatThrownBy(() -> DbBulkhead.builder(notHikari)
                        .poolSize(4)
                        .workload("a", 3, 0)
                        .workload("b", 2, 0)
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("add up to, 5 [a=3, b=2]")
                .hasMessageEndingWith("was 4");
        // A wrapper that unwraps to the HikariDataSource: its maximumPoolSize is read through the wrapper.
        assertThatThrownBy(() -> DbBulkhead.builder(notHikari)
                        .workload("a", 30, 0)
                        .workload("b", 20, 0)
                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("add up to, 50 [a=30, b=20]")
                .hasMessageEndingWith("was 8");
        // Unknown pool size: nothing to check against, and build() logs one warning saying so.
        List<String> warnings;
        try (var logs = new Logs(Level.WARNING)) {
            DbBulkhead.builder(new NoopDataSource())
                    .workload("a", 30, 0)
                    .workload("b", 20, 0)
                    .build();
            warnings = logs.messages();
        }
        assertThat(warnings)
                .singleElement()
                .asString()
                .contains("cannot tell the pool size of")
                .contains("NoopDataSource")
                .contains("[a=30, b=20]")
                .contains("poolSize(...)");
    }

    @Test
    void theArticlesConstructorRunsWithBAboveThePoolSizeAndLogsOneWarningNamingTheValues() {
        List<String> warnings;
        try (var logs = new Logs(Level.WARNING)) {
            var gate = POOL.bulkhead(16, 32); // the pool has 8 connections
            assertThat(gate.available()).isEqualTo(16);
            warnings = logs.messages();
        }
        assertThat(warnings)
                .singleElement()
                .asString()
                .contains(
                        "concurrent 16 is more than the pool size 8",
                        "HikariDataSource",
                        "the 8 operations beyond the pool wait inside it",
                        "lower concurrent to at most 8");
    }

    @Test
    void theQueueRuleOfThumb() {
        assertThat(Sizing.usefulExtraSlots(4, Duration.ofMillis(50), Duration.ofMillis(22)))
                .isEqualTo(9);
        assertThat(Sizing.usefulExtraSlots(16, Duration.ofMillis(20), Duration.ofMillis(5)))
                .isEqualTo(64);
        assertThat(Sizing.usefulExtraSlots(1, Duration.ZERO, Duration.ofMillis(5)))
                .isZero();
        assertThatThrownBy(() -> Sizing.usefulExtraSlots(0, Duration.ZERO, Duration.ofMillis(5)))
                .hasMessage("concurrent must be >= 1, was 0");
    }

    /**
     * A batch workload flooded far past its budget never takes capacity from the interactive one: every
     * interactive call succeeds, and neither workload ever has more than its B inside work.
     */
    @Test
    void aBatchWorkloadAtItsLimitNeverTakesCapacityFromTheInteractiveOne() throws Exception {
        var gate = POOL.track(DbBulkhead.builder(pool())
                .workload("interactive", 4, 8)
                .workload("batch", 2, 0)
                .build());
        var batch = gate.workload("batch");
        var interactive = gate.workload("interactive");
        var inBatch = new AtomicInteger();
        var maxBatch = new AtomicInteger();
        var inInteractive = new AtomicInteger();
        var maxInteractive = new AtomicInteger();
        var batchRejected = new LongAdder();
        var batchDone = new LongAdder();
        var stop = new java.util.concurrent.atomic.AtomicBoolean();
        var interactiveCalls = new ArrayList<Future<Integer>>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            // 20 batch callers, each calling again as soon as it is done or rejected: 10x the batch budget,
            // for as long as the interactive calls last.
            var batchLoops = new ArrayList<Future<?>>();
            for (int i = 0; i < 20; i++) {
                batchLoops.add(executor.submit(() -> {
                    while (!stop.get()) {
                        try {
                            batch.transaction(Duration.ZERO, c -> sleepCounted(c, 0.02, inBatch, maxBatch));
                            batchDone.increment();
                        } catch (RejectedExecutionException e) {
                            batchRejected.increment();
                            // Pace the offered load. A rejected caller that spins on Thread.yield() starves
                            // virtual threads unparked by platform threads (HikariCP's connection hand-off)
                            // of carriers on a 2-core machine: seen here, not a barrier property.
                            LockSupport.parkNanos(200_000);
                        }
                    }
                    return null;
                }));
            }
            try {
                for (int i = 0; i < 60; i++) {
                    interactiveCalls.add(executor.submit(() -> interactive.transaction(
                            Duration.ofSeconds(5), c -> sleepCounted(c, 0.005, inInteractive, maxInteractive))));
                    if (i % 4 == 3) {
                        interactiveCalls.getLast().get(10, TimeUnit.SECONDS);
                    }
                }
                for (var f : interactiveCalls) {
                    assertThat(f.get(30, TimeUnit.SECONDS)).isEqualTo(1);
                }
            } finally {
                stop.set(true);
            }
            for (var f : batchLoops) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
        assertThat(batchRejected.sum()).as("the batch workload was saturated").isPositive();
        assertThat(batchDone.sum())
                .as("the batch workload kept working at its own budget")
                .isPositive();
        assertThat(maxBatch.get()).isBetween(1, 2);
        assertThat(maxInteractive.get()).isBetween(1, 4);
        Db.assertAllReleased(batch, pool());
        Db.assertAllReleased(interactive, pool());
    }

    private static int sleepCounted(java.sql.Connection c, double seconds, AtomicInteger in, AtomicInteger max)
            throws java.sql.SQLException {
        max.accumulateAndGet(in.incrementAndGet(), Math::max);
        try (var s = c.createStatement()) {
            s.execute("SELECT pg_sleep(" + seconds + ")");
            return 1;
        } finally {
            in.decrementAndGet();
        }
    }

    @Test
    void onPostgreSqlTheBarrierKeepsEverythingAndSaysSoBeforeAnyTransaction() throws Exception {
        var gate = POOL.track(new DbBulkhead(POOL.get(), 1, 0));
        assertThat(gate.databaseLimits()).isEmpty();
    }

    /**
     * Borrowing on PostgreSQL, with virtual threads: a flood on one workload uses the permits an idle one leaves (more
     * than its B in transactions at once), the idle one's caller is served while the flood goes on (its permits come
     * back as borrowed operations end), never more than the shared limit in transactions, every permit back.
     */
    @Test
    void aWorkloadBorrowsWhatAnIdleOneLeavesAndGivesItBackWhileItsCallersAreServed() throws Exception {
        var db = POOL.track(DbBulkhead.builder(POOL.get())
                .workload(WorkloadConfig.recommended("flooded", 2))
                .workload(WorkloadConfig.recommended("lender", 2))
                .build());
        Workload flooded = db.workload("flooded");
        Workload lender = db.workload("lender");
        var inside = new AtomicInteger();
        var most = new AtomicInteger();
        var mostFlooded = new AtomicInteger();
        var floodedInside = new AtomicInteger();
        var stop = new java.util.concurrent.atomic.AtomicBoolean();
        SqlWork<Integer> hold = c -> {
            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                return Db.count(c, "SELECT 1 FROM pg_sleep(0.02)");
            } finally {
                inside.decrementAndGet();
            }
        };
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            var loops = new ArrayList<Future<?>>();
            for (int i = 0; i < 6; i++) {
                loops.add(threads.submit(() -> {
                    while (!stop.get()) {
                        try {
                            flooded.transaction(Duration.ofSeconds(5), c -> {
                                mostFlooded.accumulateAndGet(floodedInside.incrementAndGet(), Math::max);
                                try {
                                    return hold.run(c);
                                } finally {
                                    floodedInside.decrementAndGet();
                                }
                            });
                        } catch (RejectedExecutionException refused) {
                            LockSupport.parkNanos(1_000_000);
                        }
                    }
                    return null;
                }));
            }
            try {
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(20))
                        .until(() -> mostFlooded.get() > flooded.concurrent());
                for (int i = 0; i < 5; i++) { // the lender's callers, one at a time, while the flood goes on
                    assertThat(lender.transaction(Duration.ofSeconds(5), hold)).isEqualTo(1);
                }
                assertThat(loops).allSatisfy(f -> assertThat(f).isNotDone());
            } finally {
                stop.set(true);
            }
            for (var f : loops) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
        assertThat(mostFlooded.get())
                .as("the flooded workload beyond its B, on borrowed permits")
                .isGreaterThan(2);
        assertThat(most.get()).as("in transactions at once, both workloads").isLessThanOrEqualTo(4);
        assertThat(flooded.executing() + lender.executing()).isZero();
    }
}
