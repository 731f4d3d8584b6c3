package dev.dbbulkhead.internal;

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
 * B, at least one): elastic workloads get what the regular demands leave, and a regular workload's limit grows up to its
 * B into whatever room remains. An elastic workload always keeps a floor of one permit.
 *
 * <p><b>Elastic only while there is room.</b> Every {@value #WINDOW_MILLIS} ms: the regular workloads are congested when
 * a caller waited for a permit in the window, or when their mean hold was more than {@value #SLOWER} times the lowest
 * window mean of the last {@value #LOW_SECONDS} s (the database makes them wait for what elastic work holds). Then each
 * elastic allowance halves (to its floor at the least); otherwise an elastic workload that used its whole limit gets
 * one more.
 *
 * <p>Thread-safe: holds are added by releasing callers; the ticks run on the barrier's clock, one at a time.
 */
final class Arbiter {
    static final long WINDOW_MILLIS = 50;
    /** Regular holds this many times their recent low: the database is congested by what elastic work holds. */
    static final double SLOWER = 1.25;
    /** The recent low of a regular workload's window mean hold is taken over this long. */
    static final long LOW_SECONDS = 30;
    /** A window's mean hold counts for the congestion test with at least this many holds. */
    static final int MIN_HOLDS = 8;

    private static final long WINDOW_NANOS = WINDOW_MILLIS * 1_000_000;
    private static final int LOWS = (int) (LOW_SECONDS * 1000 / WINDOW_MILLIS);

    /** One workload under the arbiter. */
    static final class Member {
        final Permits permits;
        final boolean elastic;
        /** Holds of the current window, added by releasing callers (regular workloads). */
        final LongAdder holdSum = new LongAdder();

        final LongAdder holds = new LongAdder();
        /** The limit the arbiter allows; B until it says otherwise. Read by the workload's controls. */
        volatile int cap;
        /** Elastic: what congestion allows (AIMD); regular: unused. */
        int allowance;

        boolean waited;
        boolean binding;
        /** Regular: window mean holds of the last {@value #LOW_SECONDS} s, a ring. */
        final long[] means = new long[LOWS];

        int next;

        Member(Permits permits, boolean elastic) {
            this.permits = permits;
            this.elastic = elastic;
            this.cap = permits.concurrent();
            this.allowance = elastic ? 1 : permits.concurrent();
        }

        void held(long nanos) {
            holdSum.add(nanos);
            holds.increment();
        }

        /**
         * The most this workload can have in flight before the next tick: its cap (its own controller may raise its
         * limit that far), or its limit and what a lower limit is still owed, whichever is more.
         */
        int bound() {
            return Math.max(cap, permits.limit() + permits.owed());
        }

        int demand() {
            int b = permits.concurrent();
            return Math.min(b, permits.executing() + permits.waiting() + Math.max(1, b / 4));
        }

        void cap(int to) {
            if (to != cap) {
                cap = to;
            }
        }
    }

    private final int shared;
    private final List<Member> regular;
    private final List<Member> elastic;
    private long windowStart;
    private volatile boolean congested;

    Arbiter(int shared, List<Member> members, long now) {
        this.shared = shared;
        this.regular = members.stream().filter(m -> !m.elastic).toList();
        this.elastic = members.stream().filter(m -> m.elastic).toList();
        this.windowStart = now;
        for (Member e : elastic) {
            e.cap(1); // elastic work starts at its floor and grows while there is room
        }
    }

    /** One tick: what the tick sees, then at a window's end the elastic allowances, then every cap. */
    void tick(long now) {
        for (Member m : regular) {
            m.waited |= m.permits.waiting() > 0;
        }
        for (Member e : elastic) {
            e.binding |= e.permits.available() == 0;
        }
        if (now - windowStart >= WINDOW_NANOS) {
            windowStart = now;
            congested = judgeCongestion();
            for (Member e : elastic) {
                e.allowance = congested
                        ? Math.max(1, e.allowance / 2)
                        : e.binding ? Math.min(e.permits.concurrent(), e.allowance + 1) : e.allowance;
                e.binding = false;
            }
        }
        shareOut();
    }

    /** Whether a regular caller waited, or regular holds grew well above their recent low, in the window ended. */
    private boolean judgeCongestion() {
        boolean any = false;
        for (Member m : regular) {
            any |= m.waited;
            m.waited = false;
            long n = m.holds.sumThenReset();
            long sum = m.holdSum.sumThenReset();
            if (n < MIN_HOLDS) {
                continue;
            }
            long mean = sum / n;
            long low = Long.MAX_VALUE;
            for (long x : m.means) {
                if (x > 0) {
                    low = Math.min(low, x);
                }
            }
            m.means[m.next] = mean;
            m.next = (m.next + 1) % m.means.length;
            any |= low != Long.MAX_VALUE && mean > SLOWER * low;
        }
        return any;
    }

    /** Every cap, keeping the bounds' sum within the shared limit: elastic targets first, then regular room. */
    private void shareOut() {
        int regularDemand = 0;
        for (Member r : regular) {
            regularDemand += r.demand();
        }
        int others = 0;
        for (Member e : elastic) {
            int target = Math.max(1, Math.min(e.allowance, shared - regularDemand - others));
            int room = shared - boundsBut(e);
            e.cap(Math.max(1, Math.min(target, Math.max(e.permits.limit(), room))));
            others += e.cap;
        }
        int wantedByElastic = 0;
        for (Member e : elastic) {
            int target = Math.max(1, Math.min(e.allowance, shared - regularDemand));
            wantedByElastic += Math.max(0, target - e.cap);
        }
        for (Member r : regular) {
            int room = shared - boundsBut(r);
            int cap = Math.max(r.demand(), room - wantedByElastic);
            r.cap(Math.max(1, Math.min(r.permits.concurrent(), Math.min(room, cap))));
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

    /** Whether the last window found the regular workloads congested. */
    boolean congested() {
        return congested;
    }
}
