package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Waiters whose thread dies inside the barrier and never calls it again: the usual case of a request thread whose
 * stack overflows while it waits for a permit (the overflow ends the request). B = 1 is held by a real transaction,
 * Q = 4; one thread after another recurses to its stack limit, then calls {@code transaction()} on the way back up
 * at every depth, each call overflowing somewhere inside admission or waiting 5 ms and timing out, and stops for good
 * right after a random one of its overflows, or at once when it sees that its overflow left its waiter queued (its
 * own clean-up overflowed too), at whatever state that left. Once the holder leaves, every permit and
 * slot must be back and the barrier must work, without any of those threads' help. (Before the grant was a
 * hand-shake, 5 of 6 such runs left a stale waiter: {@code waiting()} 1 with nobody waiting, then the holder's
 * permit handed to it and lost, {@code available()} 0 for ever.)
 */
class DeadWaitersTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(2);

    private static final int THREADS = 24;

    @ParameterizedTest
    @EnumSource(Gate.Threads.class)
    void waitersThatDieInsideTheBarrierGiveEverythingBackWithoutCallingAgain(Gate.Threads threads) throws Exception {
        var gate = POOL.bulkhead(1, 4);
        var w = gate.defaultWorkload();
        var random = new Random(18);
        var overflowsInside = new AtomicInteger();
        try (var g = new Gate()) {
            var holding = g.hold(w, 1);
            // Link the JDK's timed-park call sites at a shallow depth first (see StackOverflowWhileWaitingTest).
            assertThat(Calls.catchRejection(() -> gate.transaction(Duration.ofMillis(1), c -> 0)))
                    .isInstanceOf(QueueTimeoutException.class);
            for (int t = 0; t < THREADS; t++) {
                int stopAfter = 1 + random.nextInt(40);
                Runnable dying = () -> descend(gate, new int[] {stopAfter}, overflowsInside);
                Thread thread = threads == Gate.Threads.VIRTUAL
                        ? Thread.ofVirtual().unstarted(dying)
                        : Thread.ofPlatform().stackSize(256 * 1024).unstarted(dying);
                thread.start();
                thread.join(TimeUnit.MINUTES.toMillis(1));
                assertThat(thread.isAlive()).as("dying caller %d ended", t).isFalse();
            }
            g.release();
            holding[0].get(30, TimeUnit.SECONDS);
        }
        assertThat(overflowsInside.get()).as("overflows inside the barrier").isGreaterThanOrEqualTo(THREADS);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(w.waiting()).as("nobody left queued").isZero();
            assertThat(w.available())
                    .as("the holder's permit is free, not lost to a dead waiter")
                    .isEqualTo(1);
            assertThat(w.availableSlots()).isEqualTo(5);
        });
        int answer = gate.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 42"));
        assertThat(answer).as("the barrier still works").isEqualTo(42);
    }

    /**
     * Recurses to the stack limit, then calls the barrier at every depth on the way back up, and returns for good
     * (the thread ends) right after its {@code stopAfter[0]}-th overflow inside it.
     */
    private static void descend(DbBulkhead gate, int[] stopAfter, AtomicInteger overflowsInside) {
        try {
            descend(gate, stopAfter, overflowsInside);
        } catch (StackOverflowError bottom) {
            // The deepest frame: fall through and try from here.
        }
        if (stopAfter[0] == 0) {
            return;
        }
        try {
            gate.transaction(Duration.ofMillis(5), c -> 0);
        } catch (QueueTimeoutException | AdmissionFullException expected) {
            // waited (or was refused) without overflowing: one frame higher next
        } catch (StackOverflowError overflow) {
            overflowsInside.incrementAndGet();
            stopAfter[0]--;
            if (gate.defaultWorkload().waiting() > 0) {
                stopAfter[0] = 0; // it left a waiter behind (its own clean-up overflowed too): die with it there
            }
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
