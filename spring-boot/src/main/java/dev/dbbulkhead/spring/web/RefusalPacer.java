package dev.dbbulkhead.spring.web;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.Workload;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * How long to hold a refusal before answering it, so that refusals cost no more than successes: a refused client of a
 * closed loop comes straight back, and without a hold the server spends its cores answering it again and again (on
 * the example service under 200 clients: 6,000 refusals a second beside 30 successes, performance.md §10).
 *
 * <p>A refusal is held for as many completions of its workload as there are refusals held already: {@code held /
 * completions per second}, at most {@code maxHold} (the {@code Retry-After}). By Little's law the refusals then come
 * back at about the rate the workload completes operations, however many clients loop: each held refusal waits its turn
 * behind the others, as it would have in the pool's queue, but holding no permit and no connection. A refusal with
 * none held is answered at once, so an occasional one (a burst below capacity) costs nothing; under an open-loop flood
 * the holds grow to {@code maxHold}. At most {@value #MAX_HELD} refusals are held at once (each is a request, its
 * socket and a parked virtual thread); beyond that they are answered at once. Only a request on a virtual thread is
 * held: a platform thread held would be a servlet worker taken from the successes.
 *
 * <p>It learns each workload's completions as a {@link BulkheadListener} of the barrier. Thread-safe.
 */
public final class RefusalPacer implements BulkheadListener {
    /** The most refusals held at once, all workloads together; more are answered at once. */
    public static final int MAX_HELD = 1_024;

    /**
     * Each refusal is held for this many completions per refusal held ahead of it: refusals then come back at about
     * 1 / this of the rate the workload completes operations (Google's client-side throttling keeps K = 2 requests
     * per accepted one for the same reason: a rejection costs the server too).
     */
    static final long REFUSALS_PER_COMPLETION_INVERSE = 2;

    private static final long SECOND = 1_000_000_000L;

    private final long maxHoldNanos;
    private final LongSupplier nanoClock;
    private final ConcurrentHashMap<String, Rate> rates = new ConcurrentHashMap<>();
    private final AtomicInteger held = new AtomicInteger();

    /** @param maxHold the longest hold: the {@code Retry-After} */
    public RefusalPacer(Duration maxHold) {
        this(maxHold, System::nanoTime);
    }

    RefusalPacer(Duration maxHold, LongSupplier nanoClock) {
        this.maxHoldNanos = maxHold.toNanos();
        this.nanoClock = nanoClock;
    }

    /** One workload's completions per second, over the last second or more. */
    private static final class Rate {
        final LongAdder finished = new LongAdder();
        final AtomicLong windowStart;
        volatile long perSecond;
        final AtomicInteger held = new AtomicInteger();

        Rate(long now) {
            this.windowStart = new AtomicLong(now);
        }

        long perSecond(long now) {
            long start = windowStart.get();
            long elapsed = now - start;
            if (elapsed >= SECOND && windowStart.compareAndSet(start, now)) {
                perSecond = finished.sumThenReset() * SECOND / elapsed;
            }
            return perSecond;
        }
    }

    @Override
    public void onFinished(
            Workload workload,
            Outcome outcome,
            long permitWaitNanos,
            long poolWaitNanos,
            long holdNanos,
            long workNanos) {
        Rate r = rate(workload.name());
        r.finished.increment();
        r.perSecond(nanoClock.getAsLong());
    }

    private Rate rate(String workload) {
        Rate r = rates.get(workload);
        return r != null ? r : rates.computeIfAbsent(workload, w -> new Rate(nanoClock.getAsLong()));
    }

    /**
     * How long a refusal of {@code workload} arriving now would be held: as many completions of its workload as there
     * are refusals of it held already, at most the longest hold; zero with none held, on a platform thread, or with
     * {@value #MAX_HELD} held already.
     */
    public Duration holdFor(String workload) {
        Rate r = rate(workload);
        return Duration.ofNanos(holdNanos(r, r.held.get(), held.get() + 1));
    }

    private long holdNanos(Rate r, int ahead, int heldWithThis) {
        if (ahead <= 0 || heldWithThis > MAX_HELD || !Thread.currentThread().isVirtual()) {
            return 0;
        }
        long perSecond = r.perSecond(nanoClock.getAsLong());
        if (perSecond <= 0) {
            return maxHoldNanos;
        }
        return Math.min(maxHoldNanos, REFUSALS_PER_COMPLETION_INVERSE * ahead * SECOND / perSecond);
    }

    /**
     * Holds a refusal of {@code workload} on this thread for as long as {@link #holdFor} says, counted among those
     * held meanwhile; an interrupt ends the hold, its flag set again.
     */
    public void hold(String workload) {
        Rate r = rate(workload);
        int ahead = r.held.getAndIncrement();
        int heldWithThis = held.incrementAndGet();
        try {
            long nanos = holdNanos(r, ahead, heldWithThis);
            if (nanos > 0) {
                Thread.sleep(Duration.ofNanos(nanos));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // answered now
        } finally {
            held.decrementAndGet();
            r.held.decrementAndGet();
        }
    }

    /** Refusals held now, all workloads together. */
    public int held() {
        return held.get();
    }
}
