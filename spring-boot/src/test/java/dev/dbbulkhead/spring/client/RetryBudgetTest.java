package dev.dbbulkhead.spring.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The retry budget's arithmetic on a controlled clock, and its bound under real threads. */
class RetryBudgetTest {
    private final AtomicLong now = new AtomicLong(1_000_000_000L);

    private int retriesLeft(RetryBudget budget) {
        int granted = 0;
        while (budget.tryRetry()) {
            granted++;
        }
        return granted;
    }

    @Test
    void eachRequestDepositsTheRatioOfARetry() {
        var budget = RetryBudget.of(0.1, 0, now::get);
        assertThat(budget.tryRetry()).as("nothing deposited yet").isFalse();
        for (int i = 0; i < 100; i++) {
            budget.onRequest();
        }
        assertThat(retriesLeft(budget)).isEqualTo(10);
    }

    @Test
    void theMinimumIsRefilledOverTimeUpToOneSecondsWorth() {
        var budget = RetryBudget.of(0, 2, now::get);
        assertThat(retriesLeft(budget)).as("a second's worth to start with").isEqualTo(2);
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
        assertThat(retriesLeft(budget)).isEqualTo(1);
        now.addAndGet(TimeUnit.SECONDS.toNanos(30));
        assertThat(retriesLeft(budget)).as("capped at a second's worth").isEqualTo(2);
    }

    @Test
    void depositsAreCappedAtWhatTheLastHundredRequestsEarned() {
        var budget = RetryBudget.of(0.2, 0, now::get);
        for (int i = 0; i < 10_000; i++) {
            budget.onRequest();
        }
        assertThat(retriesLeft(budget)).isEqualTo(20);
    }

    @Test
    void badSettingsAreRefusedNamingTheField() {
        assertThatThrownBy(() -> RetryBudget.of(-0.1, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("ratio must be between 0 and 10, was -0.1");
        assertThatThrownBy(() -> RetryBudget.of(Double.NaN, 1)).hasMessageContaining("ratio");
        assertThatThrownBy(() -> RetryBudget.of(0.1, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("minRetriesPerSecond must be >= 0, was -1");
        assertThatThrownBy(() -> new RetryBudgetInterceptor(RetryBudget.of(0.1, 1), -1))
                .hasMessage("maxRetries must be >= 0, was -1");
    }

    @Test
    void underContentionTheRetriesGrantedNeverExceedTheDeposits() throws Exception {
        for (int round = 0; round < 50; round++) {
            var budget = RetryBudget.of(0.25, 0, now::get);
            var start = new CountDownLatch(1);
            try (var threads = Executors.newFixedThreadPool(4)) {
                var granted = new ArrayList<Future<Integer>>();
                for (int t = 0; t < 4; t++) {
                    granted.add(threads.submit(() -> {
                        start.await();
                        int mine = 0;
                        for (int i = 0; i < 1_000; i++) {
                            budget.onRequest();
                            if (budget.tryRetry()) {
                                mine++;
                            }
                        }
                        return mine;
                    }));
                }
                start.countDown();
                int total = 0;
                for (var g : granted) {
                    total += g.get(10, TimeUnit.SECONDS);
                }
                assertThat(total)
                        .as("retries granted for 4,000 requests at 0.25")
                        .isBetween(999, 1_000);
            }
        }
    }
}
