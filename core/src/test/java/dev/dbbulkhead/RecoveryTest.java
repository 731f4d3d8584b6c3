package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * The database goes away while operations run, and comes back: failures are reported, every permit returns, and
 * new operations succeed without restarting the application. On the embedded server the server itself is
 * restarted (same port and data directory); on a server given by DB_URL every backend of the pool is terminated
 * instead, repeatedly, for the same span.
 */
class RecoveryTest {
    @Test
    void theBarrierRecoversWhenTheDatabaseRestarts() throws Exception {
        TestDatabase db = Db.server();
        try (HikariDataSource pool = db.pool(4, Duration.ofMillis(500), "recovery")) {
            var gate = new DbBulkhead(pool, 3, 3);
            var ok = new LongAdder();
            var failed = new LongAdder();
            var rejected = new LongAdder();
            var stop = new AtomicBoolean();
            var lastFailure = new java.util.concurrent.atomic.AtomicReference<String>("none");
            var loops = new ArrayList<Future<?>>();
            try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < 6; i++) {
                    loops.add(executor.submit(() -> {
                        while (!stop.get()) {
                            try {
                                gate.transaction(Duration.ofMillis(100), c -> Db.insert(c, Db.newId()));
                                ok.increment();
                            } catch (RejectedExecutionException e) {
                                rejected.increment();
                            } catch (SQLException e) {
                                failed.increment();
                                lastFailure.set(e.getSQLState() + " " + e.getMessage());
                            }
                        }
                        return null;
                    }));
                }
                try {
                    await().atMost(Duration.ofSeconds(10)).until(() -> ok.sum() > 20);
                    if (db.isEmbedded()) {
                        db.restartEmbedded(Duration.ofMillis(700));
                    } else {
                        terminateBackendsFor(db, Duration.ofMillis(700));
                    }
                    // Back: operations succeed again, through the same barrier and the same pool.
                    long okAfterOutage = ok.sum();
                    await().atMost(Duration.ofSeconds(30))
                            .alias("operations succeed again")
                            .untilAsserted(() -> assertThat(ok.sum())
                                    .as("last failure: %s", lastFailure.get())
                                    .isGreaterThan(okAfterOutage + 20));
                } finally {
                    stop.set(true);
                }
                for (var f : loops) {
                    f.get(30, TimeUnit.SECONDS);
                }
                assertThat(failed.sum())
                        .as("the outage was reported to callers")
                        .isPositive();
            }
            Db.assertAllReleased(gate.defaultWorkload(), pool);
        }
    }

    private static void terminateBackendsFor(TestDatabase db, Duration span) throws SQLException {
        long end = System.nanoTime() + span.toNanos();
        try (Connection admin = db.connect();
                var s = admin.createStatement()) {
            while (System.nanoTime() < end) {
                s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
                        + "'recovery'");
            }
        }
    }
}
