package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
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

    /** Interactive (B 4, its objective learned) beside batch (B 4, elastic), pool 6. */
    private static DbBulkhead barrier() {
        return barrier(null);
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

    /** Interactive (B 4, its objective set, or learned when null) beside batch (B 4, elastic), pool 6. */
    private static DbBulkhead barrier(@Nullable Duration objective) {
        var interactive = WorkloadConfig.builder("interactive").concurrent(4).extraSlots(64);
        if (objective != null) {
            interactive.latencyObjective(objective);
        }
        return POOL.track(DbBulkhead.builder(POOL.get())
                .workload(interactive.build())
                .workload(WorkloadConfig.builder("batch")
                        .concurrent(4)
                        .extraSlots(64)
                        .priority(Priority.ELASTIC)
                        .build())
                .build());
    }

    private static Callers sleepers(Workload workload, int callers, String seconds, LongAdder done) {
        return new Callers(Thread.ofVirtual().factory(), callers, () -> {
            workload.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1 FROM pg_sleep(" + seconds + ")"));
            done.increment();
        });
    }

    @Test
    void theElasticAllowanceGrowsWhileTheRegularObjectiveIsMetUpToTheHeadroom() throws Exception {
        var db = barrier(Duration.ofSeconds(2)); // met by 1 ms operations, whatever the machine's load
        Workload interactive = db.workload("interactive");
        Workload batch = db.workload("batch");
        assertThat(batch.limit()).as("elastic starts at its floor").isEqualTo(1);
        var batchDone = new LongAdder();
        var interactiveDone = new LongAdder();
        try (var batchCallers = sleepers(batch, 8, "0.01", batchDone)) {
            await().atMost(Duration.ofSeconds(20))
                    .untilAsserted(() -> assertThat(batch.limit())
                            .as("no regular work: all the room at once, its B")
                            .isEqualTo(4));
            assertThat(batch.sharing().orElseThrow().state()).isEqualTo(Sharing.State.IDLE);
            try (var interactiveCallers = sleepers(interactive, 2, "0.001", interactiveDone)) {
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    var sharing = batch.sharing().orElseThrow();
                    assertThat(sharing.state())
                            .as("regular work meets its objective; one more would leave less than its headroom")
                            .isIn(Sharing.State.NO_ROOM, Sharing.State.OBJECTIVE_MET);
                    assertThat(sharing.headroom())
                            .as("two regular callers' peak, and one")
                            .isBetween(2, 3);
                    assertThat(batch.limit())
                            .as("the shared limit less the headroom")
                            .isEqualTo(6 - sharing.headroom());
                });
                var regular = interactive.sharing().orElseThrow();
                assertThat(regular.objective()).isEqualTo(Duration.ofSeconds(2));
                assertThat(regular.objectiveLearned()).isFalse();
                assertThat(regular.state()).isEqualTo(Sharing.State.OBJECTIVE_MET);
                long before = interactiveDone.sum();
                await().atMost(Duration.ofSeconds(10)).until(() -> interactiveDone.sum() >= before + 50);
            }
        }
    }

    @Test
    void theElasticAllowanceFallsToItsFloorWhenTheObjectiveIsMissedAndBatchStillProgresses() throws Exception {
        var db = barrier(Duration.ofMillis(5)); // every 10 ms operation misses it
        Workload interactive = db.workload("interactive");
        Workload batch = db.workload("batch");
        var batchDone = new LongAdder();
        var interactiveDone = new LongAdder();
        try (var batchCallers = sleepers(batch, 8, "0.01", batchDone)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> batch.limit() == 4);
            try (var interactiveCallers = sleepers(interactive, 16, "0.01", interactiveDone)) {
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                    assertThat(batch.sharing().orElseThrow().state()).isEqualTo(Sharing.State.OBJECTIVE_MISSED);
                    assertThat(batch.limit())
                            .as("more than one in ten missed: the floor")
                            .isEqualTo(1);
                    assertThat(interactive.limit())
                            .as("regular work gets its whole B")
                            .isEqualTo(4);
                });
                assertThat(interactive.sharing().orElseThrow().state()).isEqualTo(Sharing.State.OBJECTIVE_MISSED);
                assertThat(interactive.sharing().orElseThrow().recentP99()).isGreaterThan(Duration.ofMillis(5));
                long before = batchDone.sum();
                await("the floor: batch keeps one permit and progresses")
                        .atMost(Duration.ofSeconds(20))
                        .until(() -> batchDone.sum() >= before + 20);
                assertThat(batch.limit()).isEqualTo(1);
            }
            await().atMost(Duration.ofSeconds(20))
                    .untilAsserted(() -> assertThat(batch.limit())
                            .as("regular work gone: all the room again")
                            .isEqualTo(4));
        }
    }

    @ParameterizedTest(name = "third workload elastic: {0}")
    @ValueSource(booleans = {true, false})
    void aThirdWorkloadChangesNoInvariant(boolean elastic) throws Exception {
        var db = POOL.track(DbBulkhead.builder(POOL.get())
                .workload(WorkloadConfig.builder("interactive")
                        .concurrent(3)
                        .extraSlots(64)
                        .latencyObjective(Duration.ofMillis(5))
                        .build())
                .workload(WorkloadConfig.builder("batch")
                        .concurrent(4)
                        .extraSlots(64)
                        .priority(Priority.ELASTIC)
                        .build())
                .workload(WorkloadConfig.builder("third")
                        .concurrent(elastic ? 4 : 2)
                        .extraSlots(64)
                        .priority(elastic ? Priority.ELASTIC : Priority.REGULAR)
                        .build())
                .build());
        var inWork = new AtomicInteger();
        var most = new AtomicInteger();
        var done = new LongAdder[] {new LongAdder(), new LongAdder(), new LongAdder()};
        String[] names = {"interactive", "batch", "third"};
        var callers = new java.util.ArrayList<Callers>();
        try {
            for (int w = 0; w < 3; w++) {
                Workload workload = db.workload(names[w]);
                LongAdder counter = done[w];
                callers.add(new Callers(Thread.ofVirtual().factory(), 10, () -> {
                    workload.transaction(Duration.ofSeconds(5), c -> {
                        most.accumulateAndGet(inWork.incrementAndGet(), Math::max);
                        try {
                            return Db.count(c, "SELECT 1 FROM pg_sleep(0.005)");
                        } finally {
                            inWork.decrementAndGet();
                        }
                    });
                    counter.increment();
                }));
            }
            await("every workload progresses: none starved, each at least its floor")
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> done[0].sum() >= 300 && done[1].sum() >= 30 && done[2].sum() >= 30);
            for (String name : names) {
                assertThat(db.workload(name).limit()).as(name + "'s limit").isGreaterThanOrEqualTo(1);
            }
        } finally {
            for (Callers c : callers) {
                c.close();
            }
        }
        assertThat(most.get())
                .as("transactions in work at once, of the three workloads")
                .isLessThanOrEqualTo(6);
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
