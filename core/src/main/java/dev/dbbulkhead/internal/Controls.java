package dev.dbbulkhead.internal;

import dev.dbbulkhead.KindStats;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What one workload predicts, learns and is allowed, chosen once from its {@link WorkloadConfig}: how its permits come
 * back ({@link Drain}), the door's verdict ({@link Door}) and its audit, the adaptive limit ({@link AdaptiveLimit}),
 * its share under the barrier's priorities ({@link Arbiter}), and the limit in force that follows from them
 * ({@link ConfiguredControls#of} chooses them from a {@code WorkloadConfig}).
 *
 * <p>{@link Admission} asks ({@link #admit}) and tells ({@link #granted}, {@link #refused}, {@link #released}); the
 * barrier's {@link BarrierClock} runs the periodic part ({@link #tick}, {@link #apply}). Controls never refuse a caller
 * and never touch a lease: a verdict is a value, acted on by admission.
 *
 * <p>The article's workload has {@link #NONE}: nothing measured, nothing predicted, its limit B for good, chosen once
 * so that admission's fast path asks nothing.
 */
interface Controls {
    /** The article's workload: a fixed limit, a FIFO queue, nothing measured. */
    Controls NONE = new Controls() {
        @Override
        public String toString() {
            return "no controls";
        }
    };

    /** Whether admission must read the clock and report to these controls; false for {@link #NONE} only. */
    default boolean active() {
        return false;
    }

    /** The kind of operation of {@code key} (a {@code SqlWork}'s class or a caller's name), or null: none learned. */
    default Kinds.@Nullable Kind kind(Object key) {
        return null;
    }

    /**
     * The verdict at {@code now} on a caller of {@code kind} (null: none) that allows itself {@code wait}: {@code wait}
     * itself when a permit is free or nothing is predicted. An {@link Verdict.Admit} that says {@code kindCounted}
     * counted the caller inside its kind, until {@link #left}.
     */
    default Verdict admit(Verdict.Admit wait, Kinds.@Nullable Kind kind, long now) {
        return wait;
    }

    /**
     * An operation admitted as {@code kind} ({@code counted} inside it) left, after holding its permits
     * {@code heldNanos}; -1 if it held none, or its hold says nothing of its kind (reclaimed, suspected of leaking).
     */
    default void left(Kinds.Kind kind, boolean counted, long heldNanos) {}

    /**
     * The kind an operation of {@code site} counts as, its first statement {@code sql} known ({@link Kinds#refine}).
     */
    default Kinds.Kind refine(Kinds.Kind site, String sql, boolean mysql) {
        return site;
    }

    /** An operation moves from one kind to another ({@link Kinds#move}); without kinds, nothing binds. */
    default Kinds.Decision move(Kinds.Kind from, boolean counted, Kinds.Kind to) {
        return Kinds.Decision.FREE;
    }

    /** What is known of each kind of operation; empty without kinds. */
    default List<KindStats> kinds() {
        return List.of();
    }

    /** Both permits were granted to a caller at {@code now}. */
    default void granted(long now) {}

    /** A caller left at {@code now} without a permit: refused after waiting, or out of time. */
    default void refused(long now) {}

    /**
     * One operation gave its permits back at {@code now} after holding them {@code heldNanos}, {@code callNanos} after
     * its call; {@code inTime}: within its deadline, or it had none; {@code overloaded}: its transaction failed with an
     * overload signal. Not called for a lease suspected of leaking, nor for one reclaimed.
     */
    default void released(long heldNanos, long callNanos, boolean inTime, boolean overloaded, long now) {}

    /** What a caller arriving at {@code now} is expected to wait; 0 without prediction. */
    default long expectedWaitNanos(long now) {
        return 0;
    }

    /** The recent mean hold; 0 without estimates or before the first operation. */
    default long recentHoldNanos() {
        return 0;
    }

    /** This workload's place under the barrier's priorities, or null when the barrier has none. */
    default Arbiter.@Nullable Member member() {
        return null;
    }

    /** Whether {@link #tick} has anything to do: then the barrier's clock runs it. */
    default boolean ticks() {
        return false;
    }

    /** Every {@link BarrierClock#TICK_MILLIS} ms, on the barrier's clock: measures, and may decide a new level. */
    default void tick(long now) {}

    /** On the barrier's clock, after every tick and the share-out: sets the limit that follows from them. */
    default void apply() {}

    /** Called once the barrier's clock exists: these controls keep it alive, as its task holds it weakly. */
    default void keep(Object clock) {}
}
