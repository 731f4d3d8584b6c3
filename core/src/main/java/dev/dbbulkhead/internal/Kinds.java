package dev.dbbulkhead.internal;

import dev.dbbulkhead.KindStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The kinds of operation of one workload, learned: each operation's kind is its call site (the class of its
 * {@code SqlWork}, one per lambda in the source) or the name its caller gave. For each kind the barrier measures
 * arrivals and holds; while the workload is contended (no execution permit free) it keeps a kind whose operations hold
 * their connection more than twice as long as the median operation from having more of its operations inside than its cap, so
 * that slow kinds cannot take the permits that fast ones would turn into many completions. Uncontended, it caps
 * nothing.
 *
 * <p>The rule, every {@link #FOLD_TICKS} ticks of the barrier's clock: a kind's cost is the 10th percentile of its
 * recent holds (what its operations take when they wait behind no one; the mean grows with the waits other kinds
 * cause). With A the arrival rate of all kinds, H the cost of the median operation's kind (kinds in the order of their
 * costs, weighted by arrivals) and L the limit in force, a kind with arrival rate a and cost h &gt; 2H is capped at {@code max(1, floor(L × a/A × H/h))}: its
 * share of the arrivals, reduced by how much longer than the median operation its operations hold. A kind within twice
 * the median is never capped, and no kind is capped below one: every kind can always have one operation inside (its
 * floor), so none starves.
 *
 * <p>Bounded: at most {@link #TRACKED} kinds are told apart; the rest share the kind {@value #OTHER}, and a kind idle
 * for a while gives its place up. Thread-safe: callers claim and leave; {@link #tick} runs on the barrier's clock.
 */
final class Kinds {
    /** How many kinds one workload tells apart; beyond, they share {@link #other}. */
    static final int TRACKED = 32;

    static final String OTHER = "other";
    /** Rates, holds and caps are folded every 10 ticks (100 ms). */
    static final int FOLD_TICKS = 10;
    /** The weight of the newest window in the moving averages: caps follow a shift within about a second. */
    private static final double ALPHA = 0.3;
    /** The quantile of a kind's recent holds taken as what one of its operations costs. */
    static final double COST_QUANTILE = 0.1;
    /** How many times the median operation's hold a kind must hold to be capped: kinds of similar cost are not. */
    static final double SLOWER = 2;
    /** A kind whose arrival rate fell below this (per second) and that has nothing inside may be forgotten. */
    private static final double IDLE_RATE = 1e-3;

    private final ConcurrentHashMap<Object, Kind> byKey = new ConcurrentHashMap<>();
    private final Kind other = new Kind(OTHER);
    private final Permits permits;
    private final AtomicInteger lambdas = new AtomicInteger();
    /** Written by the clock only. */
    private int ticks;
    /** Whether a kind was ever put in {@link #other}. */
    private volatile boolean overflowed;
    /** Callers that found no permit free, since the last fold. */
    private final LongAdder pressed = new LongAdder();
    /**
     * Whether a caller found no permit free in the last window: the workload is contended even while a permit is free
     * for a moment (its capacity may be a lock or the database's cores, not its permits). Written by the clock.
     */
    private volatile boolean contended;

    private long folded;

    Kinds(Permits permits, long now) {
        this.permits = permits;
        this.folded = now;
    }

    /** One kind: what its callers claim now, and what the clock learned of it. */
    static final class Kind {
        final String name;
        /** Its operations inside: admitted and not yet gone (queued or holding permits). */
        private final AtomicInteger inside = new AtomicInteger();

        private final LongAdder arrivals = new LongAdder();
        private final LongAdder holds = new LongAdder();
        private final LongAdder heldNanos = new LongAdder();
        private final LongAdder capped = new LongAdder();
        private final Holds histogram = new Holds();
        /** Arrivals per second, moving average; written by the clock. */
        private volatile double rate;
        /** Mean hold, moving average; 0 before the first operation; written by the clock. */
        private volatile double hold;
        /**
         * What one of its operations costs: a low quantile of its recent holds, which waits behind other kinds' work
         * (a lock in the database) lengthen less than the mean; 0 before the first; written by the clock.
         */
        private volatile double cost;
        /** How many of its operations may be inside while the workload is contended. */
        private volatile int cap = Integer.MAX_VALUE;

        Kind(String name) {
            this.name = name;
        }

        int cap() {
            return cap;
        }

        int inside() {
            return inside.get();
        }

        /** One of its operations left, with or without a permit. */
        void left() {
            inside.decrementAndGet();
        }

        @Override
        public String toString() {
            return "kind '" + name + "'";
        }
    }

    /** The kind of {@code key}: a {@code SqlWork}'s class, or a name its caller gave. */
    Kind of(Object key) {
        Kind kind = byKey.get(key);
        if (kind != null) {
            return kind;
        }
        if (byKey.size() >= TRACKED) {
            overflowed = true;
            return other;
        }
        kind = byKey.computeIfAbsent(key, k -> byKey.size() >= TRACKED ? null : new Kind(name(k)));
        if (kind == null) {
            overflowed = true;
            return other;
        }
        return kind;
    }

    private String name(Object key) {
        if (!(key instanceof Class<?> type)) {
            return key.toString();
        }
        String name = type.getName();
        int lambda = name.indexOf("$$Lambda");
        String simple = name.substring(name.lastIndexOf('.') + 1);
        if (lambda < 0) {
            return simple;
        }
        // A lambda's class is named after the class it is written in, and an address: the host and a number instead.
        return name.substring(name.lastIndexOf('.', lambda) + 1, lambda) + "#" + lambdas.incrementAndGet();
    }

    /** A caller of {@code kind} arrived, whether it is admitted or not: its kind's demand, and the workload's. */
    void arrived(Kind kind) {
        kind.arrivals.increment();
        if (permits.available() <= 0) {
            pressed.increment();
        }
    }

    /**
     * A caller of {@code kind} the door admitted; true if it may come in (then it is counted inside until
     * {@link Kind#left}), false if its kind is at its cap while the workload is contended: no permit free now, or a
     * caller found none in the last window.
     */
    boolean enter(Kind kind) {
        while (true) {
            int inside = kind.inside.get();
            if (inside >= kind.cap && (contended || permits.available() <= 0)) {
                kind.capped.increment();
                return false;
            }
            if (kind.inside.compareAndSet(inside, inside + 1)) {
                return true;
            }
        }
    }

    /** One operation of {@code kind} gave its permits back after holding them {@code heldNanos}. */
    static void held(Kind kind, long heldNanos) {
        kind.holds.increment();
        kind.heldNanos.add(heldNanos);
        kind.histogram.record(heldNanos);
    }

    /** On the barrier's clock: every {@link #FOLD_TICKS} ticks, folds the window into rates, holds and caps. */
    void tick(long now) {
        if (++ticks < FOLD_TICKS) {
            return;
        }
        ticks = 0;
        contended = pressed.sumThenReset() > 0;
        double seconds = Math.max(1e-3, (now - folded) / 1e9);
        folded = now;
        List<Kind> all = kinds();
        double rates = 0;
        for (Kind k : all) {
            fold(k, seconds);
            rates += k.rate;
        }
        double median = medianHold(all);
        int limit = permits.limit();
        for (Kind k : all) {
            k.cap = cap(k.rate, k.cost, rates, median, limit);
            k.histogram.decay();
        }
        forgetIdle();
    }

    /**
     * The rule: a kind whose mean hold is more than {@link #SLOWER} × the median operation's ({@code median}) is allowed
     * its share of the arrivals times median / its hold, of the limit, and at least one; any other kind, no cap.
     */
    static int cap(double rate, double hold, double rates, double median, int limit) {
        if (hold <= SLOWER * median || rates == 0 || median == 0) {
            return Integer.MAX_VALUE;
        }
        return (int) Math.max(1, Math.floor(limit * (rate / rates) * (median / hold)));
    }

    /**
     * The cost of the kind the median operation belongs to: kinds in the order of their costs (a low quantile of their
     * holds), weighted by their arrivals (only kinds whose cost is known); 0 when none is.
     */
    static double medianHold(List<Kind> kinds) {
        var timed = new ArrayList<Kind>();
        double rates = 0;
        for (Kind k : kinds) {
            if (k.cost > 0 && k.rate > 0) {
                timed.add(k);
                rates += k.rate;
            }
        }
        timed.sort(Comparator.comparingDouble((Kind k) -> k.cost));
        double below = 0;
        for (Kind k : timed) {
            below += k.rate;
            if (below >= rates / 2) {
                return k.cost;
            }
        }
        return 0;
    }

    /** Written by the clock only, one tick at a time: the volatile fields are read by callers and observers. */
    private static void fold(Kind k, double seconds) {
        double rate = k.rate;
        k.rate = rate + ALPHA * (k.arrivals.sumThenReset() / seconds - rate);
        long n = k.holds.sumThenReset();
        long held = k.heldNanos.sumThenReset();
        if (n > 0) {
            double mean = (double) held / n;
            double hold = k.hold;
            k.hold = hold == 0 ? mean : hold + ALPHA * (mean - hold);
        }
        long cost = k.histogram.quantile(COST_QUANTILE);
        if (cost > 0) { // none recently: the last one known stands
            k.cost = cost;
        }
    }

    /** Makes room for new kinds: when every place is taken, forgets the kinds that stopped arriving. */
    private void forgetIdle() {
        if (byKey.size() < TRACKED) {
            return;
        }
        // An operation that still holds a forgotten kind leaves it as it entered it: its count is its own.
        byKey.values().removeIf(k -> k.rate < IDLE_RATE && k.inside.get() == 0);
    }

    private List<Kind> kinds() {
        var all = new ArrayList<Kind>(byKey.size() + 1);
        for (Kind k : byKey.values()) {
            if (k != other) {
                all.add(k);
            }
        }
        all.add(other);
        return all;
    }

    /** What is known of each kind that has arrived, busiest first; "other" only if any shared it. */
    List<KindStats> stats() {
        double rates = 0;
        List<Kind> all = kinds();
        for (Kind k : all) {
            rates += k.rate;
        }
        var list = new ArrayList<KindStats>();
        for (Kind k : all) {
            if (k == other && !overflowed) {
                continue;
            }
            list.add(new KindStats(
                    k.name,
                    k.rate,
                    rates == 0 ? 0 : k.rate / rates,
                    Duration.ofNanos((long) k.hold),
                    Duration.ofNanos(k.histogram.quantile(0.5)),
                    Duration.ofNanos(k.histogram.quantile(0.99)),
                    k.cap == Integer.MAX_VALUE ? -1 : k.cap,
                    k.inside.get(),
                    k.capped.sum()));
        }
        list.sort(Comparator.comparingDouble(
                        (KindStats s) -> s.arrivalsPerSecond() * s.meanHold().toNanos())
                .thenComparingDouble(KindStats::arrivalsPerSecond)
                .reversed());
        return list;
    }

    /**
     * Hold times in buckets four to a power of two (within 19 %), halved at every fold: the recent holds weigh most.
     */
    static final class Holds {
        private static final int BUCKETS = 4 * 64;
        private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);

        static int bucket(long nanos) {
            if (nanos < 4) {
                return (int) Math.max(0, nanos);
            }
            int log = 63 - Long.numberOfLeadingZeros(nanos);
            return 4 * log + (int) ((nanos >>> (log - 2)) & 3);
        }

        /** The smallest value of bucket {@code b}. */
        static long lower(int b) {
            if (b < 4) {
                return b;
            }
            int log = b / 4;
            return (1L << log) + ((long) (b % 4) << (log - 2));
        }

        void record(long nanos) {
            counts.incrementAndGet(bucket(nanos));
        }

        void decay() {
            for (int i = 0; i < BUCKETS; i++) {
                long c = counts.get(i);
                if (c != 0) {
                    counts.addAndGet(i, -((c + 1) / 2));
                }
            }
        }

        /** The value below which {@code q} of the recent holds lie (a bucket's midpoint); 0 without any. */
        long quantile(double q) {
            long total = 0;
            for (int i = 0; i < BUCKETS; i++) {
                total += counts.get(i);
            }
            if (total == 0) {
                return 0;
            }
            long rank = (long) Math.ceil(q * total);
            long seen = 0;
            for (int i = 0; i < BUCKETS; i++) {
                seen += counts.get(i);
                if (seen >= rank) {
                    return i + 1 < BUCKETS ? (lower(i) + lower(i + 1)) / 2 : lower(i);
                }
            }
            return lower(BUCKETS - 1);
        }
    }
}
