package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dbbulkhead.DbBulkhead.SqlWork;
import dev.dbbulkhead.testkit.LockSlots;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The adaptive limit on the real PostgreSQL, with virtual threads: each operation holds one of K advisory locks for
 * 5 ms, so the database serves exactly K at once and more only queue on its locks. L rises to K, falls when K drops,
 * rises again when K comes back; an overload signal (statements cancelled by a timeout, 57014) cuts it at once; every
 * permit and connection is back afterwards (checked by the extension).
 */
class AdaptiveLimitTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(8);

    private final List<int[]> changes = new CopyOnWriteArrayList<>();
    private final BulkheadListener listener = new BulkheadListener() {
        @Override
        public void onLimitChanged(Workload workload, int previousLimit, int newLimit) {
            changes.add(new int[] {previousLimit, newLimit});
        }
    };

    @BeforeAll
    static void lockSlots() throws SQLException {
        try (Connection c = Db.server().connect()) {
            LockSlots.install(c);
        }
    }

    private Workload adaptive(int concurrent) {
        return POOL.track(DbBulkhead.builder(POOL.get()).workload("w", concurrent, 64).adaptiveLimit("w", 1)
                .listener(listener).build()).workload("w");
    }

    /** {@code n} virtual threads running {@code call} in a loop until closed; closing stops and joins them. */
    private static final class Callers implements AutoCloseable {
        interface Call {
            void run() throws Exception;
        }

        private final AtomicBoolean stop = new AtomicBoolean();
        private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
        private final List<Future<?>> futures = new ArrayList<>();

        Callers(int n, Call call) {
            for (int i = 0; i < n; i++) {
                futures.add(executor.submit(() -> {
                    while (!stop.get()) {
                        try {
                            call.run();
                        } catch (BulkheadRejectedException busy) {
                            // demand exceeds the limit on purpose: refused callers simply try again
                        }
                    }
                    return null;
                }));
            }
        }

        @Override
        public void close() throws Exception {
            stop.set(true);
            try {
                for (var f : futures) {
                    f.get(10, TimeUnit.SECONDS); // a caller's failed assertion fails the test here
                }
            } finally {
                executor.close();
            }
        }
    }

    @Test
    void theLimitFollowsTheDatabasesCapacityDownAndUpAgain() throws Exception {
        Workload w = adaptive(8);
        assertThat(w.adaptive()).isTrue();
        assertThat(w.limit()).as("starts at its minimum").isEqualTo(1);
        var k = new AtomicInteger(6);
        var served = new LongAdder();
        try (var callers = new Callers(24, () -> {
            w.transaction(Duration.ofMillis(500), c -> Db.count(c, LockSlots.sql(k.get(), 5)));
            served.increment();
        })) {
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(w.limit()).as("risen to K = 6").isGreaterThanOrEqualTo(5));
            k.set(2);
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                    assertThat(w.limit()).as("fallen to K = 2").isLessThanOrEqualTo(3));
            assertThat(w.baselineHoldTime()).isBetween(Duration.ofMillis(4), Duration.ofMillis(30));
            k.set(6);
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
                    assertThat(w.limit()).as("risen again to K = 6").isGreaterThanOrEqualTo(5));
        }
        assertThat(served.sum()).isPositive();
        assertThat(changes).as("every change is reported, from the limit in force")
                .allMatch(c -> c[0] != c[1] && c[1] >= 1 && c[1] <= 8);
        assertThat(changes.getLast()[1]).isEqualTo(w.limit());
    }

    /** Through {@code transaction()}, or a lease around the caller's own transaction that reports its failure. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void statementsCancelledByATimeoutCutTheLimitByAQuarterEachWindow(boolean ownTransaction) throws Exception {
        Workload w = adaptive(8);
        var cancelled = new AtomicBoolean();
        var timeouts = new LongAdder();
        SqlWork<Integer> work = c -> {
            if (cancelled.get()) {
                Db.update(c, "SET LOCAL statement_timeout = 1");
            }
            return Db.count(c, LockSlots.sql(8, 5));
        };
        try (var callers = new Callers(16, () -> {
            try {
                if (ownTransaction) {
                    inOwnTransaction(w, work);
                } else {
                    w.transaction(Duration.ofMillis(500), work);
                }
            } catch (SQLException e) {
                assertThat(e.getSQLState()).isEqualTo("57014");
                timeouts.increment();
            }
        })) {
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(w.limit()).isGreaterThanOrEqualTo(6));
            changes.clear();
            cancelled.set(true);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(changes).as("cut by a quarter").anyMatch(c -> c[0] >= 6 && c[1] == c[0] * 3 / 4));
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(w.limit()).as("while the signals go on: down to the minimum").isEqualTo(1));
        }
        assertThat(timeouts.sum()).isPositive();
    }

    /** A lease around the caller's own JDBC transaction, which tells the lease what it failed with. */
    private static void inOwnTransaction(Workload w, SqlWork<Integer> work) throws Exception {
        try (Lease lease = w.acquire(Duration.ofMillis(500)); Connection c = POOL.get().getConnection()) {
            c.setAutoCommit(false);
            try {
                work.run(c);
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                lease.transactionFailed(e);
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }
}
