package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A caller near its stack limit: {@link StackOverflowError} can strike anywhere inside admission, the wait for a
 * permit and its settlement. Callers at every depth close to the limit try to get a permit from a saturated barrier
 * (a real transaction holds it, another thread keeps taking and handing it on, so grants race the overflows); after
 * thousands of overflows no slot may appear from nowhere or go missing, nobody may stay queued, and the barrier
 * must still work. (Before the queue nodes settled exactly once, this left slots from nowhere and a stuck barrier.)
 *
 * <p>Where giving the permits back fails too (an overflow inside {@code Lease.close()}, or in admission's own clean-up
 * once it held them), the lease is marked first, by a field write, and the thread's next call gives them back instead
 * of failing as re-entry: this test failed so under load in CI ("re-entered on a thread that already holds one of its
 * permits"). Out of scope: a caller whose own code, between acquire and close, used up the stack so that close()
 * cannot even start; nothing that must run at the stack limit can be guaranteed to. The test closes two frames above
 * where it acquired, as real code does.
 */
class StackOverflowWhileWaitingTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(2);

    /** How many attempts after the first one that got through without overflowing. */
    private static final int ATTEMPTS_ABOVE_THE_LIMIT = 1_000;

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void overflowsWhileWaitingLeaveThePermitsConsistent(boolean virtual) throws Exception {
        var gate = POOL.bulkhead(1, 2);
        var stop = new AtomicBoolean();
        var overflows = new AtomicInteger();
        var outcomes = new AtomicInteger();
        try (var g = new Gate()) {
            var holding = g.hold(gate.defaultWorkload(), 1);
            // Link the JDK's own call sites of a timed wait (a virtual thread's timed park bootstraps lambdas on
            // first use) at a shallow depth first: a bootstrap that overflows fails for good, whoever's code it is.
            for (var threads : Gate.Threads.values()) {
                try (var warm = new Gate(threads)) {
                    assertThat(warm.submit(() -> Calls.catchRejection(() -> gate.acquire(Duration.ofMillis(1))))
                                    .get(10, TimeUnit.SECONDS))
                            .isInstanceOf(QueueTimeoutException.class);
                }
            }
            // Keeps taking the permit and handing it on once the holder lets go, so that grants race the waiters.
            var churn = g.submit(() -> {
                while (!stop.get()) {
                    try (Lease lease = gate.acquire(Duration.ofMillis(5))) {
                        Thread.onSpinWait();
                    } catch (QueueTimeoutException | AdmissionFullException busy) {
                        Thread.yield();
                    }
                }
                return null;
            });
            Runnable deep = () -> descend(gate, 0, new int[] {0}, overflows, outcomes);
            Thread caller = virtual
                    ? Thread.ofVirtual().unstarted(deep)
                    : Thread.ofPlatform().stackSize(512 * 1024).unstarted(deep);
            var done = new CompletableFuture<Void>();
            caller.setUncaughtExceptionHandler((t, e) -> done.completeExceptionally(e));
            caller.start();
            g.submit(
                    () -> { // once the first waiters queue behind the holder, it lets go
                        org.awaitility.Awaitility.await()
                                .atMost(Duration.ofSeconds(30))
                                .until(() -> gate.defaultWorkload().waiting() > 0);
                        g.release();
                        return null;
                    });
            caller.join(TimeUnit.MINUTES.toMillis(2));
            assertThat(caller.isAlive()).as("the deep caller finished").isFalse();
            if (done.isCompletedExceptionally()) {
                var trace = new java.io.StringWriter();
                done.exceptionNow().printStackTrace(new java.io.PrintWriter(trace));
                throw new AssertionError("something escaped the deep caller: " + trace);
            }
            stop.set(true);
            churn.get(30, TimeUnit.SECONDS);
            holding[0].get(30, TimeUnit.SECONDS);
        }
        assertThat(overflows.get()).as("stack overflows inside the barrier").isPositive();
        assertThat(outcomes.get())
                .as("attempts that got a permit or a rejection")
                .isGreaterThan(100);
        assertThat(gate.defaultWorkload().waiting()).isZero();
        assertThat(gate.available()).isEqualTo(1);
        assertThat(gate.availableSlots()).isEqualTo(3);
        int value = gate.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 42"));
        assertThat(value).as("the barrier still works").isEqualTo(42);
    }

    private static Lease acquireDeeper(DbBulkhead gate, int frames) throws InterruptedException {
        return frames == 0 ? gate.acquire(Duration.ofMillis(1)) : acquireDeeper(gate, frames - 1);
    }

    /** Recurses to the stack limit, then tries the barrier at every depth on the way back up. */
    private static void descend(
            DbBulkhead gate, int depth, int[] completed, AtomicInteger overflows, AtomicInteger outcomes) {
        try {
            descend(gate, depth + 1, completed, overflows, outcomes);
        } catch (StackOverflowError bottom) {
            // The deepest frame: fall through and try from here.
        }
        if (completed[0] >= ATTEMPTS_ABOVE_THE_LIMIT) {
            return;
        }
        try {
            // Acquired two frames deeper than it is closed: close() gets more stack than acquire() had, as it does in
            // real code, where the stack is used up inside the lease's scope (out of scope here, see above).
            Lease lease = acquireDeeper(gate, 2);
            try {
                completed[0]++;
            } finally {
                lease.close();
            }
            outcomes.incrementAndGet();
        } catch (BulkheadRejectedException rejected) {
            outcomes.incrementAndGet();
            completed[0]++;
        } catch (StackOverflowError overflow) {
            overflows.incrementAndGet();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
