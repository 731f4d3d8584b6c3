package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.Gate.Threads;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Many real callers at once on the real PostgreSQL: the bounds hold and every permit comes back. */
class LoadContractTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(6);

    private static HikariDataSource pool() {
        return POOL.get();
    }

    @ParameterizedTest(name = "{0} callers on {1} threads")
    @CsvSource({"3000, VIRTUAL", "300, PLATFORM"})
    void manyCallersNeverHaveMoreThanBInsideWorkAndEverySuccessCommitsExactlyOnce(int callers, Threads threads)
            throws Exception {
        int b = 4;
        var gate = POOL.bulkhead(pool(), b, 12);
        var inWork = new AtomicInteger();
        var maxInWork = new AtomicInteger();
        var succeeded = ConcurrentHashMap.<Long>newKeySet();
        var rejected = ConcurrentHashMap.<Long>newKeySet();
        var start = new CountDownLatch(1);
        var futures = new ArrayList<Future<?>>();
        try (var executor = Executors.newThreadPerTaskExecutor(threads.factory)) {
            for (int i = 0; i < callers; i++) {
                long id = Db.newId();
                futures.add(executor.submit(() -> {
                    start.await();
                    try {
                        gate.transaction(Duration.ofMillis(20), c -> {
                            maxInWork.accumulateAndGet(inWork.incrementAndGet(), Math::max);
                            try {
                                return Db.insert(c, id);
                            } finally {
                                inWork.decrementAndGet();
                            }
                        });
                        succeeded.add(id);
                    } catch (RejectedExecutionException e) {
                        rejected.add(id);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (var f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        }
        assertThat(maxInWork.get()).isBetween(1, b);
        assertThat(succeeded.size() + rejected.size()).isEqualTo(callers);
        assertThat(succeeded).isNotEmpty();
        assertThat(countRows(succeeded))
                .as("each succeeded write committed exactly once")
                .isEqualTo(succeeded.size());
        assertThat(countRows(rejected)).as("no rejected call wrote anything").isZero();
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    @Test
    void hundredsOfMixedFailuresFromVirtualThreadsLeaveEveryPermitAndConnectionBack() throws Exception {
        var gate = POOL.bulkhead(pool(), 3, 6);
        var random = new Random(7);
        var outcomes = new ConcurrentHashMap<String, LongAdder>();
        var futures = new ArrayList<Future<?>>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 600; i++) {
                int kind = random.nextInt(8);
                long id = Db.newId();
                futures.add(executor.submit(() -> {
                    try {
                        gate.transaction(Duration.ofMillis(kind == 7 ? 0 : 30), c -> mixedWork(c, kind, id));
                        count(outcomes, "ok");
                    } catch (RejectedExecutionException e) {
                        count(outcomes, "rejected");
                    } catch (SQLException | RuntimeException | Error e) {
                        count(outcomes, "failed");
                    }
                    return null;
                }));
                if (kind == 6) {
                    futures.getLast().cancel(true);
                }
            }
            for (var f : futures) {
                try {
                    f.get(60, TimeUnit.SECONDS);
                } catch (CancellationException cancelled) {
                    count(outcomes, "cancelled");
                }
            }
        }
        assertThat(outcomes).containsKeys("ok", "failed");
        assertThat(outcomes.values().stream().mapToLong(LongAdder::sum).sum()).isGreaterThanOrEqualTo(600);
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    private static Object mixedWork(java.sql.Connection c, int kind, long id) throws SQLException {
        switch (kind) {
            case 0 -> throw new SQLException("work failed");
            case 1 -> throw new IllegalStateException("bug");
            case 2 -> throw new AssertionError("error");
            case 3 -> {
                try (var s = c.createStatement()) {
                    s.execute("SET LOCAL statement_timeout = '20ms'");
                    s.execute("SELECT pg_sleep(0.2)");
                }
            }
            case 4 -> {
                Db.insert(c, id);
                Db.insert(c, id); // duplicate key
            }
            default -> Db.insert(c, id);
        }
        return null;
    }

    @Test
    void shortTimedWaitsRacingReleasesAndInterruptsEndWithEveryPermitBack() throws Exception {
        int b = 2;
        int q = 3;
        var gate = POOL.bulkhead(pool(), b, q);
        var w = gate.defaultWorkload();
        long[] waits = {0, 1_000, 10_000, 100_000, 1_000_000};
        var inWork = new AtomicInteger();
        var maxInWork = new AtomicInteger();
        var done = new LongAdder();
        var interrupted = new LongAdder();
        var rejected = new LongAdder();
        int workers = 8;
        int perWorker = 2_500;
        var threads = new Thread[workers];
        var finished = new CountDownLatch(workers);
        for (int t = 0; t < workers; t++) {
            var random = new Random(t);
            threads[t] = Thread.ofVirtual().start(() -> {
                for (int i = 0; i < perWorker; i++) {
                    try {
                        gate.transaction(Duration.ofNanos(waits[random.nextInt(waits.length)]), c -> {
                            maxInWork.accumulateAndGet(inWork.incrementAndGet(), Math::max);
                            // Give the carrier away while holding the permits, so that callers overlap.
                            Thread.yield();
                            inWork.decrementAndGet();
                            return null;
                        });
                        done.increment();
                    } catch (InterruptedException e) {
                        interrupted.increment();
                    } catch (RejectedExecutionException e) {
                        rejected.increment();
                    } catch (SQLException e) {
                        done.increment(); // an interrupt that broke the connection: a failure, not a leak
                    }
                }
                Thread.interrupted();
                finished.countDown();
            });
        }
        var interrupter = Thread.ofPlatform().start(() -> {
            var random = new Random(99);
            while (finished.getCount() > 0) {
                threads[random.nextInt(workers)].interrupt();
                Thread.onSpinWait();
            }
        });
        assertThat(finished.await(120, TimeUnit.SECONDS)).isTrue();
        interrupter.join();
        assertThat(done.sum() + interrupted.sum() + rejected.sum()).isEqualTo((long) workers * perWorker);
        assertThat(interrupted.sum()).as("the interrupter hit waiting callers").isPositive();
        assertThat(rejected.sum()).isPositive();
        assertThat(maxInWork.get()).isLessThanOrEqualTo(b);
        Db.assertAllReleased(w, pool());
    }

    private static void count(ConcurrentHashMap<String, LongAdder> outcomes, String key) {
        outcomes.computeIfAbsent(key, k -> new LongAdder()).increment();
    }

    private static int countRows(java.util.Set<Long> ids) throws SQLException {
        try (var c = Db.server().connect();
                var s = c.prepareStatement("SELECT count(*) FROM bulkhead_items WHERE id = ANY(?)")) {
            s.setArray(1, c.createArrayOf("bigint", ids.toArray()));
            try (var r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }
}
