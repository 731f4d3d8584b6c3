package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.SqlWork;
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
    void aKindMuchLongerThanTheMedianGetsItsArrivalShareTimesMedianOverItsHoldAndAtLeastOne() {
        // s4-mixed: 90 % at 2 ms, 10 % at 100 ms, L = 16: the median operation holds 2 ms.
        assertThat(Kinds.cap(0.9, 2, 1, 2, 16)).as("the median kind: no cap").isEqualTo(Integer.MAX_VALUE);
        assertThat(Kinds.cap(0.1, 100, 1, 2, 16))
                .as("16 × 0.1 × 2 / 100 = 0.03: its floor")
                .isEqualTo(1);
        // Three kinds, the slowest 20 % of arrivals: 2 ms 60 %, 20 ms 20 %, 200 ms 20 %: the median is 2 ms.
        assertThat(Kinds.cap(0.2, 20, 1, 2, 16)).isEqualTo(1);
        assertThat(Kinds.cap(0.2, 200, 1, 2, 16)).isEqualTo(1);
        // Within twice the median: not capped; a bit beyond: most of its share.
        assertThat(Kinds.cap(0.5, 12, 1, 10, 16)).isEqualTo(Integer.MAX_VALUE);
        assertThat(Kinds.cap(0.5, 25, 1, 10, 16)).isEqualTo(3); // 16 × 0.5 × 10 / 25 = 3.2
        assertThat(Kinds.cap(0.01, 500, 1, 10, 16))
                .as("1 % of arrivals: still one")
                .isEqualTo(1);
        assertThat(Kinds.cap(0, 0, 0, 0, 16)).as("nothing measured yet").isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void theMedianHoldIsThatOfTheKindTheMedianOperationBelongsTo() {
        var kinds = new Kinds(new Permits(16, 0), 0);
        assertThat(Kinds.medianHold(List.of())).isZero();
        Kinds.Kind fast = arrived(kinds, "fast", 60, 2);
        Kinds.Kind mid = arrived(kinds, "mid", 20, 20);
        Kinds.Kind slow = arrived(kinds, "slow", 20, 200);
        for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
            kinds.tick(100 * MS);
        }
        // Costs are read from buckets within 19 %.
        assertThat(Kinds.medianHold(List.of(fast, mid, slow))).isBetween(1.6 * MS, 2.4 * MS);
        assertThat(Kinds.medianHold(List.of(mid, slow)))
                .as("half each: the shorter")
                .isBetween(16.0 * MS, 24.0 * MS);
        assertThat(Kinds.medianHold(List.of(slow, fast))).isBetween(1.6 * MS, 2.4 * MS);
    }

    /** A kind that arrived {@code n} times and held {@code ms} each time. */
    private static Kinds.Kind arrived(Kinds kinds, String name, int n, long ms) {
        Kinds.Kind kind = kinds.of(name);
        for (int i = 0; i < n; i++) {
            Kinds.left(kind, false, ms * MS); // a completion: an arrival and its hold
        }
        return kind;
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
                Kinds.left(fast, false, 2 * MS); // a completion: an arrival and its hold
            }
            for (int i = 0; i < 10; i++) {
                Kinds.left(slow, false, 100 * MS); // a completion: an arrival and its hold
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
        assertThat(s.meanHold().toMillis()).as("within its bucket").isBetween(81L, 119L);
        assertThat(s.holdP99().toNanos()).isBetween(81 * MS, 119 * MS);
        assertThat(s.cap()).isEqualTo(1);
        assertThat(stats.get(1).cap()).isEqualTo(-1);
    }

    @Test
    void aCapBindsOnlyWhileNoPermitIsFreeOrACallerFoundNoneInTheLastWindow() throws Exception {
        var permits = new Permits(2, 0);
        var kinds = new Kinds(permits, 0);
        Kinds.Kind slow = capped(kinds, permits);
        assertThat(slow.cap()).isEqualTo(1);
        assertThat(kinds.enter(slow)).as("a permit free: in, not even counted").isEqualTo(Kinds.Decision.FREE);
        assertThat(kinds.enter(slow)).isEqualTo(Kinds.Decision.FREE);
        assertThat(slow.inside()).isZero();
        var a = new Permits.Node(Thread.currentThread());
        var b = new Permits.Node(Thread.currentThread());
        assertThat(permits.enter(a, false)).isEqualTo(Permits.Entry.ACQUIRED);
        assertThat(permits.enter(b, false)).isEqualTo(Permits.Entry.ACQUIRED);
        assertThat(kinds.enter(slow)).as("no permit free: counted").isEqualTo(Kinds.Decision.COUNTED);
        assertThat(kinds.enter(slow)).as("at its cap, no permit free").isEqualTo(Kinds.Decision.CAPPED);
        Kinds.left(slow, true, -1);
        assertThat(slow.inside()).isZero();
        assertThat(kinds.enter(slow)).as("below its cap").isEqualTo(Kinds.Decision.COUNTED);
        assertThat(kinds.stats().getFirst().capped()).isEqualTo(1);
        permits.exit(a);
        permits.exit(b);
        fold(kinds, 1_000); // callers found no permit free in this window: the next is contended
        assertThat(kinds.enter(slow))
                .as("a permit is free, but the last window was contended")
                .isEqualTo(Kinds.Decision.CAPPED);
        Kinds.left(slow, true, 100 * MS);
        fold(kinds, 2_000);
        assertThat(kinds.enter(slow)).as("a quiet window: no cap binds").isEqualTo(Kinds.Decision.FREE);
    }

    private static void fold(Kinds kinds, long ms) {
        for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
            kinds.tick(ms * MS);
        }
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
                        if (kinds.enter(slow) == Kinds.Decision.COUNTED) {
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
                Kinds.left(fast, false, MS); // a completion: an arrival and its hold
            }
            Kinds.left(slow, false, 100 * MS); // a completion: an arrival and its hold
            for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
                now += 10 * MS;
                kinds.tick(now);
            }
        }
        assertThat(permits.available()).isPositive();
        return slow;
    }

    /** A lambda is named where the barrier was first called for it: its class, method and line. */
    @Test
    void aLambdaIsNamedWhereItIsCalledFrom() {
        var kinds = new Kinds(new Permits(1, 0), 0);
        SqlWork<Integer> one = c -> 1;
        SqlWork<Integer> two = c -> 2;
        String first = kinds.of(one.getClass()).name;
        String second = kinds.of(two.getClass()).name;
        assertThat(first).matches("KindsRuleTest\\.aLambdaIsNamedWhereItIsCalledFrom:\\d+");
        assertThat(second)
                .matches("KindsRuleTest\\.aLambdaIsNamedWhereItIsCalledFrom:\\d+")
                .isNotEqualTo(first);
        assertThat(kinds.of(one.getClass())).isSameAs(kinds.of(one.getClass()));
        assertThat(kinds.of(Work.class).name).isEqualTo("KindsRuleTest$Work");
    }

    /**
     * One call site whose operations send one shape of statement stays one kind; once a second shape is seen, each
     * operation counts as its first statement's shape, and a slow shape is capped by the same rule as a slow call site,
     * the fast one never.
     */
    @Test
    void aCallSiteThatSendsTwoShapesIsSplitByShape() throws Exception {
        var permits = new Permits(8, 0);
        var kinds = new Kinds(permits, 0);
        SqlWork<Integer> helper = c -> 1;
        Kinds.Kind site = kinds.of(helper.getClass());
        String fastSql = "SELECT * FROM orders WHERE id = 1";
        String slowSql = "SELECT sum(total) FROM orders WHERE day > '2026-01-01'";
        assertThat(kinds.refine(site, fastSql, false)).as("one shape so far").isSameAs(site);
        assertThat(kinds.refine(site, "SELECT * FROM orders WHERE id = 2", false))
                .isSameAs(site);
        Kinds.Kind slow = kinds.refine(site, slowSql, false);
        assertThat(slow).isNotSameAs(site);
        assertThat(slow.name).isEqualTo("select sum ( total ) from orders where day > ?");
        Kinds.Kind fast = kinds.refine(site, fastSql, false);
        assertThat(fast)
                .as("mixed: every operation by its shape")
                .isNotSameAs(site)
                .isNotSameAs(slow);
        assertThat(kinds.refine(slow, fastSql, false))
                .as("a shape's kind is not refined again")
                .isSameAs(slow);
        assertThat(kinds.refine(kinds.of("named"), slowSql, false))
                .as("nor a named one")
                .isSameAs(kinds.of("named"));
        long now = 0;
        for (int window = 0; window < 20; window++) {
            for (int i = 0; i < 90; i++) {
                Kinds.left(fast, false, 2 * MS);
            }
            for (int i = 0; i < 10; i++) {
                Kinds.left(slow, false, 100 * MS);
            }
            for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
                now += 10 * MS;
                kinds.tick(now);
            }
        }
        assertThat(slow.cap()).isBetween(1, 2);
        assertThat(fast.cap()).isEqualTo(Integer.MAX_VALUE);
        assertThat(site.cap()).as("the mixed call site caps nothing itself").isEqualTo(Integer.MAX_VALUE);
        var held = new java.util.ArrayList<Permits.Node>();
        while (permits.available() > 0) {
            var node = new Permits.Node(Thread.currentThread());
            assertThat(permits.enter(node, false)).isEqualTo(Permits.Entry.ACQUIRED);
            held.add(node);
        }
        assertThat(kinds.move(site, false, slow)).isEqualTo(Kinds.Decision.COUNTED);
        while (slow.inside() < slow.cap()) {
            assertThat(kinds.move(site, false, slow)).isEqualTo(Kinds.Decision.COUNTED);
        }
        assertThat(kinds.move(site, false, slow))
                .as("at its cap while contended")
                .isEqualTo(Kinds.Decision.CAPPED);
        assertThat(kinds.move(site, false, fast)).isEqualTo(Kinds.Decision.COUNTED);
        held.forEach(permits::exit);
    }

    /** Ten thousand shapes from one call site: at most 32 kinds, and "other"; names bounded in length. */
    @Test
    void tenThousandShapesLeaveItBounded() {
        var kinds = new Kinds(new Permits(4, 0), 0);
        SqlWork<Integer> helper = c -> 1;
        Kinds.Kind site = kinds.of(helper.getClass());
        var seen = new java.util.HashSet<Kinds.Kind>();
        for (int i = 0; i < 10_000; i++) {
            Kinds.Kind kind = kinds.refine(site, "SELECT c" + i + " FROM t_" + "x".repeat(200), false);
            Kinds.left(kind, false, -1);
            seen.add(kind);
        }
        seen.remove(site);
        assertThat(seen).hasSizeLessThanOrEqualTo(Kinds.TRACKED);
        assertThat(seen).extracting(k -> k.name.length()).allMatch(length -> length <= Kinds.SHAPE_NAME);
        for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
            kinds.tick((t + 1) * 10 * MS);
        }
        assertThat(kinds.stats()).hasSizeLessThanOrEqualTo(Kinds.TRACKED + 1);
    }

    /** A call site first seen while every place was taken gets a kind of its own once places free up. */
    @Test
    void aLateCallSiteGetsAKindOfItsOwnOncePlacesFreeUp() throws Exception {
        var copies = new dev.dbbulkhead.testkit.ClassCopies(Work.class);
        var kinds = new Kinds(new Permits(4, 0), 0);
        for (int i = 0; i < Kinds.TRACKED; i++) {
            Kinds.left(kinds.of(copies.copy()), false, -1);
        }
        Class<?> late = copies.copy();
        assertThat(kinds.of(late).name).as("every place taken").isEqualTo(Kinds.OTHER);
        long now = 0;
        for (int window = 0; window < 40 && kinds.of(late).name.equals(Kinds.OTHER); window++) {
            for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
                now += 10 * MS;
                kinds.tick(now); // nothing arrives: the first ones become idle and are forgotten
            }
        }
        assertThat(kinds.of(late).name).as("a place of its own").isNotEqualTo(Kinds.OTHER);
        Kinds.left(kinds.of(late), false, 3 * MS);
        for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
            now += 10 * MS;
            kinds.tick(now);
        }
        assertThat(kinds.stats()).extracting(KindStats::name).contains(kinds.of(late).name);
    }

    /** A kind's hold percentiles stay what was last measured while none of its operations end, as its mean does. */
    @Test
    void holdPercentilesStandBesideTheMeanWhenNoHoldIsRecent() {
        var kinds = new Kinds(new Permits(4, 0), 0);
        Kinds.Kind kind = kinds.of("reports");
        Kinds.left(kind, false, 20 * MS);
        long now = 0;
        for (int window = 0; window < 5; window++) {
            for (int t = 0; t < Kinds.FOLD_TICKS; t++) {
                now += 10 * MS;
                kinds.tick(now);
            }
        }
        KindStats stats = kinds.stats().getFirst();
        assertThat(stats.meanHold()).isPositive();
        assertThat(stats.holdP50().toNanos()).isBetween(16 * MS, 24 * MS);
        assertThat(stats.holdP99().toNanos()).isBetween(16 * MS, 24 * MS);
    }

    @Test
    void holdQuantilesAreWithinTheirBucket() {
        var holds = new Histogram();
        for (long ms = 1; ms <= 100; ms++) {
            holds.record(ms * MS);
        }
        assertThat(holds.quantile(0.5)).isBetween(40 * MS, 60 * MS);
        assertThat(holds.quantile(0.99)).isBetween(81 * MS, 119 * MS);
        holds.decay();
        assertThat(holds.quantile(0.5)).isBetween(35 * MS, 65 * MS);
        assertThat(new Histogram().quantile(0.5)).isZero();
    }

    /** Ten thousand call-site classes (the same class defined by as many loaders): at most 32 kinds, and "other". */
    @Test
    void tenThousandCallSitesLeaveItBounded() throws Exception {
        var copies = new dev.dbbulkhead.testkit.ClassCopies(Work.class);
        var kinds = new Kinds(new Permits(4, 0), 0);
        var seen = new java.util.HashSet<Kinds.Kind>();
        for (int i = 0; i < 10_000; i++) {
            Class<?> type = copies.copy();
            Kinds.Kind kind = kinds.of(type);
            Kinds.left(kind, false, -1); // refused at once: an arrival
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
}
