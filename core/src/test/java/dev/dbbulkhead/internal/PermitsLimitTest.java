package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Lowering and raising the limit L of a {@link Permits} while callers hold and wait: step by step, then under
 * stress with real virtual threads. (The model check covers every interleaving of small scenarios:
 * {@code PermitsModelCheckTest.WithLimit}.)
 */
@Tag("no-db")
class PermitsLimitTest {
    private static Permits.Node acquired(Permits p) throws InterruptedException {
        var node = new Permits.Node(Thread.currentThread());
        assertThat(p.enter(node, false)).isEqualTo(Permits.Entry.ACQUIRED);
        return node;
    }

    @Test
    void aLowerLimitTakesFreePermitsAtOnceAndHeldOnesAsTheyAreReleased() throws Exception {
        var p = new Permits(3, 3);
        var a = acquired(p);
        p.limit(2);
        assertThat(p.available()).as("one free permit withheld at once").isEqualTo(1);
        var b = acquired(p);
        var c = new Permits.Node(Thread.currentThread());
        assertThat(p.enter(c, false)).as("L = 2 are held").isEqualTo(Permits.Entry.BUSY);
        p.limit(1);
        assertThat(p.owed()).isEqualTo(1);
        assertThat(p.executing()).isEqualTo(2);
        p.exit(a);
        assertThat(p.available()).as("the release went to the lower limit").isZero();
        assertThat(p.owed()).isZero();
        assertThat(p.executing()).isEqualTo(1);
        p.exit(b);
        assertThat(p.available()).isEqualTo(1);
        assertThat(p.availableSlots()).as("L + Q").isEqualTo(1 + 3);
        p.limit(3);
        assertThat(p.available()).isEqualTo(3);
        assertThat(p.availableSlots()).isEqualTo(6);
        assertThat(p.executing()).isZero();
    }

    @Test
    void raisingTheLimitCancelsWhatIsOwedThenServesTheOldestWaiterFirst() throws Exception {
        var p = new Permits(2, 2);
        var a = acquired(p);
        var b = acquired(p);
        p.limit(1);
        p.limit(2);
        assertThat(p.owed()).as("cancelled before any release").isZero();
        p.exit(a);
        assertThat(p.available()).isEqualTo(1);
        p.exit(b);
        p.limit(1);
        var holder = acquired(p);
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var queued = new CountDownLatch(1);
            Future<Boolean> waiter = executor.submit(() -> {
                var node = new Permits.Node(Thread.currentThread());
                assertThat(Waits.enterAndQueue(p, node)).isEqualTo(Permits.Entry.MUST_WAIT);
                queued.countDown();
                boolean r = p.await(node, TimeUnit.SECONDS.toNanos(10)) == Permits.Entry.ACQUIRED;
                p.exit(node);
                return r;
            });
            assertThat(queued.await(10, TimeUnit.SECONDS)).isTrue();
            while (p.waiting() == 0) {
                Thread.onSpinWait(); // until the waiter is queued, not merely admitted
            }
            p.limit(2);
            assertThat(waiter.get(10, TimeUnit.SECONDS))
                    .as("handed the withheld permit")
                    .isTrue();
        }
        p.exit(holder);
        assertThat(p.available()).isEqualTo(2);
        assertThat(p.waiting()).isZero();
    }

    /**
     * 64 virtual threads take, hold and give back permits (B = 6) while a controller moves L through random values.
     * Each phase waits until what the lower limit is owed has been taken, then checks that no more than L hold at
     * once; at the end every permit and slot is back and exactly L are free.
     */
    @Test
    void underStressNoPermitIsLostOrCreatedAndTheLimitHolds() throws Exception {
        int b = 6;
        var p = new Permits(b, 58);
        var holding = new AtomicInteger();
        var stop = new AtomicBoolean();
        var operations = new LongAdder();
        var start = new CountDownLatch(1);
        var random = new Random(7);
        List<Future<?>> workers = new ArrayList<>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int t = 0; t < 64; t++) {
                workers.add(executor.submit(() -> {
                    start.await();
                    while (!stop.get()) {
                        var node = new Permits.Node(Thread.currentThread());
                        boolean acquired = Waits.acquire(p, node, TimeUnit.MILLISECONDS.toNanos(2));
                        if (acquired) {
                            holding.incrementAndGet();
                            Thread.yield();
                            holding.decrementAndGet();
                            p.exit(node);
                            operations.increment();
                        } else {
                            LockSupport.parkNanos(50_000); // refused (admission is L + Q): free the carrier
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            try {
                phases(p, b, random, holding);
            } finally {
                stop.set(true); // a failed phase must not leave the workers running
            }
            for (var w : workers) {
                w.get(10, TimeUnit.SECONDS);
            }
        }
        assertThat(operations.sum()).isPositive();
        assertThat(p.executing()).isZero();
        assertThat(p.waiting()).isZero();
        assertThat(p.availableSlots()).isEqualTo(p.limit() + 58);
        assertThat(p.available()).as("exactly L free").isEqualTo(p.limit());
        p.limit(b);
        assertThat(p.available()).as("and all B once it is raised").isEqualTo(b);
    }

    private static void phases(Permits p, int b, Random random, AtomicInteger holding) {
        for (int phase = 0; phase < 200; phase++) {
            int limit = 1 + random.nextInt(b);
            p.limit(limit);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (p.owed() > 0) {
                assertThat(System.nanoTime())
                        .as(
                                "what the lower limit is owed, taken: owed %d, free %d, executing %d,"
                                        + " admitted %d, waiting %d, holding %d, limit %d",
                                p.owed(), p.available(), p.executing(), p.admitted(), p.waiting(), holding.get(), limit)
                        .isLessThan(until);
                Thread.onSpinWait();
            }
            // Read here, by this thread, after the settlement: a worker's own reading may date from before it.
            int most = 0;
            for (long end = System.nanoTime() + 200_000; System.nanoTime() < end; ) {
                most = Math.max(most, holding.get());
            }
            assertThat(most).as("holding at once under L = %d", limit).isLessThanOrEqualTo(limit);
        }
    }
}
