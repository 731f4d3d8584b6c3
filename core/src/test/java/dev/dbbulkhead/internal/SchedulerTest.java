package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DbBulkhead;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The barrier's clock survives its tasks' failures: a periodic task that throws (the priorities' arbiter once did, and
 * the executor dropped it for good, leaving every cap where it was) runs again at its next period, and each kind of
 * failure is logged once, not once per tick.
 */
@Tag("no-db")
class SchedulerTest {
    @Test
    void aPeriodicTaskThatThrowsGoesOnAndEachKindOfFailureIsLoggedOnce() throws Exception {
        List<LogRecord> records = new CopyOnWriteArrayList<>();
        Logger logger = Logger.getLogger(DbBulkhead.class.getName());
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getThrown() != null
                        && record.getThrown().getMessage().startsWith("tick ")) {
                    records.add(record);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        logger.addHandler(handler);
        var runs = new AtomicInteger();
        var twelveRuns = new CountDownLatch(12);
        Runnable failingEveryOtherTime = () -> {
            int n = runs.incrementAndGet();
            twelveRuns.countDown();
            if (n % 2 == 1) {
                throw n % 4 == 1 ? new IllegalStateException("tick " + n) : new ArithmeticException("tick " + n);
            }
        };
        var task = Scheduler.every(TimeUnit.MILLISECONDS.toNanos(1), failingEveryOtherTime);
        try {
            assertThat(twelveRuns.await(60, TimeUnit.SECONDS))
                    .as("runs after six failures")
                    .isTrue();
        } finally {
            task.cancel(false);
            logger.removeHandler(handler);
        }
        assertThat(records).as("one line per kind of failure").hasSize(2);
        assertThat(records)
                .extracting(r -> r.getThrown().getClass().getSimpleName())
                .containsExactlyInAnyOrder("IllegalStateException", "ArithmeticException");
    }
}
