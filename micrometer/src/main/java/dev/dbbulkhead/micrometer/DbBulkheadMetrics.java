package dev.dbbulkhead.micrometer;

import static dev.dbbulkhead.micrometer.BulkheadMeterNames.BULKHEAD;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.CONNECTION_USE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.CONNECTION_WAIT;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.ELASTIC_ALLOWANCE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.ELASTIC_AT_FLOOR;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.ELASTIC_HEADROOM;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.EXECUTING;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.HOLD_RECENT;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.KIND;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.KIND_ARRIVALS;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.KIND_CAP;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.KIND_CAPPED;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.KIND_HOLD_P50;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.KIND_HOLD_P99;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.KIND_INSIDE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.KIND_SHARE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.LATENCY_OBJECTIVE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.LATENCY_P99;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.LEAKS_SUSPECTED;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.LIMIT;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.OPERATIONS;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.OUTCOME;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.OVERLOAD_SIGNALS;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.PENDING;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.PERMITS_AVAILABLE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.PERMITS_MAX;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.PERMIT_HOLD;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.PERMIT_WAIT;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.POOL_TIMEOUTS;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.PRIORITY;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.REASON;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.RECLAIMED;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.REJECTIONS;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.SESSIONS_DISCARDED;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.SHARING_STATE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.SLOTS_AVAILABLE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.SLOTS_MAX;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.STATE;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.WAIT_EXPECTED;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.WORK;
import static dev.dbbulkhead.micrometer.BulkheadMeterNames.WORKLOAD;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.Priority;
import dev.dbbulkhead.RejectionReason;
import dev.dbbulkhead.Sharing;
import dev.dbbulkhead.Workload;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * Publishes a barrier's operations to a Micrometer {@link MeterRegistry}: rejections by reason, outcomes, timers
 * (with percentile histograms) for the permit wait, the pool wait, the connection hold and the work, and gauges
 * for what is executing, waiting and free, per workload. Meter names: {@link BulkheadMeterNames}.
 *
 * <pre>{@code
 * var metrics = new DbBulkheadMetrics(registry);
 * var db = DbBulkhead.builder(pool).listener(metrics).workload("interactive", 12, 24).build();
 * metrics.bind(db);
 * }</pre>
 *
 * Thread-safe. One instance may serve several barriers.
 */
public final class DbBulkheadMetrics implements BulkheadListener {
    private final MeterRegistry registry;
    private final Tags extraTags;
    private final Map<Workload, Meters> meters = new ConcurrentHashMap<>();
    private final Map<Workload, KindGauges> kinds = new ConcurrentHashMap<>();

    public DbBulkheadMetrics(MeterRegistry registry) {
        this(registry, Tags.empty());
    }

    /** With tags added to every meter (e.g. the service or the database). */
    public DbBulkheadMetrics(MeterRegistry registry, Iterable<Tag> extraTags) {
        this.registry = Objects.requireNonNull(registry, "registry must not be null");
        this.extraTags = Tags.of(Objects.requireNonNull(extraTags, "extraTags must not be null"));
    }

    /**
     * Registers the gauges of every workload of {@code bulkhead} (the counters and timers come with the first
     * operations). The gauges hold the workloads weakly, like any Micrometer gauge.
     *
     * @return {@code bulkhead}
     */
    public DbBulkhead bind(DbBulkhead bulkhead) {
        Objects.requireNonNull(bulkhead, "bulkhead must not be null");
        for (Workload w : bulkhead.workloads()) {
            meters(w);
            Tags tags = tags(w);
            gauge(EXECUTING, "operations holding an execution permit", w, Workload::executing, tags);
            gauge(PENDING, "operations waiting for an execution permit", w, Workload::waiting, tags);
            gauge(PERMITS_AVAILABLE, "free execution permits", w, Workload::available, tags);
            gauge(SLOTS_AVAILABLE, "free admission slots", w, Workload::availableSlots, tags);
            gauge(PERMITS_MAX, "B, the execution budget", w, Workload::concurrent, tags);
            gauge(SLOTS_MAX, "B + Q, the admission budget", w, x -> x.concurrent() + (double) x.extraSlots(), tags);
            gauge(LIMIT, "L, operations that may hold an execution permit now", w, Workload::limit, tags);
            FunctionCounter.builder(RECLAIMED, w, Workload::reclaimed)
                    .description("leases and queued callers "
                            + "reclaimed because their thread ended without giving their permits back")
                    .tags(tags)
                    .baseUnit("leases")
                    .register(registry);
            if (w.config().priority() == Priority.ELASTIC) {
                gauge(
                        ELASTIC_AT_FLOOR,
                        "1 while the elastic workload is held to its floor of one permit",
                        w,
                        x -> x.limit() <= 1 ? 1 : 0,
                        tags);
            }
            if (w.sharing().isPresent()) {
                sharing(w, tags);
            }
            if (w.predictive() || w.adaptive()) {
                seconds(
                        HOLD_RECENT,
                        "recent average permit hold time",
                        w,
                        x -> x.recentHoldTime().toNanos() / 1e9,
                        tags);
            }
            if (w.config().kinds()) {
                kinds.put(w, new KindGauges(registry, tags));
            }
            if (w.predictive()) {
                seconds(
                        WAIT_EXPECTED,
                        "expected wait of a caller arriving now (predictive rejection)",
                        w,
                        x -> x.expectedWait().toNanos() / 1e9,
                        tags);
            }
        }
        return bulkhead;
    }

    /** The allowance and headroom of an elastic workload, the objective of a regular one, the state of both. */
    private void sharing(Workload w, Tags tags) {
        if (w.config().priority() == Priority.ELASTIC) {
            gauge(ELASTIC_ALLOWANCE, "permits the regular latency objectives allow", w, x -> read(x).allowance(), tags);
            gauge(ELASTIC_HEADROOM, "permits kept for the regular peak demand", w, x -> read(x).headroom(), tags);
        } else {
            seconds(
                    LATENCY_OBJECTIVE,
                    "p99 latency objective elastic work must leave",
                    w,
                    x -> seconds(read(x).objective()),
                    tags);
            seconds(
                    LATENCY_P99,
                    "p99 of permit wait plus hold, last window",
                    w,
                    x -> seconds(read(x).recentP99()),
                    tags);
        }
        for (Sharing.State state : Sharing.State.values()) {
            Gauge.builder(SHARING_STATE, w, x -> read(x).state() == state ? 1 : 0)
                    .description("1 for the state of the last window under priorities, 0 for the others")
                    .tags(tags.and(STATE, state.name().toLowerCase(Locale.ROOT)))
                    .register(registry);
        }
    }

    /** {@code d} in seconds; NaN when there is none (yet). */
    private static double seconds(@Nullable Duration d) {
        return d == null ? Double.NaN : d.toNanos() / 1e9;
    }

    /** The workload's place under priorities; present for every workload of a barrier with an elastic one. */
    private static Sharing read(Workload w) {
        return w.sharing().orElseThrow();
    }

    private void gauge(String name, String description, Workload w, ToDoubleFunction<Workload> value, Tags tags) {
        Gauge.builder(name, w, value)
                .description(description)
                .tags(tags)
                .baseUnit("operations")
                .register(registry);
    }

    private void seconds(String name, String description, Workload w, ToDoubleFunction<Workload> value, Tags tags) {
        Gauge.builder(name, w, value)
                .description(description)
                .tags(tags)
                .baseUnit("seconds")
                .register(registry);
    }

    private Tags tags(Workload w) {
        return extraTags.and(
                BULKHEAD,
                w.bulkheadName(),
                WORKLOAD,
                w.name(),
                PRIORITY,
                w.config().priority().name().toLowerCase(Locale.ROOT));
    }

    private Meters meters(Workload w) {
        return meters.computeIfAbsent(w, key -> new Meters(registry, tags(key)));
    }

    @Override
    public void onPoolTimeout(Workload workload) {
        meters(workload).poolTimeouts.increment();
    }

    @Override
    public void onOverloadSignal(Workload workload, Throwable signal) {
        meters(workload).overloadSignals.increment();
    }

    @Override
    public void onLeakSuspected(Workload workload, long heldNanos) {
        meters(workload).leaksSuspected.increment();
    }

    @Override
    public void onSessionDiscarded(Workload workload) {
        meters(workload).sessionsDiscarded.increment();
    }

    @Override
    public void onRejected(Workload workload, RejectionReason reason, long waitedNanos) {
        meters(workload).rejection(reason).increment();
    }

    @Override
    public void onPermitAcquired(Workload workload, long waitNanos) {
        meters(workload).permitWait.record(waitNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void onFinished(
            Workload workload,
            Outcome outcome,
            long permitWaitNanos,
            long poolWaitNanos,
            long holdNanos,
            long workNanos) {
        Meters m = meters(workload);
        m.outcome(outcome).increment();
        KindGauges k = kinds.get(workload);
        if (k != null) {
            k.refresh(workload);
        }
        if (outcome == Outcome.RELEASED) {
            m.permitHold.record(holdNanos, TimeUnit.NANOSECONDS);
            return; // a lease: the caller's own transaction, whose connection the barrier never saw
        }
        m.permitHold.record(poolWaitNanos + holdNanos, TimeUnit.NANOSECONDS);
        m.connectionWait.record(poolWaitNanos, TimeUnit.NANOSECONDS);
        if (outcome != Outcome.NO_CONNECTION) {
            m.connectionUse.record(holdNanos, TimeUnit.NANOSECONDS);
            m.work.record(workNanos, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * A workload's gauges per kind of operation: one row per kind it tells apart (bounded: 32 and {@code other}),
     * re-listed at most once a second, from an operation's end, when a kind came or went. Each row reads the
     * workload's {@link Workload#kinds()} when scraped.
     */
    private static final class KindGauges {
        private static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);
        private final List<MultiGauge> gauges = new ArrayList<>();
        private final List<ToDoubleFunction<KindStats>> values = new ArrayList<>();
        private final AtomicLong next = new AtomicLong(System.nanoTime());
        private volatile List<String> listed = List.of();
        /** The workload's kinds as last read, and when: a scrape reads every row of every gauge from one reading. */
        private volatile @Nullable Reading reading;

        /** The kinds change with the workload's clock, every 100 ms: read no more often than that. */
        private static final long READ_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

        private record Reading(long at, List<KindStats> kinds) {}

        private List<KindStats> kinds(Workload w) {
            long now = System.nanoTime();
            Reading last = reading;
            if (last == null || now - last.at() >= READ_NANOS) {
                last = new Reading(now, w.kinds());
                reading = last;
            }
            return last.kinds();
        }

        KindGauges(MeterRegistry registry, Tags tags) {
            add(
                    registry,
                    tags,
                    KIND_ARRIVALS,
                    "recent arrivals per second",
                    "operations",
                    KindStats::arrivalsPerSecond);
            add(registry, tags, KIND_SHARE, "share of the workload's arrivals", null, KindStats::share);
            add(
                    registry,
                    tags,
                    KIND_HOLD_P50,
                    "recent median hold",
                    "seconds",
                    k -> k.holdP50().toNanos() / 1e9);
            add(
                    registry,
                    tags,
                    KIND_HOLD_P99,
                    "recent p99 hold",
                    "seconds",
                    k -> k.holdP99().toNanos() / 1e9);
            add(
                    registry,
                    tags,
                    KIND_CAP,
                    "operations allowed inside while contended; -1: no cap",
                    "operations",
                    KindStats::cap);
            add(
                    registry,
                    tags,
                    KIND_INSIDE,
                    "operations counted inside now (admitted while contended)",
                    "operations",
                    KindStats::inside);
            add(registry, tags, KIND_CAPPED, "callers refused at the kind's cap", "operations", KindStats::capped);
        }

        private void add(
                MeterRegistry registry,
                Tags tags,
                String name,
                String description,
                @Nullable String unit,
                ToDoubleFunction<KindStats> value) {
            var builder = MultiGauge.builder(name).description(description).tags(tags);
            gauges.add((unit == null ? builder : builder.baseUnit(unit)).register(registry));
            values.add(value);
        }

        void refresh(Workload w) {
            long now = System.nanoTime();
            long due = next.get();
            if (now - due < 0 || !next.compareAndSet(due, now + REFRESH_NANOS)) {
                return;
            }
            List<String> names = kinds(w).stream().map(KindStats::name).toList();
            if (names.equals(listed)) {
                return;
            }
            listed = names;
            for (int g = 0; g < gauges.size(); g++) {
                ToDoubleFunction<KindStats> value = values.get(g);
                gauges.get(g)
                        .register(
                                names.stream()
                                        .map(name ->
                                                MultiGauge.Row.of(Tags.of(KIND, name), w, x -> read(x, name, value)))
                                        .toList(),
                                true);
            }
        }

        /** What one kind's row shows: the value of the kinds read at most {@link #READ_NANOS} ago. */
        private double read(Workload w, String kind, ToDoubleFunction<KindStats> value) {
            for (KindStats k : kinds(w)) {
                if (k.name().equals(kind)) {
                    return value.applyAsDouble(k);
                }
            }
            return Double.NaN;
        }
    }

    /** One workload's counters and timers, created once. */
    private static final class Meters {
        final Map<RejectionReason, Counter> rejections = new EnumMap<>(RejectionReason.class);
        final Map<Outcome, Counter> outcomes = new EnumMap<>(Outcome.class);
        final Timer permitWait;
        final Timer permitHold;
        final Timer connectionWait;
        final Timer connectionUse;
        final Timer work;
        final Counter leaksSuspected;
        final Counter sessionsDiscarded;
        final Counter poolTimeouts;
        final Counter overloadSignals;

        Counter rejection(RejectionReason reason) {
            return Objects.requireNonNull(rejections.get(reason), "a counter for every reason");
        }

        Counter outcome(Outcome outcome) {
            return Objects.requireNonNull(outcomes.get(outcome), "a counter for every outcome");
        }

        Meters(MeterRegistry registry, Tags tags) {
            for (RejectionReason r : RejectionReason.values()) {
                rejections.put(
                        r,
                        Counter.builder(REJECTIONS)
                                .description("operations refused before taking a connection")
                                .tags(tags)
                                .tag(REASON, r.name().toLowerCase(Locale.ROOT))
                                .baseUnit("operations")
                                .register(registry));
            }
            for (Outcome o : Outcome.values()) {
                outcomes.put(
                        o,
                        Counter.builder(OPERATIONS)
                                .description("operations that held an execution permit")
                                .tags(tags)
                                .tag(OUTCOME, o.name().toLowerCase(Locale.ROOT))
                                .baseUnit("operations")
                                .register(registry));
            }
            permitWait = timer(registry, PERMIT_WAIT, "wait for an execution permit", tags);
            permitHold = timer(registry, PERMIT_HOLD, "execution permit held, grant to release", tags);
            connectionWait = timer(registry, CONNECTION_WAIT, "wait for a connection from the pool", tags);
            connectionUse = timer(registry, CONNECTION_USE, "connection held, acquisition to close", tags);
            work = timer(registry, WORK, "time inside the caller's work", tags);
            leaksSuspected = Counter.builder(LEAKS_SUSPECTED)
                    .description("leases open for longer than the leak detection threshold")
                    .tags(tags)
                    .baseUnit("leases")
                    .register(registry);
            sessionsDiscarded = Counter.builder(SESSIONS_DISCARDED)
                    .description("connections discarded because work may have changed their session")
                    .tags(tags)
                    .baseUnit("connections")
                    .register(registry);
            poolTimeouts = Counter.builder(POOL_TIMEOUTS)
                    .description("admitted operations that could not get a connection from the pool in time")
                    .tags(tags)
                    .baseUnit("operations")
                    .register(registry);
            overloadSignals = Counter.builder(OVERLOAD_SIGNALS)
                    .description("admitted operations that failed with "
                            + "a sign of saturation (what an adaptive limit counts)")
                    .tags(tags)
                    .baseUnit("operations")
                    .register(registry);
        }

        private static Timer timer(MeterRegistry registry, String name, String description, Tags tags) {
            return Timer.builder(name)
                    .description(description)
                    .tags(tags)
                    .publishPercentileHistogram()
                    .register(registry);
        }
    }
}
