package dev.dbbulkhead.internal;

import dev.dbbulkhead.Sharing;

/**
 * The elastic allowance rule, pure: how many permits an elastic workload may have, from how the regular workloads did
 * over each window ({@link Window}) and how the elastic workload used what it had. No clock, no atomics, no permits:
 * {@link Arbiter} measures the windows and applies the level; this decides it. At each window's end:
 * <ul>
 *   <li>no regular operation: all the room, at once; the level that missed lately and its back-off stand for when
 *       regular work returns;</li>
 *   <li>an objective still being learned: the floor, one;</li>
 *   <li>an objective missed: half of what the workload used (the floor when more than one in ten missed), and the
 *       lowest level that missed is tried again only after 2, 4, … {@value #MAX_BACKOFF} windows met one below it;</li>
 *   <li>every objective met with room to spare, the whole allowance used: one more (a try); met without that spare:
 *       the same.</li>
 * </ul>
 * Never more than the room. Not thread-safe: one window at a time, on the barrier's clock.
 */
final class Allowance {
    /** The most windows a level that missed waits before it is tried again. */
    static final int MAX_BACKOFF = 64;

    /**
     * How the regular workloads did over one window: {@code active}, some ended an operation; {@code learning}, an
     * objective is still unknown; {@code missed}, more than 1 % of a workload's operations over its objective;
     * {@code severe}, more than 10 %; {@code slack}, every p99 within its objective with room to spare.
     */
    record Window(boolean active, boolean learning, boolean missed, boolean severe, boolean slack) {}

    private int level = 1;
    private Sharing.State state = Sharing.State.LEARNING;
    /** The lowest level that missed lately, and how many windows met below it it waits for. */
    private int failed = Integer.MAX_VALUE;

    private int backoff = 1;
    /** Windows met one below the level that missed, since. */
    private int waited;

    /** The permits the elastic workload may have: at least one. */
    int level() {
        return level;
    }

    /** What the last window decided, as the workload's {@code Sharing} tells it. */
    Sharing.State state() {
        return state;
    }

    /**
     * The level after {@code window}, in which the elastic workload had at most {@code peak} operations executing and
     * {@code binding}, used its whole limit at some tick; {@code room}: the most it may have (at least one). True when
     * the level grew: the next window tries it.
     */
    boolean next(Window window, int peak, boolean binding, int room) {
        boolean grew = false;
        if (!window.active()) {
            level = room;
            state = Sharing.State.IDLE;
        } else if (window.learning()) {
            level = 1;
            state = Sharing.State.LEARNING;
        } else if (window.missed()) {
            missed(Math.max(1, Math.min(level, peak)), window.severe());
        } else {
            grew = met(binding && window.slack(), room);
        }
        level = Math.min(level, room);
        return grew;
    }

    private void missed(int used, boolean severe) {
        if (used == failed) {
            backoff = Math.min(MAX_BACKOFF, 2 * backoff);
        } else if (used < failed) {
            failed = used;
            backoff = 2;
        } // else above the lowest level that missed lately: that level and its back-off stand
        waited = 0;
        level = severe ? 1 : Math.max(1, used / 2);
        state = Sharing.State.OBJECTIVE_MISSED;
    }

    private boolean met(boolean wantsMore, int room) {
        if (level >= failed) { // the level that missed met its objective for a window
            failed = Integer.MAX_VALUE;
            backoff = 1;
        }
        state = Sharing.State.OBJECTIVE_MET;
        if (!wantsMore) {
            return false;
        }
        int next = level + 1;
        if (next > room) {
            state = Sharing.State.NO_ROOM;
        } else if (next >= failed && waited < backoff) {
            waited++;
            state = Sharing.State.BACKING_OFF;
        } else {
            level = next;
            return true;
        }
        return false;
    }
}
