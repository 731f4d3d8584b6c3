package dev.dbbulkhead.internal;

import dev.dbbulkhead.KindStats;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The kinds of operation of one workload, learned: each operation's kind is its call site (the class of its
 * {@code SqlWork}, one per lambda in the source) or the name its caller gave. For each kind the barrier measures
 * arrivals and holds; while the workload is contended (no execution permit free, now or for a caller in the last
 * window) it keeps a kind whose operations hold their connection more than twice as long as the median operation from
 * having more of its operations inside than its cap, so that slow kinds cannot take the permits that fast ones would
 * turn into many completions. Uncontended, it caps nothing and counts nothing.
 *
 * <p>The rule, every {@link #FOLD_TICKS} ticks of the barrier's clock: a kind's cost is the 10th percentile of its
 * recent holds (what its operations take when they wait behind no one; the mean grows with the waits other kinds
 * cause). With A the arrival rate of all kinds, H the cost of the median operation's kind (kinds in the order of their
 * costs, weighted by arrivals) and L the limit in force, a kind with arrival rate a and cost h &gt; 2H is capped at
 * {@code max(1, floor(L × a/A × H/h))}: its share of the arrivals, reduced by how much longer than the median
 * operation its operations hold. A kind within twice the median is never capped, and no kind is capped below one:
 * every kind can always have one operation inside (its floor), so none starves.
 *
 * <p>Bounded: at most {@link #TRACKED} kinds are told apart; the rest share the kind {@value #OTHER}, and a kind idle
 * for a while gives its place up. Thread-safe: callers enter and leave; {@link #tick} runs on the barrier's clock.
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
    /**
     * The places taken in {@link #byKey}, reserved before a kind is made: the map's size alone let two new keys that
     * arrived together both take the last place (33 tracked, seen once in a run of 10,000 call sites).
     */
    private final AtomicInteger places = new AtomicInteger();

    private final Kind other = new Kind(OTHER, false);
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

    /**
     * One kind: what its callers claim now, and what the clock learned of it. An operation admitted while the workload
     * is not contended is not counted inside (nothing binds then), so that the uncontended path takes no atomic
     * instruction: it looks its kind up and records its hold. Arrivals are the completions and the refusals.
     */
    static final class Kind {
        final String name;
        /** A call site's kind (its {@code SqlWork}'s class), which the shape of its first statement may refine. */
        final boolean callSite;
        /** The shape of the first statement its operations sent ({@link Shapes}); 0 before one. */
        private volatile long shape;
        /** Its operations were seen to send first statements of two shapes: each counts as its shape's kind. */
        private volatile boolean mixed;
        /** Its operations counted inside: admitted while contended and not yet gone (queued or holding permits). */
        private final AtomicInteger inside = new AtomicInteger();
        /** Its callers that left without a hold: refused by the door or at the cap, or after waiting. */
        private final LongAdder refused = new LongAdder();

        private final LongAdder capped = new LongAdder();
        /** Its holds, which count its completions too. */
        private final Histogram histogram = new Histogram();
        /** The histogram's count of completions at the last fold; written by the clock. */
        private long completionsFolded;
        /** Arrivals per second, moving average; written by the clock. */
        private volatile double rate;
        /** The mean of its recent holds (the histogram's); 0 before the first; written by the clock. */
        private volatile double hold;
        /**
         * What one of its operations costs: a low quantile of its recent holds, which waits behind other kinds' work
         * (a lock in the database) lengthen less than the mean; 0 before the first; written by the clock.
         */
        private volatile double cost;
        /** Its recent holds' median and 99th percentile, as of the last fold with any; written by the clock. */
        private volatile long holdP50;

        private volatile long holdP99;
        /** How many of its operations may be inside while the workload is contended. */
        private volatile int cap = Integer.MAX_VALUE;

        Kind(String name, boolean callSite) {
            this.name = name;
            this.callSite = callSite;
        }

        int cap() {
            return cap;
        }

        int inside() {
            return inside.get();
        }

        @Override
        public String toString() {
            return "kind '" + name + "'";
        }
    }

    /**
     * The kind of {@code key}: a {@code SqlWork}'s class, or a name its caller gave. A call site first seen while every
     * place was taken is in {@link #other} until a place frees up, then gets a kind of its own.
     */
    Kind of(Object key) {
        if (!(key instanceof Class<?> type)) {
            return track(key);
        }
        Kind kind = byClass.get(type);
        if (kind == other && places.get() < TRACKED) {
            byClass.remove(type);
            kind = byClass.get(type);
        }
        return kind;
    }

    /** A call site's kind, kept with its class: a lookup as cheap as a field read once seen. */
    private final ClassValue<Kind> byClass = new ClassValue<>() {
        @Override
        protected Kind computeValue(Class<?> type) {
            return track(type);
        }
    };

    /** The kind tracked for {@code key}, made if there is room, else {@link #other}. */
    private Kind track(Object key) {
        Kind kind = byKey.get(key);
        if (kind != null) {
            return kind;
        }
        if (byKey.size() >= TRACKED) {
            overflowed = true;
            return other;
        }
        kind = byKey.computeIfAbsent(key, k -> reservePlace() ? new Kind(name(k), k instanceof Class) : null);
        if (kind == null) {
            overflowed = true;
            return other;
        }
        return kind;
    }

    /**
     * A kind's name, made once: a name given as is; a class by its simple name; a lambda by where it is in the code,
     * the method of the class that wrote it and the line that called the barrier ({@code OrderService.place:42}, read
     * from the stack of its first call), or, when that class is not on the stack, the class and a number.
     */
    private String name(Object key) {
        if (key instanceof ShapeKey shape) {
            return Shapes.text(shape.sql, shape.mysql, SHAPE_NAME);
        }
        if (!(key instanceof Class<?> type)) {
            return key.toString();
        }
        String name = type.getName();
        int lambda = name.indexOf("$$Lambda");
        if (lambda < 0) {
            return name.substring(name.lastIndexOf('.') + 1);
        }
        String host = name.substring(0, lambda);
        String simple = host.substring(host.lastIndexOf('.') + 1);
        return StackWalker.getInstance()
                .walk(frames -> frames.filter(f -> f.getClassName().equals(host))
                        .findFirst()
                        .map(f -> simple + "." + method(f.getMethodName())
                                + (f.getLineNumber() > 0 ? ":" + f.getLineNumber() : ""))
                        .orElseGet(() -> simple + "#" + lambdas.incrementAndGet()));
    }

    /** A method's name as written: a lambda's body ({@code lambda$place$3}) by the method it is written in. */
    private static String method(String name) {
        if (!name.startsWith("lambda$")) {
            return name;
        }
        int end = name.indexOf('$', 7);
        return end > 7 ? name.substring(7, end) : name;
    }

    /** How long a shape's name may be: its text with literals taken out, shortened. */
    static final int SHAPE_NAME = 80;

    /** A statement's shape as a key: equal by its hash; the text only names the kind made for it. */
    private static final class ShapeKey {
        final long hash;
        final String sql;
        final boolean mysql;

        ShapeKey(long hash, String sql, boolean mysql) {
            this.hash = hash;
            this.sql = sql;
            this.mysql = mysql;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof ShapeKey k && k.hash == hash;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(hash);
        }
    }

    /**
     * The kind an operation of {@code site} counts as once its first statement, {@code sql}, is known. A call site
     * whose operations have all sent one shape of statement stays its own kind (it costs a hash of the text, nothing
     * more); once two shapes are seen from it, each operation counts as its first statement's shape, a kind of its own
     * among the workload's bounded places, named by its text ({@code select * from orders where id = ?}). A named kind
     * and {@link #OTHER} are never refined.
     */
    Kind refine(Kind site, String sql, boolean mysql) {
        if (!site.callSite) {
            return site;
        }
        long shape = Shapes.of(sql, mysql);
        if (!site.mixed) {
            long first = site.shape;
            if (first == 0) {
                site.shape = shape;
                return site;
            }
            if (first == shape) {
                return site;
            }
            site.mixed = true;
        }
        return track(new ShapeKey(shape, sql, mysql));
    }

    /**
     * An operation counted as {@code from} ({@code counted} inside it) now counts as {@code to}: it leaves {@code from}
     * and enters {@code to} as {@link #enter} decides; refused if {@code to} is at its cap while contended.
     */
    Decision move(Kind from, boolean counted, Kind to) {
        if (counted) {
            from.inside.decrementAndGet();
        }
        return enter(to);
    }

    /** What {@link #enter} decided. */
    enum Decision {
        /** Refused: its kind is at its cap while the workload is contended. */
        CAPPED,
        /** In, not counted: the workload is not contended, nothing binds. */
        FREE,
        /** In, counted inside its kind until it leaves ({@link #left}). */
        COUNTED
    }

    /**
     * A caller of {@code kind} the door admitted: refused if its kind is at its cap while the workload is contended (no
     * permit free now, or a caller found none in the last window), else in, counted inside its kind while contended.
     */
    Decision enter(Kind kind) {
        boolean full = permits.available() <= 0;
        if (!full && !contended) {
            return Decision.FREE;
        }
        if (full) {
            pressed.increment();
        }
        while (true) {
            int inside = kind.inside.get();
            if (inside >= kind.cap) {
                kind.capped.increment();
                kind.refused.increment();
                return Decision.CAPPED;
            }
            if (kind.inside.compareAndSet(inside, inside + 1)) {
                return Decision.COUNTED;
            }
        }
    }

    /** A caller of {@code kind} the door refused (a permit was not free): its kind's demand, and the workload's. */
    void refused(Kind kind) {
        kind.refused.increment();
        pressed.increment();
    }

    /**
     * An operation of {@code kind} left: {@code counted}, it was counted inside; {@code heldNanos}, how long it held
     * its permits, or -1 if it held none (or its hold says nothing of its kind).
     */
    static void left(Kind kind, boolean counted, long heldNanos) {
        if (counted) {
            kind.inside.decrementAndGet();
        }
        if (heldNanos >= 0) {
            kind.histogram.record(heldNanos);
        } else {
            kind.refused.increment();
        }
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
        var measured = new ArrayList<Kind>(all.size());
        for (Kind k : all) {
            fold(k, seconds);
            // A call site split by shape: its operations count as their shapes' kinds; what is left of it (the callers
            // refused before their first statement, holds learned before the split) would skew the rule.
            if (!k.mixed) {
                rates += k.rate;
                measured.add(k);
            }
        }
        double median = medianHold(measured);
        int limit = permits.limit();
        for (Kind k : all) {
            k.cap = k.mixed ? Integer.MAX_VALUE : cap(k.rate, k.cost, rates, median, limit);
            k.histogram.decay();
        }
        forgetIdle();
    }

    /**
     * The rule: a kind whose mean hold is more than {@link #SLOWER} × the median operation's ({@code median}) is
     * allowed its share of the arrivals times median / its hold, of the limit, and at least one; any other kind, no
     * cap.
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

    /**
     * Written by the clock only, one tick at a time: the volatile fields are read by callers and observers. Arrivals in
     * the window: its completions and its refusals.
     */
    private static void fold(Kind k, double seconds) {
        long completions = k.histogram.completions();
        long arrived = completions - k.completionsFolded + k.refused.sumThenReset();
        k.completionsFolded = completions;
        double rate = k.rate;
        k.rate = rate + ALPHA * (arrived / seconds - rate);
        long cost = k.histogram.quantile(COST_QUANTILE);
        if (cost > 0) { // none recently: the last ones known stand
            k.cost = cost;
            k.hold = k.histogram.mean();
            k.holdP50 = k.histogram.quantile(0.5);
            k.holdP99 = k.histogram.quantile(0.99);
        }
    }

    /** Takes one of the {@value #TRACKED} places, if one is free. */
    private boolean reservePlace() {
        for (int taken = places.get(); taken < TRACKED; taken = places.get()) {
            if (places.compareAndSet(taken, taken + 1)) {
                return true;
            }
        }
        return false;
    }

    /** Makes room for new kinds: when every place is taken, forgets the kinds that stopped arriving. */
    private void forgetIdle() {
        if (byKey.size() < TRACKED) {
            return;
        }
        // An operation that still holds a forgotten kind leaves it as it entered it: its count is its own.
        byKey.entrySet().removeIf(e -> {
            Kind k = e.getValue();
            boolean idle = k.rate < IDLE_RATE && k.inside.get() == 0;
            if (idle && e.getKey() instanceof Class<?> type) {
                byClass.remove(type);
            }
            if (idle) {
                places.decrementAndGet();
            }
            return idle;
        });
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
                    Duration.ofNanos(k.holdP50),
                    Duration.ofNanos(k.holdP99),
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
}
