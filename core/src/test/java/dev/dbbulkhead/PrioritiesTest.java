package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Workloads that share one database by priority, on the real PostgreSQL: an elastic (batch) workload beside a regular
 * (interactive) one under one shared limit. The shared limit holds under races, on platform and virtual threads;
 * elastic work grows into what regular work leaves, falls to its floor when regular callers wait, and never starves.
 * Every permit and connection is back after each test ({@link BarrierExtension}).
 */
class PrioritiesTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(6);

    private static DbBulkhead barrier() {
        return POOL.track(DbBulkhead.builder(POOL.get())
                .workload(WorkloadConfig.builder("interactive")
                        .concurrent(4)
                        .extraSlots(64)
                        .build())
                .workload(WorkloadConfig.builder("batch")
                        .concurrent(4)
                        .extraSlots(64)
                        .priority(Priority.ELASTIC)
                        .build())
                .build());
    }

    @ParameterizedTest(name = "virtual threads: {0}")
    @ValueSource(booleans = {false, true})
    void bothWorkloadsTogetherNeverHoldMoreThanTheSharedLimit(boolean virtual) throws Exception {
        var db = barrier();
        var inWork = new AtomicInteger();
        var most = new AtomicInteger();
        var done = new LongAdder();
        ThreadFactory threads =
                virtual ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        SqlWork<Integer> work = c -> {
            most.accumulateAndGet(inWork.incrementAndGet(), Math::max);
            try {
                return Db.count(c, "SELECT 1 FROM pg_sleep(0.002)");
            } finally {
                inWork.decrementAndGet();
            }
        };
        try (var interactive = new Callers(threads, 12, () -> {
                    db.workload("interactive").transaction(Duration.ofMillis(200), work);
                    done.increment();
                });
                var batch = new Callers(threads, 12, () -> {
                    db.workload("batch").transaction(Duration.ofMillis(200), work);
                    done.increment();
                })) {
            await().atMost(Duration.ofSeconds(30)).until(() -> done.sum() >= 2_000);
        }
        assertThat(most.get())
                .as("transactions in work at once, of both workloads")
                .isLessThanOrEqualTo(6)
                .isGreaterThanOrEqualTo(4);
    }

    @Test
    void elasticWorkGrowsIntoWhatRegularWorkLeavesAndYieldsWhenRegularCallersWait() throws Exception {
        var db = barrier();
        Workload interactive = db.workload("interactive");
        Workload batch = db.workload("batch");
        assertThat(batch.limit()).as("elastic starts at its floor").isEqualTo(1);
        var batchDone = new LongAdder();
        ThreadFactory threads = Thread.ofVirtual().factory();
        try (var batchCallers = new Callers(threads, 8, () -> {
            batch.transaction(Duration.ofSeconds(1), c -> Db.count(c, "SELECT 1 FROM pg_sleep(0.01)"));
            batchDone.increment();
        })) {
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(batch.limit())
                            .as("alone, it grows by one per window into the room regular work leaves")
                            .isGreaterThanOrEqualTo(4));
            try (var interactiveCallers = new Callers(
                    threads,
                    16,
                    () -> interactive.transaction(
                            Duration.ofSeconds(1), c -> Db.count(c, "SELECT 1 FROM pg_sleep(0.01)")))) {
                await().atMost(Duration.ofSeconds(10))
                        .untilAsserted(() -> assertThat(batch.limit())
                                .as("regular callers wait: the elastic allowance halves to its floor")
                                .isEqualTo(1));
                await().atMost(Duration.ofSeconds(10))
                        .untilAsserted(() -> assertThat(interactive.limit())
                                .as("regular work gets its whole B back")
                                .isEqualTo(4));
                long before = batchDone.sum();
                await().atMost(Duration.ofSeconds(10)).until(() -> batchDone.sum() >= before + 20);
            }
        }
    }

    @Test
    void anElasticWorkloadNeedsTheSharedLimitAndRoomForItsFloor() {
        var noPool = new dev.dbbulkhead.testkit.NoopDataSource();
        var elastic = WorkloadConfig.builder("batch")
                .concurrent(2)
                .priority(Priority.ELASTIC)
                .build();
        assertThat(org.assertj.core.api.Assertions.catchThrowableOfType(
                                InvalidSettingException.class,
                                () -> DbBulkhead.builder(noPool)
                                        .workload("interactive", 4, 0)
                                        .workload(elastic)
                                        .build())
                        .setting())
                .isEqualTo(Setting.SHARED_LIMIT);
        var tooSmall = org.assertj.core.api.Assertions.catchThrowableOfType(
                InvalidSettingException.class,
                () -> DbBulkhead.builder(noPool)
                        .workload("interactive", 4, 0)
                        .workload(elastic)
                        .sharedLimit(4)
                        .build());
        assertThat(tooSmall)
                .hasMessageContaining("sharedLimit of db-bulkhead 'db' must be at least the regular "
                        + "workloads' concurrent added up and one for each elastic workload, 4 + 1");
        DbBulkhead.builder(noPool)
                .workload("interactive", 4, 0)
                .workload(elastic)
                .sharedLimit(5)
                .build();
    }

    @Test
    void aSharedLimitBelowTheWorkloadsIsBlamedOnTheSharedLimit() {
        var noPool = new dev.dbbulkhead.testkit.NoopDataSource();
        var refused = org.assertj.core.api.Assertions.catchThrowableOfType(
                InvalidSettingException.class,
                () -> DbBulkhead.builder(noPool)
                        .workload("a", 2, 1)
                        .sharedLimit(1)
                        .build());
        assertThat(refused.setting()).isEqualTo(Setting.SHARED_LIMIT);
        assertThat(refused.getMessage()).contains("sharedLimit").doesNotContain("poolSize");
    }
}
