package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The adaptive limit's decisions against a simulated database, on an injected clock: the decisions are the real
 * ones (the real {@link Permits}, {@link AdaptiveLimit#sample} at each release, {@link AdaptiveLimit#tick} every
 * 10 ms, the {@link GoodputLimit} they feed, seeded), without a database or a sleep. The scenarios of the capacity
 * tool as models: s1 (CPU, thrashing past K), s2 (K locks), s3 (a capacity step), s4 (mixed holds), a plan change.
 * The claim here is 0.95 × the best static B: probing costs a few percent, and a probe cannot tell apart in a few
 * windows the 2–4 % that separate 8 from 16 in flight in these models (on PostgreSQL the top is flatter: s2 gives 371
 * and 373/s at B = 8 and 16). The 0.97 target is measured on PostgreSQL, by the capacity tool (docs/performance.md). The database has K truly parallel resources (cores, locks) and each
 * operation also spends {@code overhead} outside them (round trips, begin, commit): with n in flight an operation
 * holds its permit {@code overhead + service × max(1, n/K)}, times a seeded log-normal noise. So throughput grows
 * quickly up to K, then slowly (the overlap of the round trips, as on a real server), and latency grows past K.
 * Demand exceeds the limit (an overload) unless said otherwise. The real-PostgreSQL version is
 * {@code AdaptiveLimitTest}.
 */
@Tag("no-db")
class AdaptiveLimitModelTest {
    private static final long MS = 1_000_000;
    private static final long SECOND = 1_000_000_000;

    /** A simulated database under a saturating load. */
    static final class Simulation {
        final Permits permits;
        final AdaptiveLimit limit;
        final List<String> changes = new ArrayList<>();
        final Random random;
        final PriorityQueue<long[]> inflight = new PriorityQueue<>((a, b) -> Long.compare(a[0], b[0]));
        final List<Permits.Node> nodes = new ArrayList<>();
        final java.util.ArrayDeque<Integer> freeNodes = new java.util.ArrayDeque<>();
        long now = 1;
        long nextTick = BarrierClock.TICK_MILLIS * MS;
        int capacity;
        double serviceMs;
        double overheadMs;
        double noise = 0.3;
        /** At most this many callers want a permit at once (a saturating load: many). */
        int demand = 1_000;
        /** Every operation fails with an overload signal (1 in this many; 0: none). */
        int signalEvery;
        /** s4: 9 in 10 operations hold {@code serviceMs}, 1 in 10 {@code longMs}; 0: all hold {@code serviceMs}. */
        double longMs;
        /** CPU-like thrashing: each operation beyond K in flight makes every one this much slower (0: none). */
        double thrash;

        long completed;
        long signalled;

        Simulation(int max, int capacity, double serviceMs, double overheadMs, long seed) {
            this.permits = new Permits(max, 0);
            this.capacity = capacity;
            this.serviceMs = serviceMs;
            this.overheadMs = overheadMs;
            this.random = new Random(seed);
            this.limit = new AdaptiveLimit(
                    permits,
                    1,
                    max,
                    0,
                    now,
                    seed,
                    (from, to, cause, latency) ->
                            changes.add(now / MS + " ms: " + from + " -> " + to + " (" + cause + ")"));
        }

        /** Runs for {@code nanos}: starts operations while permits are free, completes them, ticks the clock. */
        void run(long nanos) {
            long end = now + nanos;
            while (now < end) {
                fill();
                long next = inflight.isEmpty() ? Long.MAX_VALUE : inflight.peek()[0];
                if (nextTick <= next) {
                    now = nextTick;
                    nextTick += BarrierClock.TICK_MILLIS * MS;
                    limit.tick(now);
                    if (limit.wanted() != permits.limit()) {
                        permits.limit(limit.wanted()); // what the workload's controls apply after the tick
                    }
                    continue;
                }
                long[] op = inflight.poll();
                now = op[0];
                permits.exit(nodes.get((int) op[2]));
                freeNodes.push((int) op[2]);
                completed++;
                boolean signal = signalEvery > 0 && completed % signalEvery == 0;
                signalled += signal ? 1 : 0;
                limit.sample(now - op[1], now - op[1], true, signal);
            }
        }

        private void fill() {
            while (inflight.size() < demand) {
                Integer free = freeNodes.poll();
                int index = free != null ? free : nodes.size();
                if (free == null) {
                    nodes.add(new Permits.Node(Thread.currentThread()));
                }
                var node = nodes.get(index);
                Permits.Entry entry;
                try {
                    entry = permits.enter(node, false);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                if (entry != Permits.Entry.ACQUIRED) {
                    freeNodes.push(index);
                    return;
                }
                int n = inflight.size() + 1;
                double service = longMs > 0 && random.nextInt(10) == 0 ? longMs : serviceMs;
                double ms = (overheadMs
                                + service
                                        * Math.max(1.0, (double) n / capacity)
                                        * (1 + thrash * Math.max(0, n - capacity)))
                        * Math.exp(noise * random.nextGaussian() - noise * noise / 2);
                inflight.add(new long[] {now + (long) (ms * MS), now, index});
            }
        }

        /** The time-average of the limit in force, and the throughput, over the next {@code nanos}. */
        double[] measure(long nanos) {
            long end = now + nanos;
            long before = completed;
            double area = 0;
            while (now < end) {
                long t = now;
                int l = permits.limit();
                run(Math.min(5 * MS, end - now));
                area += (double) l * (now - t);
            }
            return new double[] {area / nanos, (completed - before) * 1e9 / nanos};
        }

        /** Throughput at a fixed concurrency n (the same model, no controller), for comparison. */
        double throughputAt(int n) {
            double service = longMs > 0 ? 0.9 * serviceMs + 0.1 * longMs : serviceMs;
            double hold = overheadMs
                    + service * Math.max(1.0, (double) n / capacity) * (1 + thrash * Math.max(0, n - capacity));
            return n * 1e3 / hold;
        }

        /** The most throughput any fixed limit up to B gives: the best static B. */
        double bestStatic() {
            double best = 0;
            for (int n = 1; n <= permits.concurrent(); n++) {
                best = Math.max(best, throughputAt(n));
            }
            return best;
        }

        String tail() {
            return String.join("\n", changes.subList(Math.max(0, changes.size() - 15), changes.size()));
        }
    }

    @Test
    void s2_staysWhereMoreInFlightStillPays() {
        // K = 4 locks held 10 ms, 1.5 ms outside them: throughput still rises a little past K (348, 372, 386 /s at 4,
        // 8, 16), so the most completions are at B, as the best static B of the capacity runs.
        var sim = new Simulation(16, 4, 10, 1.5, 1);
        sim.run(5 * SECOND);
        double[] m = sim.measure(30 * SECOND);
        assertThat(m[1])
                .as("throughput %.0f/s against the best static %.0f: %s", m[1], sim.bestStatic(), sim.tail())
                .isGreaterThan(0.95 * sim.bestStatic());
        assertThat(m[0]).as("mean limit, no collapse towards K: %s", sim.tail()).isGreaterThan(7.0);
    }

    @Test
    void s1_comesDownWhereMoreInFlightOnlyThrashes() {
        // CPU-like: K = 4 cores, each operation beyond them slows every one by 4 %: the most throughput is at 4-5.
        var sim = new Simulation(16, 4, 5, 0.3, 2);
        sim.thrash = 0.04;
        sim.run(10 * SECOND);
        double[] m = sim.measure(30 * SECOND);
        assertThat(m[1])
                .as("throughput %.0f/s against the best static %.0f: %s", m[1], sim.bestStatic(), sim.tail())
                .isGreaterThan(0.95 * sim.bestStatic());
        assertThat(m[0]).as("mean limit: %s", sim.tail()).isLessThan(10.0);
        assertThat(sim.throughputAt(16)).as("B itself would lose").isLessThan(0.8 * sim.bestStatic());
    }

    @Test
    void s3_followsACapacityStep() {
        // K = 8, then 2, then 8 (10 ms holds, 1 ms outside): at K = 2 fewer in flight complete as many, so L comes
        // down, over tens of seconds (it only buys latency, which the queue and the ceiling bound); back at K = 8,
        // more in flight pays again at once, and it goes back up within two seconds.
        var sim = new Simulation(16, 8, 10, 1, 3);
        sim.run(10 * SECOND);
        sim.capacity = 2;
        double[] low = sim.measure(10 * SECOND);
        assertThat(low[1]).as("the first 10 s at K = 2: %s", sim.tail()).isGreaterThan(0.95 * sim.bestStatic());
        sim.run(50 * SECOND);
        assertThat(sim.limit.level())
                .as("a minute at K = 2, below B and no collapse below K: %s", sim.tail())
                .isBetween(2, 15);
        sim.capacity = 8;
        sim.run(2 * SECOND);
        assertThat(sim.limit.level())
                .as("2 s after the step back up: %s", sim.tail())
                .isGreaterThanOrEqualTo(8);
        double[] high = sim.measure(10 * SECOND);
        // Past 8 in flight each step buys 1-2 % here (10 % of a hold outside the locks): below what a probe resolves,
        // so it stops near K, 5 % short of B's throughput, the regret of not telling 2 % from noise.
        assertThat(high[1]).as("back at K = 8: %s", sim.tail()).isGreaterThan(0.93 * sim.bestStatic());
    }

    @Test
    void s4_mixedHoldsDoNotCollapseIt() {
        // 9 in 10 operations hold a lock 2 ms, 1 in 10 for 100 ms, K = 4: no baseline of 30 operations to be fooled by.
        var sim = new Simulation(16, 4, 2, 0.5, 4);
        sim.longMs = 100;
        sim.run(5 * SECOND);
        double[] m = sim.measure(60 * SECOND);
        assertThat(m[1])
                .as("throughput %.0f/s against the best static %.0f: %s", m[1], sim.bestStatic(), sim.tail())
                .isGreaterThan(0.95 * sim.bestStatic());
        assertThat(m[0]).as("mean limit: %s", sim.tail()).isGreaterThan(8.0);
    }

    @Test
    void aPlanChangeThatMakesEveryOperationSlowerKeepsTheMostCompletions() {
        var sim = new Simulation(16, 4, 5, 0.3, 10);
        sim.thrash = 0.04;
        sim.run(20 * SECOND);
        sim.serviceMs = 10; // a plan change: twice the work at any concurrency
        sim.run(10 * SECOND);
        double[] m = sim.measure(20 * SECOND);
        assertThat(m[1]).as("%s", sim.tail()).isGreaterThan(0.95 * sim.bestStatic());
    }

    @Test
    void startsAtBAndTheProbesCostLittle() {
        var sim = new Simulation(16, 16, 10, 1, 12);
        assertThat(sim.permits.limit()).isEqualTo(16);
        double[] m = sim.measure(20 * SECOND);
        assertThat(m[1])
                .as("against B, where every operation pays: %s", sim.tail())
                .isGreaterThan(0.97 * sim.throughputAt(16));
    }

    @Test
    void staysOnTheTopThroughATenMinuteOverload() {
        // Where throughput is nearly flat (s2 at 10-16 in flight), the level may wander across the top, now and then a
        // step or two down the slope and back: each minute no collapse, over ten the completions of the best static B.
        var sim = new Simulation(16, 4, 10, 1.5, 5);
        sim.run(30 * SECOND);
        double sum = 0;
        for (int minute = 0; minute < 10; minute++) {
            double[] m = sim.measure(60 * SECOND);
            assertThat(m[1])
                    .as("minute %d, no collapse: %s", minute, sim.tail())
                    .isGreaterThan(0.92 * sim.bestStatic());
            sum += m[1];
        }
        assertThat(sum / 10).as("ten minutes: %s", sim.tail()).isGreaterThan(0.95 * sim.bestStatic());
    }

    @Test
    void slowOperationsStayNearTheirOptimum() {
        for (double serviceMs : new double[] {250, 1_000, 2_000}) {
            var sim = new Simulation(8, 8, serviceMs, serviceMs / 100, 11);
            sim.run(20 * SECOND);
            double[] m = sim.measure(300 * SECOND);
            assertThat(m[1]).as("%s ms holds: %s", serviceMs, sim.tail()).isGreaterThan(0.93 * sim.throughputAt(8));
        }
    }

    @Test
    void whileAProbeBelowTheLevelRunsPredictionCountsOnTheLevel() {
        var sim = new Simulation(16, 4, 5, 0.3, 13);
        sim.thrash = 0.04;
        int probesBelow = 0;
        for (int i = 0; i < 3_000; i++) { // 10 ms steps: 30 simulated seconds
            sim.run(10 * MS);
            assertThat(sim.limit.predictionLimit()).isEqualTo(Math.max(sim.permits.limit(), sim.limit.level()));
            if (sim.permits.limit() < sim.limit.level()) {
                probesBelow++;
            }
        }
        assertThat(probesBelow).as("probes below the level ran").isPositive();
    }

    @Test
    void overloadSignalsCutTheLimitButAStrayOneDoesNot() {
        var sim = new Simulation(16, 16, 5, 0.2, 6);
        sim.run(5 * SECOND);
        int before = sim.limit.level();
        sim.signalEvery = 1_000; // one in a thousand: a query at the margin of its deadline
        sim.run(5 * SECOND);
        assertThat(sim.limit.level()).as("%s", sim.tail()).isGreaterThanOrEqualTo(before - 4);
        sim.signalEvery = 4; // a saturated pool or PgBouncer
        sim.run(2 * SECOND);
        assertThat(sim.limit.level()).as("%s", sim.tail()).isLessThanOrEqualTo(3);
    }

    @Test
    void holdsBelowTheClocksResolutionLeaveTheLimitAtB() {
        var sim = new Simulation(16, 16, 0.0002, 0.0002, 7);
        sim.run(SECOND / 2); // five windows at least, each of millions of holds: the simulation's longest test
        assertThat(sim.permits.limit()).as("%s", sim.tail()).isGreaterThanOrEqualTo(15);
    }

    @Test
    void aWorkloadThatDoesNotUseItsLimitKeepsIt() {
        var sim = new Simulation(16, 2, 10, 1, 8);
        sim.demand = 3; // three callers at a time: the limit never binds
        sim.run(10 * SECOND);
        assertThat(sim.permits.limit()).as("%s", sim.tail()).isGreaterThanOrEqualTo(12);
    }

    @Test
    void aHoldThatOutlivesEveryWindowDoesNotStallTheWorkload() {
        var sim = new Simulation(4, 4, 10, 1, 9);
        sim.run(3 * SECOND);
        // Three of the operations in flight never end (leases never closed): their permits stay held.
        var stuck = new ArrayList<long[]>();
        while (stuck.size() < 3 && !sim.inflight.isEmpty()) {
            stuck.add(sim.inflight.poll());
        }
        for (long[] op : stuck) {
            op[0] = Long.MAX_VALUE / 2;
            sim.inflight.add(op);
        }
        long before = sim.completed;
        sim.run(10 * SECOND);
        assertThat(sim.completed - before)
                .as("the workload still completes work: %s", sim.tail())
                .isPositive();
    }
}
