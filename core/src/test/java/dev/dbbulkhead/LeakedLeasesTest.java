package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Leases that are never closed. When the thread that acquired one terminates, its permits are reclaimed (after a
 * garbage collection finds the thread gone), counted, reported to listeners and the flight recorder, and kept out of
 * the hold-time estimates; with a leak detection threshold, a lease open too long is logged once, with the stack of
 * the call that acquired it. (Before: two such leases kept their permits for ever, every later call timed out, and
 * an adaptive workload with one of them was stopped.)
 */
class LeakedLeasesTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(4);

    /** Records the reclaims and suspected leaks a barrier reports. */
    private static final class Reports implements BulkheadListener {
        final List<Long> reclaimed = new CopyOnWriteArrayList<>();
        final CountDownLatch suspected = new CountDownLatch(1);

        @Override
        public void onLeaseReclaimed(Workload workload, long heldNanos) {
            reclaimed.add(heldNanos);
        }

        @Override
        public void onLeakSuspected(Workload workload, long heldNanos) {
            suspected.countDown();
        }
    }

    /** Acquires a lease on a new thread, which then ends without closing it. */
    private static void leakOn(Gate.Threads threads, Workload w) throws InterruptedException {
        Thread t = threads.factory.newThread(() -> {
            try {
                w.acquire(Duration.ofSeconds(5)); // never closed
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        t.start();
        t.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(t.isAlive()).isFalse();
    }

    /** Until {@code w} has {@code permits} free again, collecting garbage so that the reclaimer runs. */
    private static void awaitReclaimed(Workload w, int permits) {
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> {
                    System.gc();
                    return w.available() == permits;
                });
    }

    @ParameterizedTest
    @EnumSource(Gate.Threads.class)
    void theLeasesOfThreadsThatEndedAreReclaimedCountedAndReported(Gate.Threads threads, @TempDir Path dir)
            throws Exception {
        var reports = new Reports();
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .workload(WorkloadConfig.builder("w")
                        .concurrent(2)
                        .extraSlots(1)
                        .predictiveRejection(true)
                        .build())
                .listener(reports)
                .build());
        var w = gate.defaultWorkload();
        gate.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1"));
        Duration learnt = w.recentHoldTime();
        Path file = dir.resolve("reclaims.jfr");
        List<String> warnings;
        try (var logs = new Logs(Level.WARNING);
                var recording = new Recording()) {
            recording.enable("dev.dbbulkhead.LeaseReclaimed");
            recording.start();
            leakOn(threads, w);
            leakOn(threads, w);
            // Both permits are held by leases nobody can close, except those the reclaimer already took back: a
            // collection can come at any time after the threads ended (it did, under a CPU hog on each core).
            // The reclaimer frees the permits before it counts them, hence the wait for the count to catch up.
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(w.available())
                            .as("permits free, against leases reclaimed")
                            .isLessThanOrEqualTo((int) w.reclaimed()));
            awaitReclaimed(w, 2);
            await().atMost(Duration.ofSeconds(10)).until(() -> reports.reclaimed.size() == 2);
            recording.stop();
            recording.dump(file);
            warnings = logs.messages();
        }
        assertThat(w.reclaimed()).isEqualTo(2);
        assertThat(w.availableSlots()).isEqualTo(3);
        assertThat(reports.reclaimed).allSatisfy(held -> assertThat(held).isPositive());
        assertThat(w.recentHoldTime()).as("a reclaimed hold is not learnt").isEqualTo(learnt);
        assertThat(warnings)
                .hasSize(2)
                .allSatisfy(m -> assertThat(m)
                        .contains("workload 'w'", "never released", "its thread has terminated", "reclaimed"));
        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.dbbulkhead.LeaseReclaimed"))
                .toList();
        assertThat(events)
                .hasSize(2)
                .allSatisfy(e -> assertThat(e.getString("workload")).isEqualTo("w"));
        assertThat(gate.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 2"))
                        .intValue())
                .as("the barrier works with both permits")
                .isEqualTo(2);
    }

    @Test
    void aLeakedLeaseDoesNotStopAnAdaptiveWorkloadOnceItsThreadEnded() throws Exception {
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .workload(WorkloadConfig.builder("w")
                        .concurrent(4)
                        .extraSlots(2)
                        .adaptiveLimitMin(1)
                        .build())
                .build());
        var w = gate.defaultWorkload();
        assertThat(w.limit()).as("it starts at B, which nothing can raise").isEqualTo(4);
        for (int i = 0; i < 4; i++) {
            leakOn(Gate.Threads.VIRTUAL, w);
        }
        try {
            w.transaction(Duration.ofMillis(20), c -> 1);
            // A collection after the threads ended may have let the reclaimer free a permit already (see above).
            assertThat(w.reclaimed())
                    .as("served only by a permit already reclaimed")
                    .isPositive();
        } catch (QueueTimeoutException expected) {
            // the leaked leases hold every permit
        }
        awaitReclaimed(w, w.limit());
        assertThat(w.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 3"))
                        .intValue())
                .isEqualTo(3);
        assertThat(w.reclaimed()).isEqualTo(4);
    }

    @Test
    void aLeaseOpenPastTheThresholdIsLoggedOnceWithTheStackThatAcquiredIt() throws Exception {
        var reports = new Reports();
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .workload(WorkloadConfig.builder("w")
                        .concurrent(2)
                        .predictiveRejection(true)
                        .build())
                .leakDetectionThreshold(Duration.ofMillis(100))
                .listener(reports)
                .build());
        var w = gate.defaultWorkload();
        gate.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1"));
        Duration learnt = w.recentHoldTime();
        List<java.util.logging.LogRecord> records;
        try (var logs = new Logs(Level.INFO)) {
            Lease lease = w.acquire(Duration.ofSeconds(5));
            assertThat(reports.suspected.await(30, TimeUnit.SECONDS))
                    .as("reported as a suspected leak")
                    .isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> !logs.records().isEmpty());
            lease.close();
            records = logs.records();
        }
        assertThat(records).hasSize(2);
        var warning = records.get(0);
        assertThat(warning.getLevel()).isEqualTo(Level.WARNING);
        assertThat(warning.getMessage()).contains("workload 'w'", "open for more than 100.000 ms");
        assertThat(warning.getThrown().getStackTrace())
                .as("the stack of the acquiring call")
                .anySatisfy(frame -> assertThat(frame.getMethodName())
                        .isEqualTo("aLeaseOpenPastTheThresholdIsLoggedOnceWithTheStackThatAcquiredIt"));
        assertThat(records.get(1).getLevel()).isEqualTo(Level.INFO);
        assertThat(records.get(1).getMessage()).contains("reported as a possible leak was closed after");
        assertThat(w.recentHoldTime())
                .as("a suspected lease's hold is not learnt")
                .isEqualTo(learnt);
        assertThat(w.available()).isEqualTo(2);
    }

    @Test
    void aLeaseClosedWithinTheThresholdIsNeverReported() throws Exception {
        var reports = new Reports();
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .workload("w", 2, 0)
                .leakDetectionThreshold(Duration.ofMinutes(10))
                .listener(reports)
                .build());
        try (var logs = new Logs(Level.INFO)) {
            for (int i = 0; i < 100; i++) {
                try (Lease lease = gate.acquire(Duration.ofSeconds(5))) {
                    assertThat(lease.workload().available()).isEqualTo(1);
                }
            }
            assertThat(logs.messages()).isEmpty();
        }
        assertThat(reports.suspected.getCount()).isEqualTo(1);
    }

    @Test
    void aPooledThreadThatLeakedALeaseIsServedAgainOnceTheLeaseIsOlderThanTheThreshold() throws Exception {
        var clock = new AtomicLong(System.nanoTime());
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .workload("w", 2, 0)
                .leakDetectionThreshold(Duration.ofMinutes(1))
                .nanoClock(clock::get)
                .build());
        var w = gate.defaultWorkload();
        ExecutorService worker = Executors.newSingleThreadExecutor(); // one thread, which keeps its thread locals
        try (var logs = new Logs(Level.WARNING)) {
            worker.submit(() -> w.acquire(Duration.ofSeconds(5))).get(); // a task that never closes its lease
            Future<Integer> refused = worker.submit(() -> gate.transaction(Duration.ofSeconds(5), c -> 1));
            assertThatThrownBy(refused::get)
                    .cause()
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("re-entered", "pooled thread", "leakDetectionThreshold");
            assertThat(w.available())
                    .as("younger than the threshold: still taken for re-entry")
                    .isEqualTo(1);

            clock.addAndGet(Duration.ofMinutes(2).toNanos());
            Future<Integer> served =
                    worker.submit(() -> gate.transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 4")));
            assertThat(served.get(30, TimeUnit.SECONDS)).isEqualTo(4);
            assertThat(w.reclaimed()).isEqualTo(1);
            assertThat(w.available()).isEqualTo(2);
            assertThat(logs.messages()).anySatisfy(m -> assertThat(m).contains("workload 'w'", "reclaimed"));
        } finally {
            worker.shutdownNow();
        }
    }
}
