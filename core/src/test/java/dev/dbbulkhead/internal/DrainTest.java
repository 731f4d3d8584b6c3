package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The drain's estimates on an injected clock: the mean hold, and whether a place in line can start in time. */
class DrainTest {
    private static final long MS = 1_000_000;

    @Test
    void theMeanHoldIsTheFirstWindowsMean() {
        var drain = new Drain();
        long now = windowOfHolds(drain, MS);
        assertThat(drain.meanNanos()).isEqualTo(10 * MS);
        assertThat(drain.expectedWaitNanos(3, 0, 2, now))
                .as("4 permits back at 2 per 10 ms")
                .isEqualTo(20 * MS);
    }

    @Test
    void aPlaceFarBehindIsUnlikelyToStartInTime() {
        var drain = new Drain();
        long now = windowOfHolds(drain, MS);
        // L = 2, 10 ms holds: 2 permits back expected within 10 ms, the caller behind 5 waiters needs 6 of them.
        assertThat(drain.unlikelyToStart(5, 2, 10 * MS, now))
                .as("behind 5, a chance of 1.7 percent")
                .isFalse();
        assertThat(drain.unlikelyToStart(6, 2, 10 * MS, now))
                .as("behind 6, of 0.45 percent")
                .isTrue();
    }

    @Test
    void nothingIsPredictedBeforeAnyPermitWasGranted() {
        assertThat(new Drain().unlikelyToStart(100, 1, 1, MS)).isFalse();
    }

    /** One window of 10 ms holds, released a millisecond apart from {@code from}: returns the last release's time. */
    private static long windowOfHolds(Drain drain, long from) {
        long now = from;
        for (int i = 0; i < Drain.WINDOW_HOLDS + 1; i++) {
            drain.record(10 * MS, now += MS);
        }
        return now;
    }
}
