package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A HikariCP pool over the real PostgreSQL for one test class ({@code @RegisterExtension static}), and the barriers
 * its tests build through it. After every test it checks the invariant that every failure path must keep: all
 * permits of every barrier back, nobody queued, and no connection of the pool still active.
 */
final class BarrierExtension implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {
    private final int size;
    private final List<DbBulkhead> barriers = new CopyOnWriteArrayList<>();
    private HikariDataSource pool;

    BarrierExtension(int size) {
        this.size = size;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        pool = Db.pool(size);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        try {
            // Callers a test abandoned (cancelled futures) finish on their own threads: give them a moment.
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                for (DbBulkhead barrier : barriers) {
                    for (Workload w : barrier.workloads()) {
                        assertThat(w.available())
                                .as("free execution permits of %s", w)
                                .isEqualTo(w.limit());
                        assertThat(w.availableSlots())
                                .as("free admission slots of %s", w)
                                .isEqualTo(w.limit() + w.extraSlots());
                        assertThat(w.waiting())
                                .as("callers still queued in %s", w)
                                .isZero();
                    }
                }
                assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                        .as("active pool connections")
                        .isZero();
            });
        } finally {
            barriers.clear();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        pool.close();
    }

    HikariDataSource get() {
        return pool;
    }

    /** The article's barrier over {@code source}, checked after the test. */
    DbBulkhead bulkhead(DataSource source, int concurrent, int extraSlots) {
        return track(new DbBulkhead(source, concurrent, extraSlots));
    }

    /** The article's barrier over this class's pool, checked after the test. */
    DbBulkhead bulkhead(int concurrent, int extraSlots) {
        return bulkhead(pool, concurrent, extraSlots);
    }

    /** Checks {@code barrier} after the test. */
    DbBulkhead track(DbBulkhead barrier) {
        barriers.add(barrier);
        return barrier;
    }
}
