package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dbbulkhead.Gate.Threads;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Admission without a transaction: a lease holds both permits until its owner closes it, exactly once. */
class LeaseTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(3);

    @Test
    void aLeaseHoldsBothPermitsUntilClosedAndASecondCloseDoesNothing() throws Exception {
        var gate = POOL.bulkhead(2, 1);
        Lease lease = gate.acquire(Duration.ZERO);
        assertThat(gate.available()).isEqualTo(1);
        assertThat(gate.availableSlots()).isEqualTo(2);
        assertThat(lease.workload()).isSameAs(gate.defaultWorkload());
        assertThat(lease.deadline()).isEmpty();
        lease.close();
        assertThat(gate.available()).isEqualTo(2);
        assertThat(gate.availableSlots()).isEqualTo(3);
        lease.close();
        assertThat(gate.available()).as("a second close releases nothing more").isEqualTo(2);
        assertThat(gate.availableSlots()).isEqualTo(3);
    }

    @Test
    void acquireThenRunYourOwnTransactionThenClose() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        long id = Db.newId();
        try (Lease lease = gate.workload(DbBulkhead.DEFAULT_WORKLOAD).acquire(Duration.ofMillis(50));
                Connection c = POOL.get().getConnection()) {
            assertThat(lease.workload().executing()).isEqualTo(1);
            c.setAutoCommit(false);
            Db.insert(c, id);
            c.commit();
            c.setAutoCommit(true);
        }
        assertThat(Db.rows(id)).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(Threads.class)
    void closingFromAnotherThreadIsRefusedAndReleasesNothing(Threads threads) throws Exception {
        var gate = POOL.bulkhead(1, 0);
        Lease lease = gate.acquire(Duration.ZERO);
        try (var g = new Gate(threads)) {
            Future<?> foreign = g.submit(() -> {
                lease.close();
                return null;
            });
            assertThatThrownBy(foreign::get)
                    .cause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("released by the thread that acquired it")
                    .hasMessageContaining("nothing was released");
        }
        assertThat(gate.available()).as("still held by its owner").isZero();
        lease.close();
        assertThat(gate.available()).isEqualTo(1);
    }

    @Test
    void aThreadHoldingALeaseCannotEnterTheSameBarrierAgain() throws Exception {
        var gate = DbBulkhead.builder(POOL.get())
                .workload("interactive", 1, 0)
                .workload("batch", 1, 0)
                .build();
        POOL.track(gate);
        try (Lease lease = gate.workload("interactive").acquire(Duration.ZERO)) {
            assertThatThrownBy(() -> gate.workload("batch").acquire(Duration.ofSeconds(30)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("'interactive' -> 'batch'");
            assertThatThrownBy(() -> gate.workload("interactive").transaction(Duration.ofSeconds(30), c -> 1))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("not reentrant");
            assertThat(lease.workload().name()).isEqualTo("interactive");
        }
        try (Lease again = gate.workload("batch").acquire(Duration.ZERO)) {
            assertThat(again.workload().executing())
                    .as("allowed once the first lease is closed")
                    .isEqualTo(1);
        }
    }

    @Test
    void workInsideATransactionCannotTakeALeaseOfItsOwnBarrier() throws Exception {
        var gate = POOL.bulkhead(2, 0);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, c -> {
                    try (Lease inner = gate.acquire(Duration.ZERO)) {
                        return inner.workload();
                    } catch (InterruptedException e) {
                        throw new SQLException(e);
                    }
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not reentrant");
    }

    @Test
    void leasesAreRejectedForTheSameReasonsAsTransactions() throws Exception {
        var gate = POOL.bulkhead(1, 1);
        try (var g = new Gate()) {
            g.hold(gate.defaultWorkload(), 1);
            var waiting = g.queue(gate.defaultWorkload(), Duration.ofSeconds(30), c -> 1);
            assertThat(Calls.catchRejection(() -> gate.acquire(Duration.ofSeconds(1))))
                    .isInstanceOf(AdmissionFullException.class);
            g.release();
            assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(1);
        }
        try (var g = new Gate()) {
            g.hold(gate.defaultWorkload(), 1);
            assertThat(Calls.catchRejection(() -> gate.acquire(Duration.ofMillis(20))))
                    .isInstanceOf(QueueTimeoutException.class);
            var exceeded = Calls.catchRejection(() -> gate.acquire(Deadline.in(Duration.ofMillis(20))));
            assertThat(((DeadlineExceededException) exceeded).stage())
                    .isEqualTo(DeadlineExceededException.Stage.PERMIT_WAIT);
            assertThat(Calls.catchRejection(() -> gate.acquire(Deadline.in(Duration.ofNanos(-1)))))
                    .isInstanceOf(DeadlineExceededException.class);
        }
    }

    @Test
    void aLeaseThatWaitedSaysHowLongAndKeepsItsDeadline() throws Exception {
        var gate = POOL.bulkhead(1, 1);
        var deadline = Deadline.in(Duration.ofSeconds(30));
        try (var g = new Gate()) {
            g.hold(gate.defaultWorkload(), 1);
            var acquired = new CountDownLatch(1);
            Future<Lease> waiter = g.submit(() -> {
                Lease lease = gate.acquire(deadline);
                acquired.countDown();
                lease.close();
                return lease;
            });
            org.awaitility.Awaitility.await().until(() -> gate.defaultWorkload().waiting() == 1);
            long before = System.nanoTime();
            g.release();
            assertThat(acquired.await(10, TimeUnit.SECONDS)).isTrue();
            Lease lease = waiter.get(10, TimeUnit.SECONDS);
            assertThat(lease.deadline()).contains(deadline);
            assertThat(lease.permitWaitNanos())
                    .as("waited until the holder released")
                    .isPositive()
                    .isLessThan(
                            System.nanoTime() - before + Duration.ofSeconds(10).toNanos());
        }
    }

    @Test
    void listenersSeeALeaseAsAdmittedAcquiredAndReleased() throws Exception {
        List<String> events = new CopyOnWriteArrayList<>();
        var recorder = new BulkheadListener() {
            @Override
            public void onAdmitted(Workload w) {
                events.add("admitted");
            }

            @Override
            public void onPermitAcquired(Workload w, long waitNanos) {
                events.add("permit");
            }

            @Override
            public void onFinished(Workload w, Outcome outcome, long permitWait, long poolWait, long hold, long work) {
                events.add(outcome + " hold>=0:" + (hold >= 0) + " pool=" + poolWait + " work=" + work);
            }
        };
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .listener(recorder)
                .workload("w", 1, 0)
                .build());
        gate.acquire(Duration.ZERO).close();
        assertThat(events).containsExactly("admitted", "permit", "RELEASED hold>=0:true pool=0 work=0");
    }

    @ParameterizedTest
    @EnumSource(Threads.class)
    void aLeaseHandedToAStageIsReleasedOnceWhenTheStageCompletesOnAnotherThread(Threads threads) throws Exception {
        var gate = POOL.bulkhead(1, 0);
        var stage = new java.util.concurrent.CompletableFuture<Integer>();
        Lease lease = gate.acquire(Duration.ZERO);
        lease.closeWhenComplete(stage);
        lease.close(); // the stage releases it, not the owner
        assertThat(gate.available())
                .as("still held: the stage has not completed")
                .isZero();
        try (Lease next = gate.acquire(Duration.ZERO)) {
            throw new AssertionError("a second permit: " + next);
        } catch (AdmissionFullException expected) {
            // not re-entry: this thread no longer holds it, but the permit is still taken
        }
        try (var g = new Gate(threads)) {
            g.submit(() -> stage.complete(7)).get(10, TimeUnit.SECONDS);
        }
        assertThat(gate.available()).isEqualTo(1);
        assertThat(gate.availableSlots()).isEqualTo(1);
        stage.complete(8);
        lease.close();
        assertThat(gate.available()).as("released once").isEqualTo(1);
        try (Lease again = gate.acquire(Duration.ZERO)) {
            assertThat(again.workload().available()).isZero();
        }
    }

    @Test
    void aLeaseHandedToACompletedOrFailedStageIsReleasedAtOnce() throws Exception {
        var gate = POOL.bulkhead(1, 0);
        gate.acquire(Duration.ZERO).closeWhenComplete(java.util.concurrent.CompletableFuture.completedFuture(1));
        assertThat(gate.available()).isEqualTo(1);
        gate.acquire(Duration.ZERO)
                .closeWhenComplete(java.util.concurrent.CompletableFuture.failedFuture(new SQLException("x", "57014")));
        assertThat(gate.available()).isEqualTo(1);
    }
}
