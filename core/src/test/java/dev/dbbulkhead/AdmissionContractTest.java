package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.Gate.Threads;
import dev.dbbulkhead.testkit.FaultyDataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Article points 2 and 3: admission slots, the timed wait for an execution permit, and interrupts. */
class AdmissionContractTest {
    private static final Duration LONG = Duration.ofSeconds(20);

    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(6);

    private static HikariDataSource pool() {
        return POOL.get();
    }

    @ParameterizedTest
    @EnumSource(Threads.class)
    void admissionFullRejectsAtOnceWithoutWaiting(Threads threads) throws Exception {
        var probe = new FaultyDataSource(pool());
        var gate = POOL.bulkhead(probe, 1, 0);
        try (var g = new Gate(threads)) {
            g.hold(gate.defaultWorkload(), 1);
            long start = System.nanoTime();
            // A 20 s queue wait: only the admission check can make this return before it.
            assertThatThrownBy(() -> gate.transaction(LONG, c -> 0))
                    .isInstanceOf(AdmissionFullException.class)
                    .isInstanceOf(RejectedExecutionException.class)
                    .hasMessageContaining("admission full");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(LONG.dividedBy(2));
            assertThat(probe.openConnections())
                    .as("only the holder's connection")
                    .isEqualTo(1);
            assertThat(gate.available()).isZero();
            assertThat(gate.availableSlots()).isZero();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> gate.available() == 1);
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void admissionFullCarriesTheNumbers() throws Exception {
        var gate = POOL.bulkhead(pool(), 2, 3);
        try (var g = new Gate()) {
            g.hold(gate.defaultWorkload(), 2);
            for (int i = 0; i < 3; i++) {
                g.queue(gate.defaultWorkload(), LONG, c -> 1);
            }
            var rejected = Calls.catchRejection(() -> gate.transaction(LONG, c -> 0));
            assertThat(rejected).isInstanceOf(AdmissionFullException.class);
            assertThat(rejected.reason()).isEqualTo(RejectionReason.ADMISSION_FULL);
            assertThat(rejected.concurrent()).isEqualTo(2);
            assertThat(rejected.extraSlots()).isEqualTo(3);
            assertThat(rejected.workload()).isEqualTo("default");
            assertThat(rejected.limit()).isEqualTo(2);
            assertThat(rejected.executing()).as("live: the two holders").isEqualTo(2);
            assertThat(rejected.waiting()).as("live: the three queued").isEqualTo(3);
            assertThat(rejected.getMessage())
                    .isEqualTo(
                            "db-bulkhead 'db', workload 'default': admission full: all 5 "
                                    + "admission slots (limit + Q) taken, refused at once (B=2, Q=3, limit=2, executing=2, waiting=3)");
        }
    }

    @Test
    void whileBPlusQAreInsideEveryFurtherCallerIsRejectedAndTheQWaitersSucceedOnceCapacityFrees() throws Exception {
        var gate = POOL.bulkhead(pool(), 2, 3);
        var w = gate.defaultWorkload();
        try (var g = new Gate()) {
            Future<?>[] holders = g.hold(w, 2);
            List<Future<Long>> waiters = new ArrayList<>();
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                long id = Db.newId();
                ids.add(id);
                waiters.add(g.queue(w, LONG, c -> (long) Db.insert(c, id)));
            }
            assertThat(w.inside()).isEqualTo(5);
            assertThat(w.waiting()).isEqualTo(3);
            for (int i = 0; i < 10; i++) {
                assertThatThrownBy(() -> gate.transaction(LONG, c -> 0L)).isInstanceOf(AdmissionFullException.class);
            }
            g.release();
            for (var h : holders) {
                h.get(10, TimeUnit.SECONDS);
            }
            for (var f : waiters) {
                assertThat(f.get(10, TimeUnit.SECONDS)).isEqualTo(1L);
            }
            for (long id : ids) {
                assertThat(Db.rows(id)).isEqualTo(1);
            }
        }
        Db.assertAllReleased(w, pool());
    }

    @ParameterizedTest
    @EnumSource(Threads.class)
    void queueWaitTimeoutRejectsAfterAboutTheWaitAndReleasesOnlyTheSlot(Threads threads) throws Exception {
        var probe = new FaultyDataSource(pool());
        var gate = POOL.bulkhead(probe, 1, 2);
        var w = gate.defaultWorkload();
        try (var g = new Gate(threads)) {
            g.hold(w, 1);
            Duration wait = Duration.ofMillis(200);
            long start = System.nanoTime();
            var rejected = Calls.catchRejection(() -> gate.transaction(wait, c -> 0));
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertThat(rejected).isInstanceOf(QueueTimeoutException.class);
            assertThat(((QueueTimeoutException) rejected).queueWait()).isEqualTo(wait);
            assertThat(rejected.getMessage())
                    .contains(
                            "no execution permit within the queue wait of 200.000 ms",
                            "(B=1, Q=2, limit=1, executing=1, waiting=0)");
            assertThat(waited).isGreaterThanOrEqualTo(wait).isLessThan(LONG);
            assertThat(w.available()).as("the holder keeps its permit").isZero();
            assertThat(w.availableSlots()).as("only the holder's slot is taken").isEqualTo(2);
            assertThat(probe.openConnections()).isEqualTo(1);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> w.available() == 1);
        Db.assertAllReleased(w, pool());
    }

    @Test
    void zeroWaitWithEveryExecutionPermitBusyIsAQueueTimeout() throws Exception {
        var gate = POOL.bulkhead(pool(), 2, 5);
        try (var g = new Gate()) {
            g.hold(gate.defaultWorkload(), 2);
            var rejected = Calls.catchRejection(() -> gate.transaction(Duration.ZERO, c -> 0));
            assertThat(rejected).isInstanceOf(QueueTimeoutException.class);
            assertThat(rejected.reason()).isEqualTo(RejectionReason.QUEUE_TIMEOUT);
            assertThat(gate.availableSlots()).isEqualTo(5);
        }
    }

    @Test
    void zeroWaitWithAFreePermitRuns() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        String ran = gate.transaction(Duration.ZERO, c -> "ran");
        assertThat(ran).isEqualTo("ran");
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void waitersGetTheExecutionPermitInArrivalOrder() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 5);
        var order = new ConcurrentLinkedQueue<Integer>();
        try (var g = new Gate()) {
            g.hold(gate.defaultWorkload(), 1);
            var futures = new ArrayList<Future<Integer>>();
            for (int i = 1; i <= 5; i++) {
                int n = i;
                futures.add(g.queue(gate.defaultWorkload(), LONG, c -> {
                    order.add(n);
                    return n;
                }));
            }
            g.release();
            for (var f : futures) {
                f.get(10, TimeUnit.SECONDS);
            }
        }
        assertThat(order).containsExactly(1, 2, 3, 4, 5);
    }

    @ParameterizedTest
    @EnumSource(Threads.class)
    void anInterruptWhileWaitingThrowsInterruptedExceptionAndReleasesOnlyTheSlot(Threads threads) throws Exception {
        var probe = new FaultyDataSource(pool());
        var gate = POOL.bulkhead(probe, 1, 1);
        var w = gate.defaultWorkload();
        try (var g = new Gate(threads)) {
            g.hold(w, 1);
            var waiter = new java.util.concurrent.atomic.AtomicReference<Thread>();
            Future<Integer> f = g.submit(() -> {
                waiter.set(Thread.currentThread());
                return gate.transaction(LONG, c -> 1);
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> w.waiting() == 1);
            waiter.get().interrupt();
            assertThatThrownBy(() -> f.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(InterruptedException.class);
            assertThat(w.available())
                    .as("the holder keeps its permit, none was added")
                    .isZero();
            assertThat(w.availableSlots()).as("the waiter's slot is back").isEqualTo(1);
            assertThat(probe.openConnections()).isEqualTo(1);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> w.available() == 1);
        Db.assertAllReleased(w, pool());
    }

    @Test
    void aCallerAlreadyInterruptedGetsInterruptedExceptionEvenWithAFreePermit() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        var ran = new java.util.concurrent.atomic.AtomicBoolean();
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> gate.transaction(LONG, c -> ran.getAndSet(true)))
                    .isInstanceOf(InterruptedException.class);
        } finally {
            Thread.interrupted();
        }
        assertThat(ran).isFalse();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void cancellingAWaitingCallerReleasesItsSlot() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 1);
        var w = gate.defaultWorkload();
        try (var g = new Gate()) {
            g.hold(w, 1);
            Future<Integer> f = g.queue(w, LONG, c -> 1);
            f.cancel(true);
            await().atMost(Duration.ofSeconds(10)).until(() -> w.availableSlots() == 1);
            assertThat(w.available()).isZero();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> w.available() == 1);
        Db.assertAllReleased(w, pool());
    }
}
