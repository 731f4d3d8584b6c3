package dev.dbbulkhead.internal;

import dev.dbbulkhead.Priority;
import dev.dbbulkhead.Sharing;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

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
 * work has gone quiet). At its end:
 * <ul>
 *   <li>no regular operation: the elastic allowance is all the room the headroom leaves, at once;</li>
 *   <li>an objective missed (more than 1 % of a workload's operations over it): the allowance halves, down to the
 *       floor when more than one in ten missed, and the level that missed is tried again only after 2, 4, … 64
 *       windows met one below it;</li>
 *   <li>every objective met with room to spare (each p99 at most the objective over {@value #LEARNED_MARGIN}: for a
 *       learned objective, no worse than at the floor): an elastic workload that used all its allowance gets one
 *       more; met without that margin, it stays.</li>
 * </ul>
 * The headroom is the regular workloads' peak demand (what they hold and what waits) over the last
 * {@value #PEAK_MILLIS} ms, or over one elastic hold if longer, plus one: what they may need while an elastic
 * operation admitted now still holds its permit. The allowance never takes it.
 *
 * <p><b>Borrowing.</b> A regular workload that borrows ({@code WorkloadConfig.borrowing}) may have more than its B
 * while the others leave permits idle: at each tick, once every workload has what it needs within its own B, what is
 * left of S goes to the borrowers, in the order they were declared. While one wants more, a workload with nothing
 * inside lends all its permits (its cap may be 0, the elastic floor included); when its callers come back, its demand
 * lowers the borrowers' caps, and the permits they are owed come back as their operations end (nothing is
 * pre-empted): the first caller of a lender waits at most one borrowed hold and a tick.
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
    /** The most windows a level that missed waits before it is tried again. */
    static final int MAX_BACKOFF = 64;
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

    /** One workload under the arbiter. */
    static final class Member {
        final Permits permits;
        final boolean elastic;
        /** Regular: it may use what the others leave idle, up to its permits' capacity (the shared limit). */
        final boolean borrows;
        /** Regular: the objective set, 0 to learn it. */
        private final long objectiveSet;
        /** Regular: operations ended (and callers refused) in the current window, and those over the objective. */
        private final LongAdder ops = new LongAdder();

        private final LongAdder over = new LongAdder();
        /** Regular: latencies of the current window. */
        private final Kinds.Holds latencies = new Kinds.Holds();
        /** Elastic: holds of the current window. */
        private final LongAdder holdSum = new LongAdder();

        private final LongAdder holds = new LongAdder();
        /** The limit the arbiter allows; B until it says otherwise. Read by the workload's controls. */
        volatile int cap;
        /** Elastic: what the regular objectives allow; regular: B. Written by the clock. */
        volatile int allowance;
        /** Regular: the objective in force, 0 while learning. */
        volatile long objective;

        volatile long recentP99;
        volatile Sharing.State state = Sharing.State.LEARNING;
        volatile int headroom;
        /** Regular: the p99 at the elastic floor the learned objective comes from, and when it was measured. */
        private long low;

        private long lowAt;
        /** Elastic: whether it used its whole limit at a tick of the window, and the most it had executing. */
        private boolean binding;

        private int peak;
        /** Elastic: the mean hold, over the windows (0 before the first). */
        private long holdNanos;
        /** Elastic: the lowest level that missed lately, and how many windows met below it it waits for. */
        private int failed = Integer.MAX_VALUE;

        private int backoff = 1;
        /** Elastic: windows met one below the level that missed, since. */
        private int waited;

        Member(Permits permits, boolean elastic, Duration objective) {
            this(permits, elastic, objective, false);
        }

        Member(Permits permits, boolean elastic, Duration objective, boolean borrows) {
            this.permits = permits;
            this.elastic = elastic;
            this.borrows = borrows && !elastic;
            this.cap = permits.concurrent();
            this.allowance = elastic ? 1 : permits.concurrent();
            this.objectiveSet = objective.isZero() ? 0 : Nanos.of(objective);
            this.objective = objectiveSet;
        }

        /** An operation ended after {@code callNanos} from its call (permit wait plus hold), holding {@code held}. */
        void released(long heldNanos, long callNanos) {
            if (elastic) {
                holdSum.add(heldNanos);
                holds.increment();
                return;
            }
            latencies.record(callNanos);
            long o = objective;
            if (o > 0 && callNanos > o) {
                over.increment();
            }
            ops.increment();
        }

        /** A caller left without a permit: over any objective. */
        void refused() {
            if (!elastic) {
                over.increment();
                ops.increment();
            }
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
            int b = permits.concurrent();
            int inside = permits.executing() + permits.waiting();
            int grow = lending && inside == 0 ? 0 : Math.max(1, b / 4);
            return Math.min(borrows ? permits.capacity() : b, inside + grow);
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

        Sharing sharing() {
            long o = objective;
            long p99 = recentP99;
            return new Sharing(
                    elastic ? Priority.ELASTIC : Priority.REGULAR,
                    cap,
                    allowance,
                    state,
                    elastic || o == 0 ? null : Duration.ofNanos(o),
                    !elastic && objectiveSet == 0,
                    elastic || p99 == 0 ? null : Duration.ofNanos(p99),
                    elastic ? headroom : 0);
        }
    }

    private final int shared;
    private final List<Member> regular;
    private final List<Member> elastic;
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
        this.regular = members.stream().filter(m -> !m.elastic).toList();
        this.elastic = members.stream().filter(m -> m.elastic).toList();
        this.borrowers = regular.stream().anyMatch(m -> m.borrows);
        this.windowStart = now;
        for (Member e : elastic) {
            e.cap(1); // elastic work starts at its floor and grows as the regular objectives allow
        }
    }

    /** One tick: what the tick sees, then at a window's end the elastic allowances, then every cap. */
    void tick(long now) {
        int demand = 0;
        long ops = 0;
        long over = 0;
        for (Member m : regular) {
            demand += m.permits.executing() + m.permits.waiting();
            ops += m.ops.sum();
            over += m.over.sum();
        }
        demands[tickCount++ % PEAKS] = demand;
        quietTicks = demand == 0 && ops == lastOps ? quietTicks + 1 : 0; // nothing regular in flight, none ended
        lastOps = ops;
        for (Member e : elastic) {
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
        for (Member e : elastic) {
            floor &= e.peak <= 1;
        }
        boolean active = false;
        boolean learning = false;
        boolean missed = false;
        boolean severe = false;
        boolean slack = true;
        for (Member r : regular) {
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
        for (Member e : elastic) {
            allow(e, active, learning, missed, severe, slack, headroom);
        }
    }

    /**
     * A learned objective: from a window at the elastic floor whose p99 was {@code p99}, the lowest of the last minute.
     */
    private static void learn(Member r, long p99, boolean floor, long now) {
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

    private void allow(
            Member e, boolean active, boolean learning, boolean missed, boolean severe, boolean slack, int headroom) {
        long count = e.holds.sumThenReset();
        long sum = e.holdSum.sumThenReset();
        if (count > 0) {
            long mean = sum / count;
            e.holdNanos = e.holdNanos == 0 ? mean : (e.holdNanos + mean) / 2;
        }
        int room = Math.max(1, Math.min(e.permits.concurrent(), shared - headroom));
        e.headroom = headroom;
        Sharing.State state;
        if (!active) {
            e.allowance = room; // the level that missed lately, and its back-off, stand for when regular work returns
            state = Sharing.State.IDLE;
        } else if (learning) {
            e.allowance = 1;
            state = Sharing.State.LEARNING;
        } else if (missed) {
            int used = Math.max(1, Math.min(e.allowance, e.peak));
            if (used == e.failed) {
                e.backoff = Math.min(MAX_BACKOFF, 2 * e.backoff);
            } else if (used < e.failed) {
                e.failed = used;
                e.backoff = 2;
            } // else above the lowest level that missed lately: that level and its back-off stand
            e.waited = 0;
            e.allowance = severe ? 1 : Math.max(1, used / 2);
            state = Sharing.State.OBJECTIVE_MISSED;
        } else {
            if (e.allowance >= e.failed) { // the level that missed met its objective for a window
                e.failed = Integer.MAX_VALUE;
                e.backoff = 1;
            }
            state = Sharing.State.OBJECTIVE_MET;
            if (e.binding && slack) {
                int next = e.allowance + 1;
                if (next > room) {
                    state = Sharing.State.NO_ROOM;
                } else if (next >= e.failed && e.waited < e.backoff) {
                    e.waited++;
                    state = Sharing.State.BACKING_OFF;
                } else {
                    e.allowance = next;
                    probing = true;
                }
            }
        }
        e.allowance = Math.min(e.allowance, room);
        e.state = state;
        e.binding = false;
        e.peak = 0;
    }

    /**
     * The regular peak demand over the last {@value #PEAK_MILLIS} ms, or one elastic hold if longer (at most what the
     * ring keeps), plus one.
     */
    private int headroom() {
        long hold = 0;
        for (Member e : elastic) {
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
        for (Member r : regular) {
            int over = r.borrows ? r.wanted(false) - r.permits.concurrent() : 0;
            lending |= over > 0;
            beyond += Math.max(0, over);
        }
        int regularDemand = 0;
        for (Member r : regular) {
            regularDemand += Math.min(r.permits.concurrent(), r.wanted(lending));
        }
        int others = 0;
        for (Member e : elastic) {
            int room = shared - boundsBut(e);
            int floor = floor(e, lending, Math.max(e.permits.limit(), room));
            int want = Math.min(e.allowance, e.wanted(lending));
            int target = Math.max(floor, Math.min(want, shared - regularDemand - others));
            e.cap(Math.max(floor, Math.min(target, Math.max(e.permits.limit(), room))));
            others += e.cap;
        }
        int wantedByElastic = 0;
        for (Member e : elastic) {
            int want = Math.min(e.allowance, e.wanted(lending));
            int target = Math.max(floor(e, lending, 1), Math.min(want, shared - regularDemand));
            wantedByElastic += Math.max(0, target - e.cap);
        }
        for (Member r : regular) {
            int room = shared - boundsBut(r);
            int b = r.permits.concurrent();
            int own = r.borrows ? Math.max(0, r.wanted(false) - b) : 0;
            int cap = Math.max(Math.min(b, r.wanted(lending)), room - wantedByElastic - (beyond - own));
            r.cap(Math.max(floor(r, lending, room), Math.min(b, Math.min(room, cap))));
        }
        if (lending) {
            borrow(wantedByElastic);
        }
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
    private void borrow(int wantedByElastic) {
        for (Member r : regular) {
            int want = r.borrows ? r.wanted(true) : 0;
            if (want <= Math.max(r.cap, r.permits.concurrent())) {
                continue;
            }
            int owed = 0;
            for (Member o : regular) {
                owed += o == r ? 0 : o.shortOfGuarantee(true);
            }
            int room = shared - boundsBut(r) - wantedByElastic - owed;
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
