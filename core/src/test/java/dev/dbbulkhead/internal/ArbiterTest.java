package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The arbiter over real {@link Permits}, without a database: the shared limit under races (callers of a regular and an
 * elastic workload entering and leaving on many threads while the arbiter ticks as fast as it can), regular work
 * first, the elastic floor, and elastic growth while there is room. Ticks are driven by the test, on an injected clock.
 */
@Tag("no-db")
class ArbiterTest {
    private static final long MS = 1_000_000;
    private static final int TICKS_PER_WINDOW = (int) (Arbiter.WINDOW_MILLIS / BarrierClock.TICK_MILLIS);

    /** A workload under the arbiter whose cap is its limit (no adaptive level). */
    private static Arbiter.Member member(int concurrent, int extraSlots, boolean elastic) {
        return new Arbiter.Member(new Permits(concurrent, extraSlots), elastic);
    }

    /** A tick of the barrier's clock: the share-out, then each workload's limit set to its cap. */
    private static void tick(Arbiter arbiter, long now, Arbiter.Member... members) {
        arbiter.tick(now);
        apply(members);
    }

    /** What each workload's controls do after the share-out, when the workload has no adaptive level. */
    private static void apply(Arbiter.Member... members) {
        for (Arbiter.Member m : members) {
            if (m.cap != m.permits.limit()) {
                m.permits.limit(m.cap);
            }
        }
    }

    @ParameterizedTest(name = "virtual threads: {0}")
    @ValueSource(booleans = {false, true})
    void theSharedLimitHoldsWhateverTheInterleaving(boolean virtual) throws Exception {
        int shared = 6;
        var regular = member(5, 50, false);
        var elastic = member(6, 50, true);
        var arbiter = new Arbiter(shared, List.of(regular, elastic), 0);
        apply(regular, elastic);
        var inFlight = new AtomicInteger();
        var most = new AtomicInteger();
        var stop = new AtomicBoolean();
        var threads = new ArrayList<Thread>();
        ThreadFactory factory =
                virtual ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        var started = new CountDownLatch(16);
        for (int i = 0; i < 16; i++) {
            var m = i % 2 == 0 ? regular : elastic;
            threads.add(factory.newThread(() -> {
                started.countDown();
                while (!stop.get()) {
                    var node = new Permits.Node(Thread.currentThread());
                    try {
                        if (!Waits.acquire(m.permits, node, 200_000)) {
                            LockSupport.parkNanos(20_000); // gives the carrier up: a virtual thread must not spin
                            continue;
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                    most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                    // A short park, not Thread.yield(): a yielding virtual thread can keep its carrier from threads
                    // not yet started (16 on 2 carriers stayed unstarted for minutes), a parked one cannot.
                    LockSupport.parkNanos(1_000);
                    inFlight.decrementAndGet();
                    m.permits.exit(node);
                }
            }));
        }
        threads.forEach(Thread::start);
        started.await();
        long now = 0;
        long end = System.nanoTime() + 2_000 * MS;
        int ticks = 0;
        while (System.nanoTime() < end) {
            now += BarrierClock.TICK_MILLIS * MS; // as if a tick's time passed: windows end, congestion comes and goes
            tick(arbiter, now, regular, elastic);
            ticks++;
            if (ticks % 7 == 0) {
                LockSupport.parkNanos(50_000);
            }
        }
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        assertThat(ticks).isGreaterThan(1_000);
        assertThat(most.get())
                .as("operations holding permits at once, of both workloads")
                .isLessThanOrEqualTo(shared)
                .isPositive();
        assertThat(regular.permits.available() + elastic.permits.available())
                .as("all permits back")
                .isEqualTo(regular.permits.limit() + elastic.permits.limit());
    }

    @Test
    void regularWorkFirstElasticKeepsItsFloorAndGrowsWhileThereIsRoom() throws Exception {
        var regular = member(6, 20, false);
        var elastic = member(6, 20, true);
        var arbiter = new Arbiter(8, List.of(regular, elastic), 0);
        apply(regular, elastic);
        assertThat(elastic.permits.limit()).as("elastic starts at its floor").isEqualTo(1);
        // Elastic alone, using all it gets: one more per window, up to what the regular demand leaves (8 - 2).
        var held = new ArrayList<Permits.Node>();
        long now = 0;
        for (int window = 0; window < 20; window++) { // elastic alone, at its limit: one more per window
            while (true) {
                var node = new Permits.Node(Thread.currentThread());
                if (elastic.permits.enter(node, false) != Permits.Entry.ACQUIRED) {
                    break;
                }
                held.add(node);
            }
            for (int tick = 0; tick < TICKS_PER_WINDOW; tick++) {
                now += BarrierClock.TICK_MILLIS * MS;
                tick(arbiter, now, regular, elastic);
            }
        }
        assertThat(elastic.permits.limit())
                .as("grown into the room the regular demand leaves")
                .isEqualTo(6);
        // Regular callers arrive and wait: congestion; the elastic allowance halves per window down to its floor,
        // and the regular limit takes what elastic gives back as it is released.
        var waiters = new ArrayList<Permits.Node>();
        for (int i = 0; i < 6; i++) {
            var node = new Permits.Node(Thread.currentThread());
            var entry = regular.permits.enter(node, false);
            if (entry == Permits.Entry.ACQUIRED) {
                waiters.add(node);
            }
        }
        var queued = new Permits.Node(Thread.currentThread());
        assertThat(Waits.enterAndQueue(regular.permits, queued)).isEqualTo(Permits.Entry.MUST_WAIT);
        for (int tick = 0; tick < TICKS_PER_WINDOW; tick++) { // a window with a regular caller waiting
            now += BarrierClock.TICK_MILLIS * MS;
            tick(arbiter, now, regular, elastic);
        }
        assertThat(arbiter.congested()).isTrue();
        assertThat(elastic.permits.limit()).as("the elastic allowance halved").isEqualTo(3);
        for (int tick = 0; tick < 4 * TICKS_PER_WINDOW; tick++) {
            now += BarrierClock.TICK_MILLIS * MS;
            tick(arbiter, now, regular, elastic);
            if (!held.isEmpty()) {
                elastic.permits.exit(held.removeLast()); // elastic work finishing
            }
        }
        assertThat(elastic.permits.limit())
                .as("what the regular demand (its B) leaves of 8, its floor at least")
                .isBetween(1, 2);
        assertThat(regular.permits.limit()).as("its whole B").isEqualTo(6);
        assertThat(regular.permits.limit() + elastic.permits.limit()).isLessThanOrEqualTo(8);
        assertThat(regular.permits.waiting())
                .as("the queued regular caller got a permit elastic gave back")
                .isZero();
    }
}
