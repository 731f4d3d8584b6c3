package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Predictive rejection on the real PostgreSQL: a caller whose expected wait (queued callers, B, the recent hold
 * time) exceeds what it may wait is refused at once holding nothing; one that would be served in time is admitted;
 * without a measurement nobody is refused; the reason reaches listeners.
 */
class PredictiveRejectionTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(3);

    private final List<RejectionReason> rejections = new CopyOnWriteArrayList<>();
    private final BulkheadListener listener = new BulkheadListener() {
        @Override
        public void onRejected(Workload workload, RejectionReason reason, long waitedNanos) {
            rejections.add(reason);
        }
    };

    private Workload predictive() {
        return POOL.track(DbBulkhead.builder(POOL.get()).workload(WorkloadConfig.builder("w").concurrent(1).extraSlots(10)
                .predictiveRejection(true).build())
                .listener(listener).build()).workload("w");
    }

    /** Runs {@code n} transactions of about {@code seconds} each, so that the workload knows its hold time. */
    private static void teach(Workload w, int n, double seconds) throws Exception {
        for (int i = 0; i < n; i++) {
            w.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1 FROM pg_sleep(" + seconds + ")"));
        }
    }

    @Test
    void aCallerThatWouldWaitLongerThanItMayIsRefusedAtOnceHoldingNothing() throws Exception {
        Workload w = predictive();
        teach(w, 3, 0.2);
        assertThat(w.recentHoldTime()).isBetween(Duration.ofMillis(150), Duration.ofSeconds(2));
        assertThat(w.expectedWait()).as("a permit is free").isZero();
        try (var g = new Gate()) {
            g.hold(w, 1);
            assertThat(w.expectedWait()).as("behind the holder: (0 + 1) × hold / B").isEqualTo(w.recentHoldTime());
            int slots = w.availableSlots();
            // Expected: (0 queued + 1) × ~200 ms / B ≈ 200 ms, more than the 50 ms this caller may wait.
            assertThatThrownBy(() -> w.transaction(Duration.ofMillis(50), c -> 1))
                    .isInstanceOfSatisfying(WouldTimeOutException.class, e -> {
                        assertThat(e.reason()).isEqualTo(RejectionReason.WOULD_TIME_OUT);
                        assertThat(e.expectedWait()).isGreaterThan(e.allowedWait());
                        assertThat(e.allowedWait()).isEqualTo(Duration.ofMillis(50));
                        assertThat(e.queued()).isZero();
                        assertThat(e.getMessage()).contains("would time out: an expected wait of ",
                                "longer than the 50.000 ms allowed", "executing=1, waiting=0)");
                    });
            assertThat(w.availableSlots()).as("the refused caller took no slot").isEqualTo(slots);
            assertThat(w.waiting()).isZero();
            assertThat(rejections).containsExactly(RejectionReason.WOULD_TIME_OUT);
            // The same caller with a deadline that leaves it the time is admitted, waits, and is served.
            var served = g.queue(w, Duration.ofSeconds(5), c -> Db.count(c, "SELECT 7"));
            g.release();
            assertThat(served.get(10, TimeUnit.SECONDS)).isEqualTo(7);
        }
    }

    @Test
    void aCallerThatWouldBeServedInTimeIsAdmitted() throws Exception {
        Workload w = predictive();
        teach(w, 3, 0.02);
        try (var g = new Gate()) {
            g.hold(w, 1);
            // Expected ≈ 20 ms against 2 s: admitted, queued behind the holder.
            var queued = g.queue(w, Duration.ofSeconds(2), c -> Db.count(c, "SELECT 42"));
            g.release();
            assertThat(queued.get(10, TimeUnit.SECONDS)).isEqualTo(42);
        }
        assertThat(rejections).isEmpty();
    }

    @Test
    void whatIsLeftOfTheDeadlineIsWhatTheCallerMayWait() throws Exception {
        Workload w = predictive();
        teach(w, 3, 0.2);
        try (var g = new Gate()) {
            g.hold(w, 1);
            assertThatThrownBy(() -> w.transaction(Deadline.in(Duration.ofMillis(40)), c -> 1))
                    .isInstanceOfSatisfying(WouldTimeOutException.class,
                            e -> assertThat(e.allowedWait()).isLessThanOrEqualTo(Duration.ofMillis(40)));
            assertThatThrownBy(() -> w.acquire(Duration.ofMillis(40))).isInstanceOf(WouldTimeOutException.class);
        }
    }

    @Test
    void withAFreePermitNobodyIsRefused() throws Exception {
        Workload w = predictive();
        assertThat(w.expectedWait()).as("nothing granted yet: nothing to predict from").isZero();
        teach(w, 2, 0.2);
        int three = w.transaction(Duration.ZERO, c -> Db.count(c, "SELECT 3"));
        assertThat(three).as("a free permit").isEqualTo(3);
        assertThat(rejections).isEmpty();
    }

    /**
     * A burst on a new barrier: before any operation has completed, how long the first permit has been held is a
     * lower bound of the hold, and a caller who could not wait that long is refused at once instead of waiting in
     * vain (before, nothing was predicted until the first release).
     */
    @Test
    void beforeTheFirstReleaseTheAgeOfTheFirstGrantPredicts() throws Exception {
        Workload w = predictive();
        try (var g = new Gate()) {
            g.hold(w, 1); // granted, not released: nothing measured yet
            assertThat(w.recentHoldTime()).isZero();
            await().atMost(Duration.ofSeconds(10)).until(() -> w.expectedWait().toMillis() > 60);
            assertThatThrownBy(() -> w.transaction(Duration.ofMillis(50), c -> 1))
                    .isInstanceOf(WouldTimeOutException.class);
            assertThat(rejections).containsExactly(RejectionReason.WOULD_TIME_OUT);
            assertThat(w.waiting()).as("refused at once, not queued").isZero();
        }
    }

    @Test
    void theArticlesBarrierDoesNotPredictAndAnAuditNeedsAPrediction() {
        assertThat(new DbBulkhead(POOL.get(), 1, 0).defaultWorkload().predictive()).isFalse();
        assertThatThrownBy(() -> WorkloadConfig.builder("a").concurrent(1).predictionAudit(0.1).build())
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage("workload 'a': predictionAudit needs predictiveRejection (or a DEADLINE queue) on the workload, "
                        + "was 0.1");
    }
}
