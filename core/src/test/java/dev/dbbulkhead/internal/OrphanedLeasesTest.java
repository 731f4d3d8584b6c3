package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.testkit.NoopDataSource;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A lease leaked by a thread that then drops its thread locals but lives on, as the common {@code ForkJoinPool}'s
 * workers do between tasks (this test erases them the way the pool does). Its frame becomes unreachable while the
 * thread is alive: the permit must stay held (the thread might still close the lease), then come back once the thread
 * has ended.
 */
class OrphanedLeasesTest {
    /** What {@code ForkJoinPool} does to a common-pool worker's thread locals after each task. */
    private static void eraseThreadLocals() throws ReflectiveOperationException {
        Field locals = Thread.class.getDeclaredField("threadLocals");
        locals.setAccessible(true);
        locals.set(Thread.currentThread(), null);
    }

    @Test
    void aLeaseWhoseLiveThreadDroppedItsThreadLocalsIsReclaimedOnceThatThreadEnds() throws Exception {
        var gate = DbBulkhead.builder(new NoopDataSource()).workload("w", 2, 0).build();
        var w = gate.defaultWorkload();
        var leaked = new AtomicReference<Lease>();
        var erased = new CountDownLatch(1);
        var end = new CountDownLatch(1);
        Thread worker = Thread.ofPlatform().name("pooled-worker").start(() -> {
            try {
                leaked.set(w.acquire(Duration.ofSeconds(5))); // never closed
                eraseThreadLocals();
                erased.countDown();
                end.await();
            } catch (InterruptedException | ReflectiveOperationException e) {
                throw new AssertionError(e);
            }
        });
        assertThat(erased.await(30, TimeUnit.SECONDS)).isTrue();
        var lease = (PermitLease) leaked.get();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    System.gc();
                    return Frames.orphaned(lease);
                });
        assertThat(w.available())
                .as("its thread is alive: the permit stays held")
                .isEqualTo(1);
        assertThat(w.reclaimed()).isZero();

        end.countDown();
        worker.join(TimeUnit.SECONDS.toMillis(30));
        await().atMost(Duration.ofSeconds(30)).until(() -> w.available() == 2);
        assertThat(w.reclaimed()).isEqualTo(1);
        assertThat(Frames.orphaned(lease)).isFalse();
        try (Lease again = w.acquire(Duration.ofSeconds(5))) {
            assertThat(again.workload().available()).isEqualTo(1);
        }
    }
}
