package dev.dbbulkhead.nodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.testkit.FaultyDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource.Point;
import dev.dbbulkhead.testkit.NoopDataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The permit and failure-path logic in milliseconds, with no database: a no-op connection behind the fault-injecting
 * data source. Real virtual threads, a start latch and many iterations; what they hold is counted, never assumed.
 */
@Tag("no-db")
class LeaseStressTest {
    private static final int B = 3;
    private static final int Q = 5;

    @Test
    void leasesTransactionsAndForeignClosesNeverExceedBAndGiveEverythingBack() throws Exception {
        var faulty = new FaultyDataSource(new NoopDataSource(), 7)
                .fail(Point.GET_CONNECTION, 0.1)
                .fail(Point.COMMIT, 0.1)
                .fail(Point.CLOSE, 0.1);
        var gate = DbBulkhead.builder(faulty).workload("w", B, Q).build();
        var inside = new AtomicInteger();
        var maxInside = new AtomicInteger();
        var refusedForeignCloses = new LongAdder();
        var outcomes = new LongAdder();
        var start = new CountDownLatch(1);
        int callers = 200;
        int rounds = 200;
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<?>>();
            for (int t = 0; t < callers; t++) {
                int id = t;
                futures.add(executor.submit(() -> {
                    start.await();
                    for (int i = 0; i < rounds; i++) {
                        try {
                            if ((id + i) % 2 == 0) {
                                try (Lease lease = gate.acquire(Duration.ofMillis(2))) {
                                    track(inside, maxInside);
                                    Thread thief = Thread.ofVirtual().start(() -> {
                                        try {
                                            lease.close();
                                        } catch (IllegalStateException refused) {
                                            refusedForeignCloses.increment();
                                        }
                                    });
                                    thief.join();
                                    inside.decrementAndGet();
                                }
                            } else {
                                gate.transaction(Duration.ofMillis(2), c -> {
                                    track(inside, maxInside);
                                    Thread.yield();
                                    inside.decrementAndGet();
                                    return null;
                                });
                            }
                        } catch (BulkheadRejectedException | SQLException expected) {
                            // a rejection or an injected fault: counted below as an outcome all the same
                        }
                        outcomes.increment();
                    }
                    return null;
                }));
            }
            start.countDown();
            for (var f : futures) {
                f.get();
            }
        }
        assertThat(outcomes.sum()).isEqualTo((long) callers * rounds);
        assertThat(maxInside.get()).as("never more than B at once").isBetween(1, B);
        assertThat(refusedForeignCloses.sum()).as("every foreign close refused").isPositive();
        assertThat(gate.available()).isEqualTo(B);
        assertThat(gate.availableSlots()).isEqualTo(B + Q);
        assertThat(gate.defaultWorkload().waiting()).isZero();
        assertThat(faulty.openConnections()).isZero();
    }

    private static void track(AtomicInteger inside, AtomicInteger max) {
        int now = inside.incrementAndGet();
        max.accumulateAndGet(now, Math::max);
    }
}
