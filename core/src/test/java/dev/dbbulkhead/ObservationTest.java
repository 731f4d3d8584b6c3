package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The listener SPI and the flight-recorder events, on real transactions. */
class ObservationTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(4);

    /** Records what a listener is told, in order. */
    static final class Recorder implements BulkheadListener {
        final List<String> calls = new CopyOnWriteArrayList<>();
        final List<long[]> finished = new CopyOnWriteArrayList<>();

        @Override
        public void onAdmitted(Workload w) {
            calls.add("admitted");
        }

        @Override
        public void onRejected(Workload w, RejectionReason reason, long waited) {
            calls.add("rejected " + reason);
        }

        @Override
        public void onPermitAcquired(Workload w, long wait) {
            calls.add("permit");
        }

        @Override
        public void onConnectionAcquired(Workload w, long poolWait) {
            calls.add("connection");
        }

        @Override
        public void onFinished(Workload w, Outcome outcome, long permitWait, long poolWait, long hold, long work) {
            calls.add("finished " + outcome);
            finished.add(new long[] {permitWait, poolWait, hold, work});
        }
    }

    private static void sleep(Connection c, double seconds) throws SQLException {
        try (var s = c.createStatement()) {
            s.execute("SELECT pg_sleep(" + seconds + ")");
        }
    }

    @Test
    void theListenerSeesEachStepOfAnOperationInOrder() throws Exception {
        var recorder = new Recorder();
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .listener(recorder)
                .workload("w", 1, 0)
                .build());
        gate.transaction(Duration.ZERO, c -> {
            sleep(c, 0.02);
            return null;
        });
        assertThat(recorder.calls).containsExactly("admitted", "permit", "connection", "finished COMMITTED");
        long[] f = recorder.finished.getFirst();
        assertThat(f[3]).as("work").isGreaterThanOrEqualTo(20_000_000L);
        assertThat(f[2]).as("hold >= work").isGreaterThanOrEqualTo(f[3]);
    }

    @Test
    void aCallerInterruptedBeforeItCallsIsCountedAsAnInterruptedRejection() throws Exception {
        var recorder = new Recorder();
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .listener(recorder)
                .workload("w", 1, 0)
                .build());
        Thread.currentThread().interrupt();
        try {
            gate.transaction(Duration.ofSeconds(1), c -> 1);
            throw new AssertionError("an interrupted caller must get InterruptedException");
        } catch (InterruptedException expected) {
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        }
        assertThat(recorder.calls).containsExactly("rejected INTERRUPTED");
        Db.assertAllReleased(gate.defaultWorkload(), POOL.get());
    }

    @Test
    void aListenerThatThrowsBreaksNothingAndLeaksNothing() throws Exception {
        var angry = new BulkheadListener() {
            @Override
            public void onAdmitted(Workload w) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onFinished(Workload w, Outcome o, long a, long b, long c, long d) {
                throw new IllegalStateException("listener bug");
            }

            @Override
            public void onRejected(Workload w, RejectionReason r, long waited) {
                throw new IllegalStateException("listener bug");
            }
        };
        var recorder = new Recorder();
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .listener(angry)
                .listener(recorder)
                .workload("w", 1, 0)
                .build());
        long id = Db.newId();
        int n = gate.transaction(Duration.ZERO, c -> Db.insert(c, id));
        assertThat(n).isEqualTo(1);
        assertThat(Db.rows(id)).isEqualTo(1);
        assertThat(recorder.calls).as("the next listener is still called").contains("finished COMMITTED");
        Db.assertAllReleased(gate.defaultWorkload(), POOL.get());
    }

    /**
     * With B ≤ P and nobody else on the pool, the queueing happens at the barrier: the pool hands out connections
     * at once. Callers outside the barrier that hold connections show up as pool wait instead.
     */
    @Test
    void theBarrierCarriesTheQueueingAndOutsideCallersShowUpAsPoolWait() throws Exception {
        var recorder = new Recorder();
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .listener(recorder)
                .workload("w", 2, 10)
                .build());
        // While they run, the most connections the pool had handed out: a state, not a time (a loaded machine slows
        // both waits; and a caller may wait for a connection the pool is still opening, so its wait says nothing).
        var inPool = new AtomicInteger();
        var done = new AtomicBoolean();
        Thread watcher = Thread.ofVirtual().start(() -> {
            while (!done.get()) {
                inPool.accumulateAndGet(POOL.get().getHikariPoolMXBean().getActiveConnections(), Math::max);
                LockSupport.parkNanos(200_000);
            }
        });
        try {
            runConcurrently(gate, 8, 0.03);
        } finally {
            done.set(true);
            watcher.join();
        }
        long permitWait = sum(recorder.finished, 0);
        assertThat(recorder.finished).hasSize(8);
        assertThat(permitWait)
                .as("8 callers over B=2 queue at the barrier: at least 3 rounds of 30 ms")
                .isGreaterThan(Duration.ofMillis(90).toNanos());
        assertThat(inPool.get())
                .as("connections handed out at once, at most: the barrier admits B = 2 to a pool of 4")
                .isBetween(1, 2);

        var recorder2 = new Recorder();
        var shared = POOL.track(DbBulkhead.builder(POOL.get())
                .listener(recorder2)
                .workload("w", 2, 10)
                .build());
        List<Connection> outside = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                outside.add(POOL.get().getConnection()); // every connection taken outside the barrier
            }
            try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
                Future<?> f = executor.submit(() -> runConcurrently(shared, 2, 0.01));
                // Hand the connections back while the barrier's callers wait in the pool.
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> POOL.get().getHikariPoolMXBean().getThreadsAwaitingConnection() > 0);
                // Not a synchronisation: the callers are already waiting; this is how long the outside holds on.
                Thread.sleep(100);
                for (var c : outside) {
                    c.close();
                }
                outside.clear();
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            for (var c : outside) {
                c.close();
            }
        }
        long maxPoolWait =
                recorder2.finished.stream().mapToLong(x -> x[1]).max().orElseThrow();
        assertThat(maxPoolWait)
                .as("an operation admitted by the barrier waited in the pool")
                .isGreaterThanOrEqualTo(Duration.ofMillis(100).toNanos());
    }

    private static Void runConcurrently(DbBulkhead gate, int callers, double seconds) throws Exception {
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<?>>();
            for (int i = 0; i < callers; i++) {
                futures.add(executor.submit(() -> gate.transaction(Duration.ofSeconds(10), c -> {
                    sleep(c, seconds);
                    return null;
                })));
            }
            for (var f : futures) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
        return null;
    }

    private static long sum(List<long[]> rows, int column) {
        return rows.stream().mapToLong(r -> r[column]).sum();
    }

    @Test
    void aFlightRecordingHasAnEventPerRejectionAndPerOperationWithItsWaits(@TempDir Path dir) throws Exception {
        var gate = POOL.track(DbBulkhead.builder(POOL.get())
                .name("jfr-db")
                .workload("w", 1, 0)
                .build());
        Path file = dir.resolve("flight.jfr");
        try (var recording = new Recording()) {
            recording.enable("dev.dbbulkhead.Operation");
            recording.enable("dev.dbbulkhead.Rejection");
            recording.start();
            gate.transaction(Duration.ZERO, c -> {
                sleep(c, 0.02);
                // A second caller while the only permit is held: admission full.
                try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
                    var rejected = executor.submit(() -> gate.transaction(Duration.ZERO, c2 -> 1));
                    try {
                        rejected.get(10, TimeUnit.SECONDS);
                    } catch (Exception expected) {
                        // counted below
                    }
                }
                return null;
            });
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = Collections.synchronizedList(new ArrayList<>());
        for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
            if (e.getEventType().getName().startsWith("dev.dbbulkhead.")) {
                events.add(e);
            }
        }
        assertThat(events)
                .extracting(e -> e.getEventType().getName())
                .containsExactlyInAnyOrder("dev.dbbulkhead.Operation", "dev.dbbulkhead.Rejection");
        RecordedEvent op = events.stream()
                .filter(e -> e.getEventType().getName().endsWith("Operation"))
                .findFirst()
                .orElseThrow();
        assertThat(op.getString("bulkhead")).isEqualTo("jfr-db");
        assertThat(op.getString("workload")).isEqualTo("w");
        assertThat(op.getString("outcome")).isEqualTo("COMMITTED");
        assertThat(op.getDuration("work")).isGreaterThanOrEqualTo(Duration.ofMillis(20));
        assertThat(op.getDuration("hold")).isGreaterThanOrEqualTo(op.getDuration("work"));
        RecordedEvent rej = events.stream()
                .filter(e -> e.getEventType().getName().endsWith("Rejection"))
                .findFirst()
                .orElseThrow();
        assertThat(rej.getString("reason")).isEqualTo("ADMISSION_FULL");
        assertThat(rej.getInt("concurrent")).isEqualTo(1);
    }
}
