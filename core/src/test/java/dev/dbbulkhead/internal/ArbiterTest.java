package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.Sharing;
import java.time.Duration;
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
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The arbiter over real {@link Permits}, without a database: the shared limit under races (callers of a regular and an
 * elastic workload entering and leaving on many threads while the arbiter ticks as fast as it can), regular work
 * first, the elastic floor, and elastic growth while there is room. Ticks are driven by the test, on an injected clock.
 */
@Tag("no-db")
class ArbiterTest {
    private static final long MS = 1_000_000;

    /** A workload under the arbiter whose cap is its limit (no adaptive level). */
    private static Arbiter.Member member(int concurrent, int extraSlots, boolean elastic) {
        return Arbiter.Member.of(new Permits(concurrent, extraSlots), elastic, Duration.ZERO, false);
    }

    private static Arbiter.Elastic elastic(int concurrent, int extraSlots) {
        return new Arbiter.Elastic(new Permits(concurrent, extraSlots));
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

    @ParameterizedTest(name = "virtual threads: {0}, a second elastic workload: {1}")
    @CsvSource({"false, false", "true, false", "false, true", "true, true"})
    void theSharedLimitHoldsWhateverTheInterleaving(boolean virtual, boolean third) throws Exception {
        int shared = 6;
        // Regular operations of 0.5 ms against an objective of 1 ms, in turns of 2 ms ones (late): windows met and
        // missed in turn, so that the elastic allowances grow, halve and fall to the floor while callers come and go.
        var regular = new Arbiter.Regular(new Permits(third ? 4 : 5, 50), Duration.ofMillis(1), false);
        var elastic = elastic(6, 50);
        var second = elastic(6, 50);
        var members = third ? List.of(regular, elastic, second) : List.of(regular, elastic);
        var arbiter = new Arbiter(shared, members, 0);
        var all = members.toArray(Arbiter.Member[]::new);
        apply(all);
        var inFlight = new AtomicInteger();
        var most = new AtomicInteger();
        var grew = new AtomicInteger();
        var halved = new AtomicInteger();
        var stop = new AtomicBoolean();
        var late = new AtomicBoolean();
        var threads = new ArrayList<Thread>();
        ThreadFactory factory =
                virtual ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        var started = new CountDownLatch(16);
        for (int i = 0; i < 16; i++) {
            // Two regular callers, so that the headroom (their peak, and one) leaves the elastic ones room to grow.
            var m = i < 2 ? regular : members.get(1 + i % (members.size() - 1));
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
                    long latency = late.get() ? 2 * MS : MS / 2;
                    m.released(latency, latency);
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
            late.set(ticks / 100 % 4 == 3); // one turn in four late: windows of 20 ticks met, then missed
            int before = elastic.allowance;
            tick(arbiter, now, all);
            if (elastic.allowance > before) {
                grew.incrementAndGet();
            } else if (elastic.allowance < before) {
                halved.incrementAndGet();
            }
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
        assertThat(grew.get()).as("windows where an elastic allowance grew").isPositive();
        assertThat(halved.get()).as("windows where it was cut").isPositive();
        assertThat(most.get())
                .as("operations holding permits at once, of every workload")
                .isLessThanOrEqualTo(shared)
                .isPositive();
        for (Arbiter.Member m : members) {
            assertThat(m.permits.available()).as("all permits back").isEqualTo(m.permits.limit());
            assertThat(m.permits.limit()).as("each at least its floor").isPositive();
        }
    }

    /** A regular workload that borrows what the others leave idle, up to {@code shared}. */
    private static Arbiter.Member borrower(int concurrent, int shared) {
        return new Arbiter.Regular(new Permits(concurrent, 50, shared), Duration.ZERO, true);
    }

    @Test
    void aBorrowerTakesWhatAnIdleWorkloadLeavesAndGivesItBackAsItsOperationsEnd() throws Exception {
        int shared = 6;
        var borrower = borrower(4, shared);
        var lender = member(2, 50, false);
        var arbiter = new Arbiter(shared, List.of(borrower, lender), 0);
        var all = new Arbiter.Member[] {borrower, lender};
        var held = new ArrayList<Permits.Node>();
        fill(borrower, held);
        assertThat(held).as("its B at first").hasSize(4);
        for (int i = 1; i <= 4; i++) { // it grows by a quarter of its B a tick while it uses all it has
            tick(arbiter, i * MS, all);
            fill(borrower, held);
        }
        assertThat(held).as("all of the shared limit: the lender is idle").hasSize(shared);
        assertThat(lender.permits.limit()).as("the idle lender lent all").isZero();
        // The lender's caller comes back: it waits, holding a slot, for a borrowed permit to come back.
        var waiter = new Permits.Node(Thread.currentThread());
        assertThat(lender.permits.enter(waiter, true)).isEqualTo(Permits.Entry.MUST_WAIT);
        assertThat(lender.permits.queue(waiter)).isEqualTo(Permits.Entry.MUST_WAIT);
        tick(arbiter, 10 * MS, all);
        assertThat(borrower.permits.limit())
                .as("the borrower's limit drops at once")
                .isLessThan(shared);
        assertThat(lender.permits.limit())
                .as("no room yet: every permit is still held")
                .isZero();
        borrower.permits.exit(held.removeLast()); // one borrowed operation ends: its permit is not given again
        var again = new Permits.Node(Thread.currentThread());
        assertThat(borrower.permits.enter(again, false)).isNotEqualTo(Permits.Entry.ACQUIRED);
        tick(arbiter, 20 * MS, all);
        assertThat(lender.permits.limit())
                .as("the lender gets it back at the next tick")
                .isPositive();
        assertThat(lender.permits.await(waiter, 1_000 * MS))
                .as("its waiter is granted the permit")
                .isEqualTo(Permits.Entry.ACQUIRED);
        lender.permits.exit(waiter);
        for (Permits.Node n : held) {
            borrower.permits.exit(n);
        }
        tick(arbiter, 30 * MS, all);
        assertThat(borrower.permits.available() + lender.permits.available())
                .as("every permit back, none created")
                .isLessThanOrEqualTo(shared);
    }

    /**
     * Permits that an elastic workload's allowance withholds while its callers wait are not idle: a regular workload
     * does not borrow them (it would put back the load the allowance keeps off the regular objective), and borrows
     * them once the elastic workload is idle.
     */
    @Test
    void aBorrowerDoesNotTakeWhatTheElasticAllowanceWithholds() throws Exception {
        int shared = 8;
        var borrower = borrower(3, shared);
        var batch = elastic(8, 50);
        var arbiter = new Arbiter(shared, List.of(borrower, batch), 0);
        var all = new Arbiter.Member[] {borrower, batch};
        apply(all);
        var batchHeld = new ArrayList<Permits.Node>();
        var waiting = new ArrayList<Permits.Node>(); // batch callers waiting beyond the allowance
        var held = new ArrayList<Permits.Node>();
        for (int i = 1; i <= 20; i++) {
            fill(batch, batchHeld);
            while (i == 1 && waiting.size() < 10) {
                var node = new Permits.Node(Thread.currentThread());
                assertThat(batch.permits.enter(node, true)).isEqualTo(Permits.Entry.MUST_WAIT);
                assertThat(batch.permits.queue(node)).isEqualTo(Permits.Entry.MUST_WAIT);
                waiting.add(node);
            }
            fill(borrower, held);
            tick(arbiter, i * MS, all);
            assertThat(borrower.permits.limit())
                    .as("tick %d: the batch waits, nothing of it is idle", i)
                    .isLessThanOrEqualTo(3);
        }
        waiting.forEach(batch.permits::abandon); // the waiting batch callers leave
        for (Permits.Node n : batchHeld) {
            batch.permits.exit(n);
        }
        for (int i = 21; i <= 40; i++) {
            fill(borrower, held);
            tick(arbiter, i * MS, all);
        }
        assertThat(held).as("the batch idle: its permits lent").hasSizeGreaterThan(3);
        for (Permits.Node n : held) {
            borrower.permits.exit(n);
        }
    }

    @ParameterizedTest(name = "virtual threads: {0}")
    @CsvSource({"false", "true"})
    void borrowersNeverHaveMoreThanTheSharedLimitInFlightWhateverTheInterleaving(boolean virtual) throws Exception {
        int shared = 6;
        var first = borrower(2, shared); // 2 + 2 + 1 and the elastic floor: the shared limit, as the builder checks
        var second = borrower(2, shared);
        var lender = member(1, 50, false);
        var elastic = elastic(6, 50);
        var members = List.of(first, second, lender, elastic);
        var arbiter = new Arbiter(shared, members, 0);
        var all = members.toArray(Arbiter.Member[]::new);
        apply(all);
        var inFlight = new AtomicInteger();
        var most = new AtomicInteger();
        var borrowed = new AtomicInteger();
        var stop = new AtomicBoolean();
        var threads = new ArrayList<Thread>();
        ThreadFactory factory =
                virtual ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        var lenderIdle = new AtomicBoolean();
        var elasticIdle = new AtomicBoolean(); // what an elastic workload's allowance withholds is not lent
        var started = new CountDownLatch(16);
        for (int i = 0; i < 16; i++) {
            var m = members.get(i % members.size());
            threads.add(factory.newThread(() -> {
                started.countDown();
                while (!stop.get()) {
                    if ((m == lender && lenderIdle.get()) || (m == elastic && elasticIdle.get())) {
                        // the lender's and the elastic workload's callers come and go: they lend, then ask back
                        LockSupport.parkNanos(20_000);
                        continue;
                    }
                    var node = new Permits.Node(Thread.currentThread());
                    try {
                        if (!Waits.acquire(m.permits, node, 200_000)) {
                            LockSupport.parkNanos(20_000);
                            continue;
                        }
                    } catch (InterruptedException e) {
                        return;
                    }
                    most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                    if (m.permits.executing() > m.permits.concurrent()) {
                        borrowed.incrementAndGet();
                    }
                    LockSupport.parkNanos(1_000);
                    inFlight.decrementAndGet();
                    m.permits.exit(node);
                    m.released(MS / 2, MS / 2);
                }
            }));
        }
        threads.forEach(Thread::start);
        started.await();
        long now = 0;
        long end = System.nanoTime() + 2_000 * MS;
        int ticks = 0;
        while (System.nanoTime() < end) {
            now += BarrierClock.TICK_MILLIS * MS;
            lenderIdle.set(ticks / 50 % 2 == 1);
            elasticIdle.set(ticks / 70 % 2 == 1);
            tick(arbiter, now, all);
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
                .as("operations holding permits at once, of every workload")
                .isLessThanOrEqualTo(shared)
                .isPositive();
        assertThat(borrowed.get())
                .as("operations run beyond their workload's B, on borrowed permits")
                .isPositive();
        for (Arbiter.Member m : members) {
            assertThat(m.permits.executing()).as("nothing left held").isZero();
            assertThat(m.permits.available()).as("all permits back").isEqualTo(m.permits.limit());
        }
    }

    /** Elastic work that takes every permit it is allowed, at each tick: it is always at its limit. */
    private static void fill(Arbiter.Member elastic, List<Permits.Node> held) throws InterruptedException {
        while (true) {
            var node = new Permits.Node(Thread.currentThread());
            if (elastic.permits.enter(node, false) != Permits.Entry.ACQUIRED) {
                return;
            }
            held.add(node);
        }
    }

    /** A model of the barrier: windows of regular operations, elastic work always at its limit, the test's clock. */
    private static final class Model {
        final Arbiter.Regular regular;
        final Arbiter.Elastic elastic;
        final Arbiter arbiter;
        final List<Permits.Node> held = new ArrayList<>();
        long now;

        Model(int shared, Arbiter.Regular regular, Arbiter.Elastic elastic) {
            this.regular = regular;
            this.elastic = elastic;
            this.arbiter = new Arbiter(shared, List.of(regular, elastic), 0);
            apply(regular, elastic);
        }

        /** One window: {@code ops} regular operations of {@code millis} each, {@code late} of them at 10 × that. */
        void window(int ops, long millis, int late) throws InterruptedException {
            for (int i = 0; i < ops; i++) {
                long latency = (i < late ? 10 : 1) * millis * MS;
                regular.released(latency, latency);
            }
            for (long t = 0; t < Arbiter.WINDOW_MILLIS; t += BarrierClock.TICK_MILLIS) {
                fill(elastic, held);
                now += BarrierClock.TICK_MILLIS * MS;
                tick(arbiter, now, regular, elastic);
                if (held.size() > elastic.permits.limit()) { // elastic work above a lowered limit finishing
                    elastic.permits.exit(held.removeLast());
                }
            }
        }
    }

    @Test
    void theElasticAllowanceGrowsWhileTheObjectiveIsMetAndHalvesWhenMissed() throws Exception {
        var regular = new Arbiter.Regular(new Permits(6, 20), Duration.ofMillis(20), false);
        var model = new Model(10, regular, elastic(8, 20));
        var elastic = model.elastic;
        assertThat(elastic.permits.limit()).as("elastic starts at its floor").isEqualTo(1);
        var holding = new ArrayList<Permits.Node>();
        fill(regular, holding); // regular work holding all six: its demand, and the headroom (6 + 1)
        while (holding.size() > 2) {
            regular.permits.exit(holding.removeLast()); // two left: the demand the headroom keeps room for
        }
        model.window(100, 5, 0); // the peak of 6 stays in the headroom's second
        for (int w = 0; w < 12; w++) {
            model.window(100, 5, 0);
        }
        assertThat(elastic.sharing().state()).isEqualTo(Sharing.State.NO_ROOM);
        assertThat(elastic.allowance)
                .as("grown, one per window, to S − headroom (2 + 1)")
                .isEqualTo(7);
        for (int w = 0; w < 100; w++) { // the peak of 6 has left the headroom's second
            model.window(100, 5, 0);
        }
        assertThat(elastic.sharing().headroom()).isEqualTo(3);
        assertThat(elastic.permits.limit()).isEqualTo(7);
        assertThat(regular.sharing().state()).isEqualTo(Sharing.State.OBJECTIVE_MET);

        model.window(100, 5, 5); // 5 % over the objective: missed
        assertThat(elastic.sharing().state()).isEqualTo(Sharing.State.OBJECTIVE_MISSED);
        assertThat(regular.sharing().state()).isEqualTo(Sharing.State.OBJECTIVE_MISSED);
        assertThat(elastic.allowance).as("halved").isEqualTo(3);
        model.window(100, 5, 0);
        assertThat(elastic.allowance).as("one more per window met").isEqualTo(4);
        model.window(100, 5, 1); // 1 % over: still met
        assertThat(elastic.allowance).isEqualTo(5);
        model.window(100, 5, 20); // one in five over: to the floor at once
        assertThat(elastic.allowance).as("the floor").isEqualTo(1);
        assertThat(elastic.permits.limit()).isEqualTo(1);
        for (int i = 0; i < 20; i++) {
            regular.refused(); // callers refused count as over the objective
        }
        model.window(80, 5, 0);
        assertThat(elastic.allowance).as("never below the floor").isEqualTo(1);
        assertThat(elastic.sharing().state()).isEqualTo(Sharing.State.OBJECTIVE_MISSED);
        holding.forEach(regular.permits::exit);
        model.held.forEach(elastic.permits::exit);
    }

    @Test
    void aLevelThatMissedIsTriedAgainOnlyAfterBackingOff() throws Exception {
        var regular = new Arbiter.Regular(new Permits(6, 20), Duration.ofMillis(20), false);
        var model = new Model(16, regular, elastic(8, 20));
        var elastic = model.elastic;
        for (int w = 0; w < 3; w++) {
            model.window(100, 5, 0);
        }
        assertThat(elastic.allowance).isEqualTo(4);
        model.window(100, 5, 5); // 4 misses: back to 2, and 4 waits two windows met at 3
        assertThat(elastic.allowance).isEqualTo(2);
        model.window(100, 5, 0);
        assertThat(elastic.allowance).isEqualTo(3);
        for (int w = 0; w < 2; w++) {
            model.window(100, 5, 0);
            assertThat(elastic.sharing().state()).isEqualTo(Sharing.State.BACKING_OFF);
            assertThat(elastic.allowance).isEqualTo(3);
        }
        model.window(100, 5, 0);
        assertThat(elastic.allowance)
                .as("tried again after two windows met at 3")
                .isEqualTo(4);
        model.window(100, 5, 5); // 4 misses again: it now waits four windows
        assertThat(elastic.allowance).isEqualTo(2);
        int windows = 0;
        while (elastic.allowance < 4) {
            model.window(100, 5, 0);
            windows++;
        }
        assertThat(windows).as("one window to 3, four at 3, one to 4").isEqualTo(6);
        model.held.forEach(elastic.permits::exit);
    }

    @Test
    void withoutRegularWorkElasticGetsAllTheRoomAtOnceAndTheFloorWhileAnObjectiveIsLearned() throws Exception {
        var regular = new Arbiter.Regular(new Permits(6, 20), Duration.ZERO, false); // no objective set: learned
        var model = new Model(10, regular, elastic(8, 20));
        var elastic = model.elastic;
        model.window(0, 5, 0);
        assertThat(elastic.sharing().state()).isEqualTo(Sharing.State.IDLE);
        assertThat(elastic.allowance).isEqualTo(8);
        model.window(0, 5, 0); // the regular cap comes down as the elastic one goes up
        assertThat(elastic.permits.limit())
                .as("all the room: S − (0 + 1), at most its B")
                .isEqualTo(8);
        model.window(100, 10, 0);
        assertThat(elastic.sharing().state()).as("no objective yet").isEqualTo(Sharing.State.LEARNING);
        assertThat(elastic.allowance).isEqualTo(1);
        assertThat(regular.sharing().objective()).isNull();
        int windows = 0;
        while (regular.sharing().objective() == null) { // once a window has elastic work at its floor throughout
            model.window(100, 10, 0);
            windows++;
            assertThat(elastic.allowance).isEqualTo(regular.sharing().objective() == null ? 1 : 2);
        }
        assertThat(windows)
                .as("the elastic work above the floor finishes, then one window at it")
                .isEqualTo(2);
        assertThat(regular.sharing().objective()).isBetween(Duration.ofMillis(12), Duration.ofMillis(18));
        assertThat(regular.sharing().objectiveLearned()).isTrue();
        assertThat(regular.sharing().recentP99()).isBetween(Duration.ofMillis(8), Duration.ofMillis(12));
        model.window(100, 10, 0);
        assertThat(elastic.allowance).as("met: one more").isEqualTo(3);
        model.window(100, 10, 10); // 10 ms × 10 is over 15 ms
        assertThat(elastic.sharing().state()).isEqualTo(Sharing.State.OBJECTIVE_MISSED);
        assertThat(elastic.allowance).isEqualTo(1);
        model.held.forEach(elastic.permits::exit);
    }
}
