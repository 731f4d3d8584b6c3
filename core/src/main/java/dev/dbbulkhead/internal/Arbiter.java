package dev.dbbulkhead.internal;

import dev.dbbulkhead.Priority;
import dev.dbbulkhead.Sharing;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * Shares a barrier's limit S between its regular and its elastic workloads ({@code Priority}), at every tick of the
 * barrier's clock ({@link BarrierClock}), by setting each workload's cap: the most its limit may be. The workload's
 * {@link Controls} apply it, after the share-out, as the lower of the cap and its own level.
 *
 * <p><b>The shared limit holds at every instant.</b> What a workload can have in flight is bounded by its limit plus
 * what a lower limit is still owed ({@link Permits#owed()}): lowering a limit does not lower that bound until the
 * holders release. Each tick keeps the sum of those bounds at most S, raising a limit only into room that is free
 * now, so that no interleaving of callers lets more than S in flight.
 *
 * <p><b>Regular first.</b> A regular workload's demand is what it holds, what waits, and room to grow (a quarter of its
 * B, at least one): elastic workloads get what the regular demands leave, and a regular workload's limit grows up to
 * its B into whatever room remains. An elastic workload always keeps a floor of one permit, and is given no more than
 * its own demand (the same measure) even when its allowance is larger: an idle elastic workload holds no room.
 *
 * <p><b>Elastic as far as the regular objectives allow.</b> An elastic operation cannot be pre-empted: once admitted
 * it holds its connection (and whatever it locks) for a whole elastic hold. So the allowance follows what regular
 * callers see, not what they do this instant. Each regular workload has a latency objective, the p99 of its
 * operations' permit wait plus hold (set, or learned as {@value #LEARNED_MARGIN} × its p99 while elastic work ran at
 * its floor). A window lasts at least {@value #WINDOW_MILLIS} ms and until the regular workloads completed
 * {@value #MIN_OPS} operations (at most {@value #LONGEST_WINDOW_MILLIS} ms, or {@value #WINDOW_MILLIS} ms once regular
 * work has gone quiet). At its end, {@link Allowance} decides each elastic allowance from how the regular workloads did
 * (all the room when none worked, halved on a miss, one more when every objective was met with room to spare).
 * The headroom is the regular workloads' peak demand (what they hold and what waits) over the last
 * {@value #PEAK_MILLIS} ms, or over one elastic hold if longer, plus one: what they may need while an elastic
 * operation admitted now still holds its permit. The allowance never takes it.
 *
 * <p><b>Borrowing.</b> A regular workload that borrows ({@code WorkloadConfig.borrowing}) may have more than its B
 * while the others leave permits idle: at each tick, once every workload has what it needs within its own B, what is
 * left of S goes to the borrowers, in the order they were declared. While one wants more, a workload with nothing
 * inside lends all its permits (its cap may be 0, the elastic floor included); when its callers come back, its demand
 * lowers the borrowers' caps, and the permits they are owed come back as their operations end (nothing is
 * pre-empted): the first caller of a lender waits at most one borrowed hold and a tick. What an elastic workload's
 * allowance withholds while its callers want it is not idle, and is not lent: a regular workload borrowing it would put
 * back the load the allowance keeps off the regular objectives.
 *
 * <p>Thread-safe: latencies and holds are added by releasing callers; the ticks run on the barrier's clock, one at a
 * time; what {@link Member#sharing} reads is written by the ticks only.
 */
final class Arbiter {
    static final long WINDOW_MILLIS = 200;
    static final long LONGEST_WINDOW_MILLIS = 1_000;
    /** Regular operations a window waits for, to judge a p99. */
    static final int MIN_OPS = 100;
    /** A learned objective: this many times the p99 at the elastic floor. */
    static final double LEARNED_MARGIN = 1.5;
    /** A learned objective is measured again after this long. */
    static final long RELEARN_SECONDS = 60;
    /** Regular operations over their objective that end a window in which an elastic allowance grew. */
    static final int PROBE_MISSES = 1;
    /** The regular peak demand is taken over at least this long. */
    static final long PEAK_MILLIS = 1_000;

    private static final long WINDOW_NANOS = WINDOW_MILLIS * 1_000_000;
    private static final long LONGEST_WINDOW_NANOS = LONGEST_WINDOW_MILLIS * 1_000_000;
    private static final long RELEARN_NANOS = RELEARN_SECONDS * 1_000_000_000;
    /** Regular work gone quiet this many ticks ends a window short of its operations: the room comes back sooner. */
    private static final int QUIET_TICKS = (int) (WINDOW_MILLIS / BarrierClock.TICK_MILLIS);
    /** Ticks of regular demand kept: 10 s. */
    private static final int PEAKS = 1_000;

    /**
     * One workload under the arbiter: its permits, the cap the arbiter sets, what its {@code Sharing} says. Regular
     * ({@link Regular}: an objective, measured) or elastic ({@link Elastic}: an allowance, from {@link Allowance}).
     */
    abstract static sealed class Member permits Regular, Elastic {
        final Permits permits;
        /** The limit the arbiter allows; B until it says otherwise. Read by the workload's controls. */
        volatile int cap;

        volatile Sharing.State state = Sharing.State.LEARNING;

        private Member(Permits permits) {
            this.permits = permits;
            this.cap = permits.concurrent();
        }

        /** A member for an elastic workload or a regular one (with its {@code objective}, and whether it borrows). */
        static Member of(Permits permits, boolean elastic, Duration objective, boolean borrows) {
            return elastic ? new Elastic(permits) : new Regular(permits, objective, borrows);
        }

        /** An operation ended after {@code callNanos} from its call (permit wait plus hold), holding {@code held}. */
        abstract void released(long heldNanos, long callNanos);

        /** A caller left without a permit. */
        abstract void refused();

        abstract Sharing sharing();

        /** The most it may ever have: its B, or for a borrower its permits' capacity (the shared limit). */
        int most() {
            return permits.concurrent();
        }

        /**
         * The most this workload can have in flight before the next tick: its cap (its own controller may raise its
         * limit that far), or its limit and what a lower limit is still owed, whichever is more.
         */
        int bound() {
            return Math.max(cap, permits.limit() + permits.owed());
        }

        /**
         * What it holds, what waits, and room to grow (a quarter of its B, at least one; none when idle and
         * {@code lending}: an idle workload then lends every permit); at most what it may have.
         */
        int wanted(boolean lending) {
            int inside = permits.executing() + permits.waiting();
            int grow = lending && inside == 0 ? 0 : Math.max(1, permits.concurrent() / 4);
            return Math.min(most(), inside + grow);
        }

        /** Of what it wants while {@code lending}, what is within its B and it does not have yet. */
        int shortOfGuarantee(boolean lending) {
            return Math.max(0, Math.min(permits.concurrent(), wanted(lending)) - cap);
        }

        void cap(int to) {
            if (to != cap) {
                cap = to;
            }
        }
    }

    /** A regular workload: served first, up to its B (beyond it when it borrows), judged by its latency objective. */
    static final class Regular extends Member {
        /** It may use what the others leave idle, up to its permits' capacity (the shared limit). */
        final boolean borrows;
        /** The objective set, 0 to learn it. */
        private final long objectiveSet;
        /** Operations ended (and callers refused) in the current window, and those over the objective. */
        private final LongAdder ops = new LongAdder();

        private final LongAdder over = new LongAdder();
        /** Latencies of the current window. */
        private final Histogram latencies = new Histogram();
        /** The objective in force, 0 while learning. */
        volatile long objective;

        volatile long recentP99;
        /** The p99 at the elastic floor the learned objective comes from, and when it was measured. */
        private long low;

        private long lowAt;

        Regular(Permits permits, Duration objective, boolean borrows) {
            super(permits);
            this.borrows = borrows;
            this.objectiveSet = objective.isZero() ? 0 : Nanos.of(objective);
            this.objective = objectiveSet;
        }

        @Override
        void released(long heldNanos, long callNanos) {
            latencies.record(callNanos);
            long o = objective;
            if (o > 0 && callNanos > o) {
                over.increment();
            }
            ops.increment();
        }

        /** Over any objective. */
        @Override
        void refused() {
            over.increment();
            ops.increment();
        }

        @Override
        int most() {
            return borrows ? permits.capacity() : permits.concurrent();
        }

        @Override
        Sharing sharing() {
            long o = objective;
            long p99 = recentP99;
            return new Sharing(
                    Priority.REGULAR,
                    cap,
                    permits.concurrent(),
                    state,
                    o == 0 ? null : Duration.ofNanos(o),
                    objectiveSet == 0,
                    p99 == 0 ? null : Duration.ofNanos(p99),
                    0);
        }
    }

    /** An elastic workload: what the regular ones leave, as far as their objectives allow ({@link Allowance}). */
    static final class Elastic extends Member {
        /** Holds of the current window. */
        private final LongAdder holdSum = new LongAdder();

        private final LongAdder holds = new LongAdder();
        /** The allowance rule, its level published as {@link #allowance}. */
        private final Allowance rule = new Allowance();
        /** What the regular objectives allow. Written by the clock. */
        volatile int allowance = rule.level();

        volatile int headroom;
        /** Whether it used its whole limit at a tick of the window, and the most it had executing. */
        private boolean binding;

        private int peak;
        /** The mean hold, over the windows (0 before the first). */
        private long holdNanos;

        Elastic(Permits permits) {
            super(permits);
        }

        @Override
        void released(long heldNanos, long callNanos) {
            holdSum.add(heldNanos);
            holds.increment();
        }

        /** Nothing: elastic work has no objective to miss. */
        @Override
        void refused() {}

        @Override
        Sharing sharing() {
            return new Sharing(Priority.ELASTIC, cap, allowance, state, null, false, null, headroom);
        }
    }

    private final int shared;
    private final List<Regular> regular;
    private final List<Elastic> elastic;
    /** Σ regular (executing + waiting) at each of the last {@value #PEAKS} ticks, a ring. */
    private final int[] demands = new int[PEAKS];

    private int tickCount;
    private long windowStart;
    /** Ticks in a row with no regular operation in flight and none ended, and the operations counted at the last. */
    private int quietTicks;

    private long lastOps;
    /** Whether an elastic allowance grew at the last window's end: this window tries it. */
    private boolean probing;
    /** Whether a regular workload borrows what the others leave idle. */
    private final boolean borrowers;

    Arbiter(int shared, List<Member> members, long now) {
        this.shared = shared;
        this.regular = members.stream()
                .flatMap(m -> m instanceof Regular r ? Stream.of(r) : Stream.empty())
                .toList();
        this.elastic = members.stream()
                .flatMap(m -> m instanceof Elastic e ? Stream.of(e) : Stream.empty())
                .toList();
        this.borrowers = regular.stream().anyMatch(m -> m.borrows);
        this.windowStart = now;
        for (Elastic e : elastic) {
            e.cap(1); // elastic work starts at its floor and grows as the regular objectives allow
        }
    }

    /** One tick: what the tick sees, then at a window's end the elastic allowances, then every cap. */
    void tick(long now) {
        int demand = 0;
        long ops = 0;
        long over = 0;
        for (Regular m : regular) {
            demand += m.permits.executing() + m.permits.waiting();
            ops += m.ops.sum();
            over += m.over.sum();
        }
        demands[tickCount++ % PEAKS] = demand;
        quietTicks = demand == 0 && ops == lastOps ? quietTicks + 1 : 0; // nothing regular in flight, none ended
        lastOps = ops;
        for (Elastic e : elastic) {
            e.binding |= e.permits.available() == 0;
            e.peak = Math.max(e.peak, e.permits.executing());
        }
        long elapsed = now - windowStart;
        boolean ends = elapsed >= WINDOW_NANOS
                && (ops >= MIN_OPS || ops == 0 || elapsed >= LONGEST_WINDOW_NANOS || quietTicks >= QUIET_TICKS);
        // A window where many miss ends at once, and so does a try at one more permit that some miss: the try
        // costs the regular workloads the tail of as few of their operations as it takes to see it fail.
        if (ends || (over >= 10 && over * 10 > ops) || (probing && over > PROBE_MISSES)) {
            windowStart = now;
            endWindow(now);
        }
        shareOut();
    }

    /** How each regular workload did, then each elastic allowance. */
    private void endWindow(long now) {
        boolean floor = true;
        for (Elastic e : elastic) {
            floor &= e.peak <= 1;
        }
        boolean active = false;
        boolean learning = false;
        boolean missed = false;
        boolean severe = false;
        boolean slack = true;
        for (Regular r : regular) {
            long n = r.ops.sumThenReset();
            long o = r.over.sumThenReset();
            if (n == 0) {
                r.state = Sharing.State.IDLE;
                continue;
            }
            active = true;
            long p99 = r.latencies.quantile(0.99);
            if (p99 > 0) {
                r.recentP99 = p99;
            }
            if (n >= MIN_OPS && p99 > 0) {
                learn(r, p99, floor, now);
            }
            r.latencies.clear();
            if (r.objective == 0) {
                r.state = Sharing.State.LEARNING;
                learning = true;
                continue;
            }
            boolean miss = o > n / 100;
            r.state = miss ? Sharing.State.OBJECTIVE_MISSED : Sharing.State.OBJECTIVE_MET;
            missed |= miss;
            severe |= o * 10 > n;
            slack &= p99 <= Math.ceil(r.objective / LEARNED_MARGIN);
        }
        int headroom = headroom();
        probing = false;
        var window = new Allowance.Window(active, learning, missed, severe, slack);
        for (Elastic e : elastic) {
            allow(e, window, headroom);
        }
    }

    /**
     * A learned objective: from a window at the elastic floor whose p99 was {@code p99}, the lowest of the last minute.
     */
    private static void learn(Regular r, long p99, boolean floor, long now) {
        if (r.objectiveSet != 0) {
            return;
        }
        boolean stale = r.low == 0 || now - r.lowAt > RELEARN_NANOS;
        if (floor && (stale || p99 < r.low)) {
            r.low = p99;
            r.lowAt = now;
        } else if (stale) {
            r.low = 0; // measured again: elastic work at its floor for a window
        }
        r.objective = r.low == 0 ? 0 : Math.max(1, (long) (LEARNED_MARGIN * r.low));
    }

    /** An elastic workload's mean hold, then its allowance after {@code window} ({@link Allowance}). */
    private void allow(Elastic e, Allowance.Window window, int headroom) {
        long count = e.holds.sumThenReset();
        long sum = e.holdSum.sumThenReset();
        if (count > 0) {
            long mean = sum / count;
            e.holdNanos = e.holdNanos == 0 ? mean : (e.holdNanos + mean) / 2;
        }
        int room = Math.max(1, Math.min(e.permits.concurrent(), shared - headroom));
        e.headroom = headroom;
        probing |= e.rule.next(window, e.peak, e.binding, room);
        e.allowance = e.rule.level();
        e.state = e.rule.state();
        e.binding = false;
        e.peak = 0;
    }

    /**
     * The regular peak demand over the last {@value #PEAK_MILLIS} ms, or one elastic hold if longer (at most what the
     * ring keeps), plus one.
     */
    private int headroom() {
        long hold = 0;
        for (Elastic e : elastic) {
            hold = Math.max(hold, e.holdNanos);
        }
        long span = Math.max(PEAK_MILLIS, hold / 1_000_000);
        int ticks = (int) Math.min(PEAKS, Math.min(tickCount, span / BarrierClock.TICK_MILLIS));
        int peak = 0;
        for (int i = 1; i <= ticks; i++) {
            peak = Math.max(peak, demands[Math.floorMod(tickCount - i, PEAKS)]);
        }
        return peak + 1;
    }

    /**
     * Every cap, keeping the bounds' sum within the shared limit: elastic targets first, then regular room, then what a
     * borrowing workload wants beyond its B, out of what nobody else wants within theirs. While a borrower wants more,
     * an idle workload lends every permit (its cap may be 0) and gets them back, as the borrowed operations end, once
     * its callers come back.
     */
    private void shareOut() {
        boolean lending = false;
        int beyond = 0; // what the borrowers want beyond their B
        for (Regular r : regular) {
            int over = r.borrows ? r.wanted(false) - r.permits.concurrent() : 0;
            lending |= over > 0;
            beyond += Math.max(0, over);
        }
        int regularDemand = 0;
        for (Regular r : regular) {
            regularDemand += Math.min(r.permits.concurrent(), r.wanted(lending));
        }
        int others = 0;
        for (Elastic e : elastic) {
            int room = shared - boundsBut(e);
            int floor = floor(e, lending, Math.max(e.permits.limit(), room));
            int want = Math.min(e.allowance, e.wanted(lending));
            int target = Math.max(floor, Math.min(want, shared - regularDemand - others));
            e.cap(Math.max(floor, Math.min(target, Math.max(e.permits.limit(), room))));
            others += e.cap;
        }
        int wantedByElastic = 0;
        for (Elastic e : elastic) {
            int want = Math.min(e.allowance, e.wanted(lending));
            int target = Math.max(floor(e, lending, 1), Math.min(want, shared - regularDemand));
            wantedByElastic += Math.max(0, target - e.cap);
        }
        for (Regular r : regular) {
            int room = shared - boundsBut(r);
            int b = r.permits.concurrent();
            int own = r.borrows ? Math.max(0, r.wanted(false) - b) : 0;
            int cap = Math.max(Math.min(b, r.wanted(lending)), room - wantedByElastic - (beyond - own));
            r.cap(Math.max(floor(r, lending, room), Math.min(b, Math.min(room, cap))));
        }
        if (lending) {
            borrow(withheld(lending));
        }
    }

    /**
     * What the elastic workloads want beyond their caps, within their B: permits their allowance withholds are not
     * idle, and are not lent (a regular workload borrowing them would put back the load the allowance keeps off the
     * regular objectives).
     */
    private int withheld(boolean lending) {
        int want = 0;
        for (Elastic e : elastic) {
            want += Math.max(0, Math.min(e.permits.concurrent(), e.wanted(lending)) - e.cap);
        }
        return want;
    }

    /**
     * The least cap of {@code m}, with {@code room} free for it: one permit (the elastic floor; a regular workload's
     * first caller never waits), but none for a workload with nothing inside while a borrower wants more, and never
     * more than the room where workloads borrow (a lender's permits come back as the borrowed operations end).
     */
    private int floor(Member m, boolean lending, int room) {
        if (!borrowers) {
            return 1;
        }
        boolean idle = m.permits.executing() + m.permits.waiting() == 0;
        return lending && idle ? 0 : Math.max(0, Math.min(1, room));
    }

    /** Each borrower in turn gets what it wants beyond its B, out of the room nobody else wants within theirs. */
    private void borrow(int withheld) {
        for (Regular r : regular) {
            int want = r.borrows ? r.wanted(true) : 0;
            if (want <= Math.max(r.cap, r.permits.concurrent())) {
                continue;
            }
            int owed = 0;
            for (Regular o : regular) {
                owed += o == r ? 0 : o.shortOfGuarantee(true);
            }
            int room = shared - boundsBut(r) - withheld - owed;
            if (room > r.cap) {
                r.cap(Math.min(want, room));
            }
        }
    }

    /** The bounds of every member but {@code except}. */
    private int boundsBut(Member except) {
        int sum = 0;
        for (Member m : regular) {
            sum += m == except ? 0 : m.bound();
        }
        for (Member m : elastic) {
            sum += m == except ? 0 : m.bound();
        }
        return sum;
    }
}
