package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A batch job in chunks ({@link BatchJob}) on the real PostgreSQL, on virtual threads: a chunk refused before it ran is
 * asked again after a pause instead of failing the job, every chunk commits once, and what ran (an error of the work,
 * a deadline passed in the transaction) is not retried. Every permit and connection is back after each test.
 */
class BatchJobTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(6);

    /** Interactive beside an elastic batch workload of B 1 without a queue: a second batch caller is refused at once. */
    private static DbBulkhead barrier() {
        return POOL.track(DbBulkhead.builder(POOL.get())
                .workload(WorkloadConfig.builder("interactive")
                        .concurrent(4)
                        .extraSlots(16)
                        .latencyObjective(Duration.ofMillis(5))
                        .build())
                .workload(WorkloadConfig.builder("batch")
                        .concurrent(1)
                        .priority(Priority.ELASTIC)
                        .build())
                .build());
    }

    @Test
    void aChunkRefusedIsAskedAgainAfterAPauseNotFailed() throws Exception {
        var db = barrier();
        Workload batch = db.workload("batch");
        var job = BatchJob.of(batch, Duration.ofSeconds(5), Duration.ofMillis(50));
        long id = Db.newId();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<Integer> chunk;
            try (var held = batch.acquire(Duration.ZERO)) { // the elastic floor, taken: the chunk cannot get a permit
                assertThat(batch.available()).isZero();
                chunk = executor.submit(() -> job.chunk(c -> Db.insert(c, id)));
                await().atMost(Duration.ofSeconds(10)).until(() -> job.slowdowns() >= 3);
                assertThat(chunk).isNotDone();
                assertThat(job.chunks()).isZero();
                assertThat(Db.count("SELECT count(*) FROM bulkhead_items WHERE id = " + id))
                        .as("nothing of a refused chunk ran")
                        .isZero();
            }
            assertThat(chunk.get()).as("admitted once the permit came back").isEqualTo(1);
        }
        assertThat(job.chunks()).isEqualTo(1);
        assertThat(job.paused()).isPositive();
        assertThat(Db.count("SELECT count(*) FROM bulkhead_items WHERE id = " + id))
                .as("committed once")
                .isEqualTo(1);
    }

    @Test
    void aJobBesideSaturatingInteractiveWorkCommitsEveryChunkOnce() throws Exception {
        var db = barrier();
        var job = BatchJob.of(db.workload("batch"), Duration.ofSeconds(5), Duration.ofMillis(20));
        long first = Db.newId();
        for (int i = 0; i < 99; i++) {
            Db.newId(); // the job's 100 ids, reserved
        }
        var interactiveDone = new LongAdder();
        var next = new AtomicInteger();
        try (var interactive = new Callers(Thread.ofVirtual().factory(), 12, () -> {
                    db.workload("interactive")
                            .transaction(Duration.ofSeconds(5), c -> Db.count(c, "SELECT 1 FROM pg_sleep(0.005)"));
                    interactiveDone.increment();
                });
                var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            await().atMost(Duration.ofSeconds(10)).until(() -> interactiveDone.sum() >= 20);
            var workers = new java.util.ArrayList<Future<?>>();
            for (int t = 0; t < 4; t++) { // four threads of one job: more than the floor, some refused
                workers.add(executor.submit(() -> {
                    int i;
                    while ((i = next.getAndIncrement()) < 100) {
                        long id = first + i;
                        job.chunk(c -> Db.insert(c, id) + Db.count(c, "SELECT 0 FROM pg_sleep(0.002)"));
                    }
                    return null;
                }));
            }
            for (Future<?> w : workers) {
                w.get();
            }
        }
        assertThat(job.chunks()).isEqualTo(100);
        assertThat(Db.count("SELECT count(*) FROM bulkhead_items WHERE id BETWEEN " + first + " AND " + (first + 99)))
                .as("every chunk committed, once")
                .isEqualTo(100);
        assertThat(interactiveDone.sum()).isPositive();
    }

    @Test
    void whatTheWorkRaisedIsNotAskedAgain() throws Exception {
        var db = barrier();
        var job = BatchJob.of(db.workload("batch"), Duration.ofSeconds(5));
        var calls = new AtomicInteger();
        assertThatThrownBy(() -> job.chunk(c -> {
                    calls.incrementAndGet();
                    throw new SQLException("the work failed");
                }))
                .isInstanceOf(SQLException.class)
                .hasMessage("the work failed");
        assertThat(calls).hasValue(1);
        assertThat(job.slowdowns()).isZero();
        assertThat(job.chunks()).isZero();
    }

    @Test
    void aStepThatAdmitsItselfIsPacedTheSameWay() throws Exception {
        var db = barrier();
        Workload batch = db.workload("batch");
        var job = BatchJob.of(batch, Duration.ofSeconds(5), Duration.ofMillis(20));
        var taken = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        var released = new CountDownLatch(1);
        Thread holder = Thread.ofVirtual()
                .start(
                        () -> { // the elastic floor, held on another thread
                            try (var held = batch.acquire(Duration.ZERO)) {
                                taken.countDown();
                                release.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                            released.countDown();
                        });
        taken.await();
        var attempts = new AtomicInteger();
        int result = job.step(() -> {
            if (attempts.incrementAndGet() == 3) { // the permit comes back: the third try is admitted
                release.countDown();
                released.await();
            }
            return batch.transaction(Duration.ZERO, c -> Db.count(c, "SELECT 7"));
        });
        holder.join();
        assertThat(result).isEqualTo(7);
        assertThat(attempts).hasValue(3);
        assertThat(job.slowdowns()).isEqualTo(2);
        assertThat(job.chunks()).isEqualTo(1);
    }

    @Test
    void aStepThatCanNeverBeAdmittedGivesUpNamingTheJobTheRefusalsAndTheLastReason() throws Exception {
        var db = barrier();
        Workload batch = db.workload("batch");
        var job =
                BatchJob.of(batch, Duration.ofSeconds(5), Duration.ofMillis(5)).givingUpAfter(5);
        var past = Deadline.in(Duration.ZERO); // already passed: this step is refused every time, before it runs
        var attempts = new AtomicInteger();
        long id = Db.newId();
        assertThatThrownBy(() -> job.step(() -> {
                    attempts.incrementAndGet();
                    return batch.transaction(past, c -> Db.insert(c, id));
                }))
                .isInstanceOf(RejectedExecutionException.class)
                .isNotInstanceOf(BulkheadRejectedException.class)
                .hasMessageContaining("BatchJob[workload=batch")
                .hasMessageContaining("gave up after 5 refusals in a row")
                .hasMessageContaining("DEADLINE")
                .hasCauseInstanceOf(DeadlineExceededException.class);
        assertThat(attempts).as("asked as often as it may, then no more").hasValue(5);
        assertThat(job.slowdowns()).isEqualTo(4);
        assertThat(job.chunks()).isZero();
        assertThat(Db.count("SELECT count(*) FROM bulkhead_items WHERE id = " + id))
                .isZero();
        assertThatThrownBy(() -> job.givingUpAfter(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("giveUpAfter must be >= 1, was 0");
    }

    @Test
    void badArgumentsNameTheField() {
        var db = barrier();
        assertThatThrownBy(() -> BatchJob.of(db.workload("batch"), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("chunkDeadline must be > 0, was PT0S");
        assertThatThrownBy(() -> BatchJob.of(db.workload("batch"), Duration.ofSeconds(1), Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxPause must be > 0, was PT-0.001S");
    }
}
