package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.SqlWork;
import java.io.InputStream;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The rule of {@link Kinds}, step by step: the caps it sets from rates and holds, that a cap binds only while no
 * permit is free, that it never lets more of a kind in than its cap under racing callers, the names it gives call
 * sites, and that 10,000 distinct call-site classes leave it bounded.
 */
@Tag("no-db")
class KindsRuleTest {
    private static final long MS = 1_000_000;

    @Test
    void aKindLongerThanTheMeanGetsItsArrivalShareTimesMeanOverItsHoldAndAtLeastOne() {
        // s4-mixed: 90 % at 2 ms, 10 % at 100 ms, L = 16: the mean is 11.8 ms.
        double mean = 0.9 * 2 + 0.1 * 100;
        assertThat(Kinds.cap(0.9, 2, 1, mean, 16))
                .as("shorter than the mean: no cap")
                .isEqualTo(Integer.MAX_VALUE);
        assertThat(Kinds.cap(0.1, 100, 1, mean, 16))
                .as("16 × 0.1 × 11.8 / 100 = 0.19: its floor")
                .isEqualTo(1);
        // Three kinds, the slowest 20 % of arrivals: 2 ms 60 %, 20 ms 20 %, 200 ms 20 %: mean 45.2 ms.
        double shifted = 0.6 * 2 + 0.2 * 20 + 0.2 * 200;
        assertThat(Kinds.cap(0.2, 20, 1, shifted, 16)).isEqualTo(Integer.MAX_VALUE);
        assertThat(Kinds.cap(0.2, 200, 1, shifted, 16)).isEqualTo(1);
        // Two kinds of similar cost: the longer one keeps most of its share.
        double close = 0.5 * 10 + 0.5 * 12;
        assertThat(Kinds.cap(0.5, 12, 1, close, 16)).isEqualTo(7); // 16 × 0.5 × 11 / 12 = 7.3
        assertThat(Kinds.cap(0.01, 500, 1, 10, 16))
                .as("1 % of arrivals: still one")
                .isEqualTo(1);
        assertThat(Kinds.cap(0, 0, 0, 0, 16)).as("nothing measured yet").isEqualTo(Integer.MAX_VALUE);
    }

    /** Two kinds arriving over folds of the clock: the slow one is capped, the fast one is not. */
    @Test
    void theClockLearnsRatesAndHoldsAndSetsCaps() {
        var permits = new Permits(16, 0);
        var kinds = new Kinds(permits, 0);
        Kinds.Kind fast = kinds.of("fast");
        Kinds.Kind slow = kinds.of("slow");
        long now = 0;
        for (int window = 0; window < 20; window++) {
            for (int i = 0; i < 90; i++) {
                Kinds.arrived(fast);
                Kinds.held(fast, 2 * MS);
            }
            for (int i = 0; i < 10; i++) {
                Kinds.arrived(slow);
                Kinds.held(slow, 100 * MS);
            }
            for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
                now += 10 * MS;
                kinds.tick(now);
            }
        }
        assertThat(fast.cap()).isEqualTo(Integer.MAX_VALUE);
        assertThat(slow.cap()).isEqualTo(1);
        List<KindStats> stats = kinds.stats();
        assertThat(stats).extracting(KindStats::name).containsExactly("slow", "fast");
        KindStats s = stats.getFirst();
        assertThat(s.arrivalsPerSecond()).isBetween(95.0, 101.0);
        assertThat(s.share()).isBetween(0.099, 0.101);
        assertThat(s.meanHold().toMillis()).isEqualTo(100);
        assertThat(s.holdP99().toNanos()).isBetween(81 * MS, 119 * MS);
        assertThat(s.cap()).isEqualTo(1);
        assertThat(stats.get(1).cap()).isEqualTo(-1);
    }

    @Test
    void aCapBindsOnlyWhileNoPermitIsFree() throws Exception {
        var permits = new Permits(2, 0);
        var kinds = new Kinds(permits, 0);
        Kinds.Kind slow = capped(kinds, permits);
        assertThat(slow.cap()).isEqualTo(1);
        assertThat(kinds.enter(slow)).isTrue();
        assertThat(kinds.enter(slow)).as("at its cap, but a permit is free").isTrue();
        var a = new Permits.Node(Thread.currentThread());
        var b = new Permits.Node(Thread.currentThread());
        assertThat(permits.enter(a, false)).isEqualTo(Permits.Entry.ACQUIRED);
        assertThat(permits.enter(b, false)).isEqualTo(Permits.Entry.ACQUIRED);
        assertThat(kinds.enter(slow)).as("at its cap, no permit free").isFalse();
        slow.left();
        assertThat(kinds.enter(slow)).as("still at its cap of one").isFalse();
        slow.left();
        assertThat(kinds.enter(slow)).as("below its cap").isTrue();
        assertThat(kinds.stats().getFirst().capped()).isEqualTo(2);
        permits.exit(a);
        permits.exit(b);
    }

    /** Racing callers with no permit free: never more of the kind inside than its cap. */
    @Test
    void racingCallersNeverPutMoreOfAKindInsideThanItsCap() throws Exception {
        for (int round = 0; round < 50; round++) {
            var permits = new Permits(1, 0);
            var kinds = new Kinds(permits, 0);
            Kinds.Kind slow = capped(kinds, permits);
            var held = new Permits.Node(Thread.currentThread());
            assertThat(permits.enter(held, false)).isEqualTo(Permits.Entry.ACQUIRED);
            var start = new CountDownLatch(1);
            var entered = new AtomicInteger();
            try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
                var calls = new ArrayList<Future<?>>();
                for (int i = 0; i < 8; i++) {
                    calls.add(threads.submit(() -> {
                        start.await();
                        if (kinds.enter(slow)) {
                            entered.incrementAndGet();
                        }
                        return null;
                    }));
                }
                start.countDown();
                for (var call : calls) {
                    call.get(10, TimeUnit.SECONDS);
                }
            }
            assertThat(entered.get()).isEqualTo(1);
            assertThat(slow.inside()).isEqualTo(1);
            permits.exit(held);
        }
    }

    /** A kind capped at one: slow beside fast, learned over a few folds. */
    private static Kinds.Kind capped(Kinds kinds, Permits permits) {
        Kinds.Kind fast = kinds.of("fast");
        Kinds.Kind slow = kinds.of("slow");
        long now = 0;
        for (int window = 0; window < 5; window++) {
            for (int i = 0; i < 9; i++) {
                Kinds.arrived(fast);
                Kinds.held(fast, MS);
            }
            Kinds.arrived(slow);
            Kinds.held(slow, 100 * MS);
            for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
                now += 10 * MS;
                kinds.tick(now);
            }
        }
        assertThat(permits.available()).isPositive();
        return slow;
    }

    @Test
    void aLambdaIsNamedAfterItsClassAndANumber() {
        var kinds = new Kinds(new Permits(1, 0), 0);
        SqlWork<Integer> one = c -> 1;
        SqlWork<Integer> two = c -> 2;
        assertThat(kinds.of(one.getClass()).name).isEqualTo("KindsRuleTest#1");
        assertThat(kinds.of(two.getClass()).name).isEqualTo("KindsRuleTest#2");
        assertThat(kinds.of(one.getClass())).isSameAs(kinds.of(one.getClass()));
        assertThat(kinds.of(Work.class).name).isEqualTo("KindsRuleTest$Work");
    }

    @Test
    void holdQuantilesAreWithinTheirBucket() {
        var holds = new Kinds.Holds();
        for (long ms = 1; ms <= 100; ms++) {
            holds.record(ms * MS);
        }
        assertThat(holds.quantile(0.5)).isBetween(40 * MS, 60 * MS);
        assertThat(holds.quantile(0.99)).isBetween(81 * MS, 119 * MS);
        holds.decay();
        assertThat(holds.quantile(0.5)).isBetween(35 * MS, 65 * MS);
        assertThat(new Kinds.Holds().quantile(0.5)).isZero();
    }

    /** Ten thousand call-site classes (the same class defined by as many loaders): at most 32 kinds, and "other". */
    @Test
    void tenThousandCallSitesLeaveItBounded() throws Exception {
        byte[] bytes;
        try (InputStream in = Work.class.getResourceAsStream("KindsRuleTest$Work.class")) {
            bytes = in.readAllBytes();
        }
        var kinds = new Kinds(new Permits(4, 0), 0);
        var seen = new java.util.HashSet<Kinds.Kind>();
        for (int i = 0; i < 10_000; i++) {
            Class<?> type = new Loader(bytes).type();
            Kinds.Kind kind = kinds.of(type);
            Kinds.arrived(kind);
            seen.add(kind);
        }
        for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
            kinds.tick((t + 1) * 10 * MS);
        }
        assertThat(seen).hasSize(Kinds.TRACKED + 1);
        List<KindStats> stats = kinds.stats();
        assertThat(stats).hasSize(Kinds.TRACKED + 1);
        assertThat(stats.getFirst().name()).as("the tail, busiest: " + stats).isEqualTo(Kinds.OTHER);
    }

    /** A call site: a class of its own. */
    static final class Work implements SqlWork<Integer> {
        @Override
        public Integer run(Connection connection) {
            return 1;
        }
    }

    /** Defines {@link Work} once more, as a class of its own. */
    private static final class Loader extends ClassLoader {
        private final byte[] bytes;

        Loader(byte[] bytes) {
            super(KindsRuleTest.class.getClassLoader());
            this.bytes = bytes;
        }

        Class<?> type() {
            return defineClass(Work.class.getName(), bytes, 0, bytes.length);
        }
    }
}
