package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@link QueuePolicy#DEADLINE} queue on the real PostgreSQL, with virtual threads: admission bounded by time (a
 * caller is admitted as long as its expected start leaves its work's time before its deadline, however many wait
 * ahead), a waiter that leaves when it can no longer finish, a newcomer expected to wait longer than it may shed at
 * once under sustained overload (and one whose wait fits admitted). After each test, every permit and connection is back ({@link BarrierExtension}).
 */
class DeadlineQueueTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(3);

    private static Workload deadlineQueue() {
        return POOL.track(DbBulkhead.builder(POOL.get())
                        .workload(WorkloadConfig.recommended("w", 1))
                        .build())
                .workload("w");
    }

    /** Four operations of about {@code seconds}: the workload's first window of holds (mean and reserve). */
    private static void teach(Workload w, double seconds) throws Exception {
        for (int i = 0; i < 4; i++) {
            w.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1 FROM pg_sleep(" + seconds + ")"));
        }
    }

    private static SqlWork<Integer> one() {
        return c -> 1;
    }

    @Test
    void callersAreAdmittedWhileTheirExpectedStartLeavesTimeForTheirWorkNotUpToACount() throws Exception {
        Workload w = deadlineQueue();
        teach(w, 0.2);
        long hold = w.recentHoldTime().toNanos();
        var admitted = new ArrayList<Future<Integer>>();
        try (var g = new Gate()) {
            g.hold(w, 1);
            WouldTimeOutException refused = null;
            while (refused == null && admitted.size() < 60) {
                Future<Integer> f = g.queueWithDeadline(w, Duration.ofSeconds(5), one());
                if (f.isDone()) {
                    refused = (WouldTimeOutException) catchThrowableOfType(ExecutionException.class, f::get)
                            .getCause();
                } else {
                    admitted.add(f);
                }
            }
            assertThat(refused)
                    .as("a caller is refused once the line is longer than its deadline allows")
                    .isNotNull();
            int k = admitted.size();
            assertThat(k)
                    .as("admitted: about (5 s - reserve) / hold, far more than B + a count-sized Q")
                    .isGreaterThanOrEqualTo(10);
            assertThat(refused.expectedWait())
                    .as("(k + 1) waits of one hold, B = 1")
                    .isEqualTo(Duration.ofNanos(hold * (k + 1)));
            assertThat(refused.expectedWait()).isGreaterThan(refused.allowedWait());
            assertThat(refused.allowedWait())
                    .as("its deadline less the time its work needs")
                    .isLessThan(Duration.ofSeconds(5).minus(Duration.ofNanos(hold / 2)));
            assertThat(refused.waited()).as("refused at once").isZero();
            assertThat(w.waiting()).as("the refused caller holds nothing").isEqualTo(k);
            g.release();
            for (Future<Integer> f : admitted) {
                assertThat(f.get(10, TimeUnit.SECONDS))
                        .as("every admitted caller is served")
                        .isEqualTo(1);
            }
        }
    }

    @Test
    void aWaiterLeavesWhenItCanNoLongerFinishItsWorkNotAtItsDeadline() throws Exception {
        Workload w = deadlineQueue();
        teach(w, 0.2);
        Duration hold = w.recentHoldTime();
        try (var g = new Gate()) {
            g.hold(w, 1); // never released while the caller waits
            Future<Integer> f = g.queueWithDeadline(w, Duration.ofMillis(900), one());
            var left = (WouldTimeOutException)
                    catchThrowableOfType(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS))
                            .getCause();
            assertThat(left.reason()).isEqualTo(RejectionReason.WOULD_TIME_OUT);
            assertThat(left.allowedWait())
                    .as("its deadline less its work's reserve (a high quantile of the holds)")
                    .isLessThan(
                            Duration.ofMillis(900).minus(hold.multipliedBy(9).dividedBy(10)));
            assertThat(left.waited()).as("it waited what it was allowed").isGreaterThanOrEqualTo(left.allowedWait());
            assertThat(left.getMessage()).contains("could no longer finish its work before its deadline");
            assertThat(w.waiting()).isZero();
            assertThat(w.inside()).as("only the holder").isEqualTo(1);
        }
    }

    @Test
    void underSustainedOverloadOnlyNewcomersExpectedToWaitLongerThanTheyMayAreShed() throws Exception {
        Workload w = deadlineQueue();
        teach(w, 0.05);
        long hold = w.recentHoldTime().toNanos();
        var waiters = new ArrayList<Future<Integer>>();
        try (var g = new Gate()) {
            g.hold(w, 1);
            for (int i = 0; i < 4; i++) { // a line of four: no overload yet, so their deadline decides
                waiters.add(g.queueWithDeadline(w, Duration.ofSeconds(5), one()));
            }
            assertThat(w.waiting()).isEqualTo(4);
            // A caller whose deadline is too close is refused by the prediction: the door is overloaded. (Five
            // holds of ~50 ms back within what 100 ms leaves after the reserve, under one hold: a chance below 0.1 %.)
            assertThat(catchThrowableOfType(
                                    WouldTimeOutException.class,
                                    () -> w.transaction(Deadline.in(Duration.ofMillis(100)), one()))
                            .waited())
                    .isZero();
            // Overloaded, a newcomer whose expected wait (5 holds) fits in its deadline is still admitted: the line
            // serves it in time, however long it is.
            waiters.add(g.queueWithDeadline(w, Duration.ofSeconds(5), one()));
            assertThat(w.waiting())
                    .as("admitted while overloaded: its wait fits")
                    .isEqualTo(5);
            // One expected to wait 6 holds with about 5 to wait (its deadline less its work's reserve): an even chance
            // at best, which the door admits unless it is overloaded, as it is now.
            var shed = catchThrowableOfType(
                    LoadShedException.class, () -> w.transaction(Deadline.in(Duration.ofNanos(hold * 13 / 2)), one()));
            assertThat(shed.reason()).isEqualTo(RejectionReason.LOAD_SHED);
            assertThat(shed.expectedWait()).isEqualTo(Duration.ofNanos(6 * hold));
            assertThat(shed.expectedWait()).isGreaterThan(shed.allowedWait());
            assertThat(shed.targetQueueDelay()).as("what it may wait").isEqualTo(shed.allowedWait());
            assertThat(shed.allowedWait())
                    .as("more than 4 holds: a chance to start in time far above 1 %, so not a would-time-out")
                    .isGreaterThan(Duration.ofNanos(4 * hold));
            assertThat(w.waiting())
                    .as("shed holding nothing; those admitted keep their place")
                    .isEqualTo(5);
            g.release();
            for (Future<Integer> f : waiters) {
                assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(1);
            }
        }
    }

    @Test
    void theArticlesQueueIsUnchanged() {
        var article = new DbBulkhead(POOL.get(), 1, 0).defaultWorkload();
        assertThat(article.config().queue()).isEqualTo(QueuePolicy.FIFO);
        assertThat(article.predictive()).isFalse();
        assertThat(WorkloadConfig.recommended("w", 4).queue()).isEqualTo(QueuePolicy.DEADLINE);
        assertThat(WorkloadConfig.recommended("w", 4).extraSlots())
                .isEqualTo(WorkloadConfig.RECOMMENDED_SLOTS_PER_PERMIT * 4);
    }
}
