package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.dbbulkhead.internal.PredictionAudit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Predictive rejection on the real PostgreSQL: a caller that almost surely cannot start within what it may wait
 * (queued callers, B, the recent hold time: a chance below 1 %) is refused at once holding nothing; one that would be
 * served in time, or has a fair chance, is admitted; without a measurement nobody is refused; the reason reaches
 * listeners.
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
        return POOL.track(DbBulkhead.builder(POOL.get())
                        .workload(WorkloadConfig.builder("w")
                                .concurrent(1)
                                .extraSlots(10)
                                .predictiveRejection(true)
                                .build())
                        .listener(listener)
                        .build())
                .workload("w");
    }

    /** Runs {@code n} transactions of about {@code seconds} each, so that the workload knows its hold time. */
    private static void teach(Workload w, int n, double seconds) throws Exception {
        for (int i = 0; i < n; i++) {
            w.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1 FROM pg_sleep(" + seconds + ")"));
        }
    }

    /** Three callers that may wait long: a line that a caller allowed much less than one hold cannot get through. */
    private static List<Future<Integer>> line(Gate g, Workload w) {
        var line = new ArrayList<Future<Integer>>();
        for (int i = 0; i < 3; i++) {
            line.add(g.queue(w, Duration.ofSeconds(10), c -> Db.count(c, "SELECT 1")));
        }
        return line;
    }

    @Test
    void aCallerThatAlmostSurelyCannotStartInTimeIsRefusedAtOnceHoldingNothing() throws Exception {
        Workload w = predictive();
        teach(w, 3, 0.2);
        assertThat(w.recentHoldTime()).isBetween(Duration.ofMillis(150), Duration.ofSeconds(2));
        assertThat(w.expectedWait()).as("a permit is free").isZero();
        try (var g = new Gate()) {
            g.hold(w, 1);
            assertThat(w.expectedWait())
                    .as("behind the holder: (0 + 1) × hold / B")
                    .isEqualTo(w.recentHoldTime());
            var line = line(g, w);
            int slots = w.availableSlots();
            // Four holds of ~200 ms to come back within 50 ms, a quarter of one expected: a chance of about 0.01 %.
            assertThatThrownBy(() -> w.transaction(Duration.ofMillis(50), c -> 1))
                    .isInstanceOfSatisfying(WouldTimeOutException.class, e -> {
                        assertThat(e.reason()).isEqualTo(RejectionReason.WOULD_TIME_OUT);
                        assertThat(e.expectedWait())
                                .isEqualTo(w.recentHoldTime().multipliedBy(4));
                        assertThat(e.allowedWait()).isEqualTo(Duration.ofMillis(50));
                        assertThat(e.queued()).isEqualTo(3);
                        assertThat(e.getMessage())
                                .contains(
                                        "would time out: an expected wait of ",
                                        "longer than the 50.000 ms allowed",
                                        "executing=1, waiting=3)");
                    });
            assertThat(w.availableSlots()).as("the refused caller took no slot").isEqualTo(slots);
            assertThat(w.waiting()).isEqualTo(3);
            assertThat(rejections).containsExactly(RejectionReason.WOULD_TIME_OUT);
            // The same caller with a wait that leaves it the time is admitted, waits, and is served.
            var served = g.queue(w, Duration.ofSeconds(10), c -> Db.count(c, "SELECT 7"));
            g.release();
            assertThat(served.get(10, TimeUnit.SECONDS)).isEqualTo(7);
            for (var f : line) {
                assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            }
        }
    }

    /**
     * A caller whose expected wait is longer than it may wait, but not by much, has a fair chance: a permit may come
     * back early. It is admitted, and leaves when its wait is over; nothing is predicted against it.
     */
    @Test
    void aCallerWithAFairChanceIsAdmittedThoughItsExpectedWaitIsLonger() throws Exception {
        Workload w = predictive();
        teach(w, 3, 0.2);
        try (var g = new Gate()) {
            g.hold(w, 1);
            // One hold of ~200 ms expected, 50 ms allowed: permits coming back at random, a chance of about 22 %.
            assertThatThrownBy(() -> w.transaction(Duration.ofMillis(50), c -> 1))
                    .isInstanceOfSatisfying(
                            QueueTimeoutException.class,
                            e -> assertThat(e.allowedWait()).isEqualTo(Duration.ofMillis(50)));
            assertThat(rejections).as("it waited, then timed out").containsExactly(RejectionReason.QUEUE_TIMEOUT);
            assertThat(w.waiting()).isZero();
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

    /**
     * The audit judges a prediction by whether the caller started within what it allowed, on the workload's clock: a
     * permit it woke to only after that still runs its work, but counts as not served in time.
     */
    @Test
    void anAuditedCallerIsServedInTimeOnlyIfItsPermitCameWithinItsWait() throws Exception {
        assertThat(audited(Duration.ZERO)).containsExactly(true);
        assertThat(audited(Duration.ofSeconds(10))).containsExactly(false);
    }

    /** One audited caller allowed 5 s, its permit granted after the clock moved on by {@code late}: the audits. */
    private List<Boolean> audited(Duration late) throws Exception {
        var offset = new AtomicLong();
        var audits = new CopyOnWriteArrayList<Boolean>();
        Workload w = POOL.track(PredictionAudit.auditing(
                        1.0,
                        () -> DbBulkhead.builder(POOL.get())
                                .nanoClock(() -> System.nanoTime() + offset.get())
                                .workload(WorkloadConfig.builder("w")
                                        .concurrent(1)
                                        .extraSlots(10)
                                        .predictiveRejection(true)
                                        .build())
                                .listener(new BulkheadListener() {
                                    @Override
                                    public void onPredictionAudited(
                                            Workload workload, boolean servedInTime, long waitedNanos) {
                                        audits.add(servedInTime);
                                    }
                                })
                                .build()))
                .workload("w");
        for (int i = 0; i < 3; i++) { // holds of 1,000 s on the workload's clock
            w.transaction(Duration.ofSeconds(5), c -> offset.addAndGet(TimeUnit.SECONDS.toNanos(1_000)));
        }
        try (var g = new Gate()) {
            g.hold(w, 1);
            // One hold of 1,000 s to come back within 5 s: a chance of 0.5 %, refused but for the audit.
            var caller = g.queue(w, Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1"));
            offset.addAndGet(late.toNanos());
            g.release();
            assertThat(caller.get(10, TimeUnit.SECONDS)).as("admitted, served").isEqualTo(1);
        }
        assertThat(w.available()).isEqualTo(1);
        return audits;
    }

    @Test
    void whatIsLeftOfTheDeadlineIsWhatTheCallerMayWait() throws Exception {
        Workload w = predictive();
        teach(w, 3, 0.2);
        try (var g = new Gate()) {
            g.hold(w, 1);
            line(g, w);
            assertThatThrownBy(() -> w.transaction(Deadline.in(Duration.ofMillis(40)), c -> 1))
                    .isInstanceOfSatisfying(
                            WouldTimeOutException.class,
                            e -> assertThat(e.allowedWait()).isLessThanOrEqualTo(Duration.ofMillis(40)));
            assertThatThrownBy(() -> w.acquire(Duration.ofMillis(40))).isInstanceOf(WouldTimeOutException.class);
        }
    }

    @Test
    void withAFreePermitNobodyIsRefused() throws Exception {
        Workload w = predictive();
        assertThat(w.expectedWait())
                .as("nothing granted yet: nothing to predict from")
                .isZero();
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
            line(g, w); // admitted while the first grant is young
            await().atMost(Duration.ofSeconds(10)).until(() -> w.expectedWait().toMillis() > 4 * 500);
            // Four permits back within 50 ms, each held 500 ms at least so far: a chance below 0.001 %.
            assertThatThrownBy(() -> w.transaction(Duration.ofMillis(50), c -> 1))
                    .isInstanceOf(WouldTimeOutException.class);
            assertThat(rejections).containsExactly(RejectionReason.WOULD_TIME_OUT);
            assertThat(w.waiting()).as("refused at once, not queued").isEqualTo(3);
        }
    }

    @Test
    void theArticlesBarrierDoesNotPredictAndTheAuditIsAShare() {
        assertThat(new DbBulkhead(POOL.get(), 1, 0).defaultWorkload().predictive())
                .isFalse();
        assertThatThrownBy(() -> PredictionAudit.auditing(1.5, () -> "never built"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("prediction audit share must be between 0 and 1, was 1.5");
        assertThatThrownBy(() -> PredictionAudit.auditing(Double.NaN, () -> "never built"))
                .hasMessage("prediction audit share must be between 0 and 1, was NaN");
    }
}
