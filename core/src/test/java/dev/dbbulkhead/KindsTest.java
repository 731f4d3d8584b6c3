package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Kinds of operation learned by one workload, on the real PostgreSQL: a slow kind beside a fast one is capped while
 * the workload is contended, still served, never capped with a permit free; a fast kind is never capped; callers name
 * kinds; and under races, timeouts and interrupts, on platform and virtual threads, never more than the limit holds a
 * connection, every permit comes back and every kind ends with nothing inside ({@link BarrierExtension} checks the
 * permits and connections after each test).
 */
class KindsTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(6);

    private static Workload workload(int concurrent) {
        return POOL.track(DbBulkhead.builder(POOL.get())
                        .workload(WorkloadConfig.builder("w")
                                .concurrent(concurrent)
                                .extraSlots(64)
                                .kinds(true)
                                .build())
                        .build())
                .workload("w");
    }

    private static final SqlWork<Integer> FAST = c -> Db.count(c, "SELECT 1 FROM pg_sleep(0.002)");
    private static final SqlWork<Integer> SLOW = c -> Db.count(c, "SELECT 1 FROM pg_sleep(0.1)");

    /** {@code work}, counting the transactions in work at once and the most there were. */
    private static SqlWork<Integer> counted(SqlWork<Integer> work, AtomicInteger inWork, AtomicInteger most) {
        return c -> {
            most.accumulateAndGet(inWork.incrementAndGet(), Math::max);
            try {
                return work.run(c);
            } finally {
                inWork.decrementAndGet();
            }
        };
    }

    private static Optional<KindStats> kind(Workload w, String prefix) {
        return w.kinds().stream().filter(k -> k.name().startsWith(prefix)).findFirst();
    }

    /** One call site for every statement: the same lambda class whatever it sends, as a data-access helper is. */
    private static SqlWork<Integer> helper(String sql, long id) {
        return c -> {
            Db.count(c, sql);
            return id > 0 ? Db.insert(c, id) : 0;
        };
    }

    /**
     * One call site that sends two shapes of statement: each shape is a kind, the slow one is capped at its first
     * statement (nothing sent: a capped caller's insert is never there; a served one's is), the fast one never, and
     * every permit and connection comes back ({@link BarrierExtension}).
     */
    @Test
    void oneCallSiteThatSendsTwoShapesIsSplitByShape(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        Workload w = workload(4);
        var recording = new jdk.jfr.Recording();
        recording.enable("dev.dbbulkhead.Operation");
        recording.enable("dev.dbbulkhead.Rejection");
        recording.start();
        String fastSql = "SELECT 1 FROM pg_sleep(0.002)";
        String slowSql = "SELECT 2 AS report FROM pg_sleep(0.1)";
        var fastCapped = new LongAdder();
        var told = new java.util.concurrent.ConcurrentLinkedQueue<long[]>(); // {id, 1 served / 0 capped}
        try (var fast = new Callers(Thread.ofVirtual().factory(), 8, () -> {
                    try {
                        w.transaction(Duration.ofSeconds(2), helper(fastSql, 0));
                    } catch (KindCappedException e) {
                        fastCapped.increment();
                        throw e;
                    }
                });
                var slow = new Callers(Thread.ofVirtual().factory(), 4, () -> {
                    long id = Db.newId();
                    try {
                        w.transaction(Duration.ofSeconds(2), helper(slowSql, id));
                        told.add(new long[] {id, 1});
                    } catch (KindCappedException e) {
                        assertThat(e.kind()).isEqualTo("select ? as report from pg_sleep ( ? )");
                        told.add(new long[] {id, 0});
                        throw e;
                    }
                })) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> told.stream().filter(t -> t[1] == 0).count() >= 5
                            && told.stream().filter(t -> t[1] == 1).count() >= 5);
        }
        assertThat(kind(w, "select ? as report").map(KindStats::cap))
                .as("the slow shape is capped")
                .hasValueSatisfying(cap -> assertThat(cap).isBetween(1, 3));
        assertThat(kind(w, "select ? from pg_sleep").map(KindStats::cap))
                .as("the fast shape is not")
                .hasValue(-1);
        assertThat(fastCapped.sum()).isZero();
        var events = recorded(recording, dir);
        assertThat(cappedKinds(events))
                .as("the flight recorder names shapes as it names call sites")
                .isNotEmpty()
                .containsOnly("select ? as report from pg_sleep ( ? )");
        assertThat(operationKinds(events))
                .contains("select ? as report from pg_sleep ( ? )", "select ? from pg_sleep ( ? )");
        for (long[] t : told) {
            assertThat(Db.rows(t[0]))
                    .as("told %s: %s", t[1] == 1 ? "served" : "capped", t[1] == 1 ? "committed" : "nothing sent")
                    .isEqualTo((int) t[1]);
        }
    }

    @ParameterizedTest(name = "virtual threads: {0}")
    @ValueSource(booleans = {false, true})
    void aSlowKindIsCappedWhileContendedAndStillServedAndAFastOneIsNever(
            boolean virtual, @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        Workload w = workload(4);
        var recording = new jdk.jfr.Recording();
        recording.enable("dev.dbbulkhead.Operation");
        recording.enable("dev.dbbulkhead.Rejection");
        recording.start();
        ThreadFactory threads =
                virtual ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        var inWork = new AtomicInteger();
        var most = new AtomicInteger();
        var slowServed = new LongAdder();
        var fastServed = new LongAdder();
        var fastCapped = new LongAdder();
        var slowCapped = new LongAdder();
        SqlWork<Integer> fastWork = counted(FAST, inWork, most);
        SqlWork<Integer> slowWork = counted(SLOW, inWork, most);
        try (var fast = new Callers(threads, 8, () -> {
                    try {
                        w.transaction(
                                TransactionOptions.queueWait(Duration.ofSeconds(2))
                                        .kind("fast"),
                                fastWork);
                        fastServed.increment();
                    } catch (KindCappedException e) {
                        fastCapped.increment();
                        throw e;
                    }
                });
                var slow = new Callers(threads, 4, () -> {
                    try {
                        w.transaction(
                                TransactionOptions.queueWait(Duration.ofSeconds(2))
                                        .kind("slow"),
                                slowWork);
                        slowServed.increment();
                    } catch (KindCappedException e) {
                        assertThat(e.kind()).isEqualTo("slow");
                        assertThat(e.getMessage()).contains("kind 'slow' is at its cap of " + e.cap());
                        assertThat(e.reason()).isEqualTo(RejectionReason.KIND_CAPPED);
                        slowCapped.increment();
                        throw e;
                    }
                })) {
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(kind(w, "slow").map(KindStats::cap))
                            .as("the slow kind, far longer than the median operation, is capped")
                            .hasValueSatisfying(cap -> assertThat(cap).isBetween(1, 3)));
            await().atMost(Duration.ofSeconds(30)).until(() -> slowCapped.sum() >= 5);
            long served = slowServed.sum();
            await().atMost(Duration.ofSeconds(30))
                    .alias("capped, the slow kind is still served")
                    .until(() -> slowServed.sum() >= served + 5);
        }
        var events = recorded(recording, dir);
        assertThat(cappedKinds(events))
                .as("each capped refusal is an event with its kind")
                .isNotEmpty()
                .containsOnly("slow");
        assertThat(operationKinds(events)).contains("fast", "slow").doesNotContainNull();
        assertThat(fastCapped.sum()).as("the fast kind is never capped").isZero();
        assertThat(kind(w, "fast").map(KindStats::cap)).hasValue(-1);
        assertThat(fastServed.sum()).isPositive();
        assertThat(most.get()).as("transactions in work at once").isLessThanOrEqualTo(4);
        assertThat(w.kinds())
                .allSatisfy(k -> assertThat(k.inside()).as(k.name()).isZero());
        KindStats slow = kind(w, "slow").orElseThrow();
        assertThat(slow.capped()).isEqualTo(slowCapped.sum());
        assertThat(slow.holdP50()).isBetween(Duration.ofMillis(80), Duration.ofMillis(200));
        assertThat(slow.meanHold()).isGreaterThan(kind(w, "fast").orElseThrow().meanHold());
    }

    @Test
    void withAPermitFreeACappedKindComesIn() throws Exception {
        Workload w = workload(4);
        var seen = new java.util.concurrent.atomic.AtomicReference<KindStats>();
        try (var fast = new Callers(Thread.ofVirtual().factory(), 8, () -> w.transaction(Duration.ofSeconds(2), FAST));
                var slow = new Callers(
                        Thread.ofVirtual().factory(), 4, () -> w.transaction(Duration.ofSeconds(2), SLOW))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var found = w.kinds().stream().filter(k -> k.cap() >= 1).findFirst();
                found.ifPresent(seen::set);
                return found.isPresent();
            });
        }
        KindStats capped = seen.get();
        assertThat(capped.cap()).isLessThan(4);
        assertThat(capped.name())
                .as("named where it is called from: the class, the method, the line")
                .matches("KindsTest\\.withAPermitFreeACappedKindComesIn:\\d+");
        // Nothing else runs: once a window passed with a permit free for every caller, four at once of the capped kind
        // all find a permit free, and none is refused.
        await().atMost(Duration.ofSeconds(10))
                .ignoreExceptionsInstanceOf(KindCappedException.class)
                .until(() -> w.transaction(Duration.ZERO, SLOW) == 1);
        var start = new CountDownLatch(1);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            var calls = new ArrayList<Future<Integer>>();
            for (int i = 0; i < 4; i++) {
                calls.add(threads.submit(() -> {
                    start.await();
                    return w.transaction(Duration.ZERO, SLOW);
                }));
            }
            start.countDown();
            for (var call : calls) {
                assertThat(call.get(30, TimeUnit.SECONDS)).isEqualTo(1);
            }
        }
    }

    @Test
    void callersNameKindsAndTheLongTailSharesOne() throws Exception {
        Workload w = workload(2);
        SqlWork<Integer> one = c -> Db.count(c, "SELECT 1");
        SqlWork<Integer> another = c -> Db.count(c, "SELECT 1");
        w.transaction(TransactionOptions.queueWait(Duration.ofSeconds(1)).kind("report"), one);
        w.transaction(TransactionOptions.queueWait(Duration.ofSeconds(1)).kind("report"), another);
        assertThat(w.kinds()).extracting(KindStats::name).containsExactly("report");
        var late = Calls.catchRejection(() -> w.transaction(
                TransactionOptions.deadline(Deadline.in(Duration.ZERO)).kind("report"), one));
        assertThat(late.kind()).as("every rejection names the caller's kind").isEqualTo("report");
        assertThat(late.getMessage()).endsWith(", kind=report)");
        for (int i = 0; i < 100; i++) {
            w.transaction(TransactionOptions.queueWait(Duration.ofSeconds(1)).kind("k" + i), one);
        }
        assertThat(w.kinds()).hasSize(33).extracting(KindStats::name).contains("report", "other");
        assertThat(TransactionOptions.queueWait(Duration.ZERO).kind("x").toString())
                .contains("kind=x");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(
                        () -> TransactionOptions.queueWait(Duration.ZERO).kind(" ")))
                .hasMessageContaining("kind must not be blank, was ' '");
        var plain = POOL.track(
                        DbBulkhead.builder(POOL.get()).workload("plain", 2, 0).build())
                .workload("plain");
        plain.transaction(Duration.ofSeconds(1), one);
        assertThat(plain.kinds()).as("the article's workload learns no kinds").isEmpty();
    }

    /**
     * Ten thousand call sites, each a class of its own (one class defined by as many loaders), each run once on the
     * server: 32 kinds are told apart and the rest share "other"; a call site's class is not kept once it is not
     * tracked (its loader can be collected).
     */
    @Test
    void tenThousandCallSitesKeepTheKindsBoundedAndHoldNoClassOfTheTail() throws Exception {
        Workload w = workload(4);
        var copies = new dev.dbbulkhead.testkit.ClassCopies(Work.class);
        var last = new java.util.concurrent.atomic.AtomicReference<java.lang.ref.WeakReference<ClassLoader>>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            var calls = new ArrayList<Future<?>>();
            for (int t = 0; t < 8; t++) {
                calls.add(threads.submit(() -> {
                    for (int i = 0; i < 10_000 / 8; i++) {
                        Class<?> type = copies.copy();
                        @SuppressWarnings("unchecked")
                        var work =
                                (SqlWork<Integer>) type.getDeclaredConstructor().newInstance();
                        assertThat(w.transaction(Duration.ofSeconds(5), work)).isEqualTo(1);
                        last.set(new java.lang.ref.WeakReference<>(type.getClassLoader()));
                    }
                    return null;
                }));
            }
            for (var call : calls) {
                call.get(120, TimeUnit.SECONDS);
            }
        }
        List<KindStats> kinds = w.kinds();
        assertThat(kinds).hasSize(33);
        assertThat(kinds).extracting(KindStats::name).contains("other");
        assertThat(kinds).allSatisfy(k -> assertThat(k.inside()).isZero());
        var loader = last.get();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            System.gc();
            return loader.get() == null;
        });
    }

    /** A call site of its own. */
    public static final class Work implements SqlWork<Integer> {
        @Override
        public Integer run(java.sql.Connection c) throws SQLException {
            try (var s = c.createStatement();
                    var r = s.executeQuery("SELECT 1")) {
                r.next();
                return r.getInt(1);
            }
        }
    }

    /**
     * Races: callers of many kinds (more than are told apart) with waits of 0 or a few ms, some interrupted while they
     * wait, some failing inside: every permit back, nothing left inside any kind.
     */
    @ParameterizedTest(name = "virtual threads: {0}")
    @ValueSource(booleans = {false, true})
    void underRacesEveryPermitComesBackAndEveryKindEndsEmpty(boolean virtual) throws Exception {
        Workload w = workload(3);
        ThreadFactory threads =
                virtual ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        var inWork = new AtomicInteger();
        var most = new AtomicInteger();
        var done = new LongAdder();
        List<Thread> started = new ArrayList<>();
        for (int t = 0; t < 24; t++) {
            int seed = t;
            started.add(threads.newThread(() -> {
                var random = ThreadLocalRandom.current();
                for (int i = 0; i < 60; i++) {
                    String kind = "k" + (seed * 7 + i) % 40;
                    double sleep = kind.endsWith("1") ? 0.03 : 0.001;
                    try {
                        w.transaction(
                                TransactionOptions.queueWait(Duration.ofMillis(random.nextInt(0, 5)))
                                        .kind(kind),
                                c -> {
                                    most.accumulateAndGet(inWork.incrementAndGet(), Math::max);
                                    try {
                                        if (random.nextInt(10) == 0) {
                                            throw new IllegalStateException("fails inside");
                                        }
                                        return Db.count(c, "SELECT 1 FROM pg_sleep(" + sleep + ")");
                                    } finally {
                                        inWork.decrementAndGet();
                                    }
                                });
                    } catch (BulkheadRejectedException | IllegalStateException expected) {
                        // refused, or failed on purpose
                    } catch (SQLException interruptedInThePoolOrOnTheSocket) {
                        Thread.interrupted();
                    } catch (InterruptedException interrupted) {
                        Thread.interrupted(); // clear, carry on
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                    done.increment();
                }
            }));
        }
        started.forEach(Thread::start);
        for (int round = 0; round < 20; round++) {
            started.get(round % started.size()).interrupt();
            Thread.sleep(5);
        }
        for (Thread t : started) {
            t.join(TimeUnit.SECONDS.toMillis(60));
            assertThat(t.isAlive()).isFalse();
        }
        assertThat(done.sum()).isEqualTo(24 * 60);
        assertThat(most.get()).isLessThanOrEqualTo(3);
        assertThat(w.available()).isEqualTo(3);
        assertThat(w.inside()).isZero();
        assertThat(w.kinds())
                .isNotEmpty()
                .allSatisfy(k -> assertThat(k.inside()).as(k.name()).isZero());
    }

    /** What {@code recording} recorded, once stopped. */
    private static java.util.List<jdk.jfr.consumer.RecordedEvent> recorded(
            jdk.jfr.Recording recording, java.nio.file.Path dir) throws java.io.IOException {
        recording.stop();
        java.nio.file.Path file = dir.resolve("kinds.jfr");
        recording.dump(file);
        recording.close();
        return jdk.jfr.consumer.RecordingFile.readAllEvents(file);
    }

    /** The kind of each refusal at a kind's cap. */
    private static java.util.List<String> cappedKinds(java.util.List<jdk.jfr.consumer.RecordedEvent> events) {
        return events.stream()
                .filter(e -> e.getEventType().getName().equals("dev.dbbulkhead.Rejection")
                        && "KIND_CAPPED".equals(e.getString("reason")))
                .map(e -> e.getString("kind"))
                .toList();
    }

    /** The kind of each operation that ended. */
    private static java.util.List<String> operationKinds(java.util.List<jdk.jfr.consumer.RecordedEvent> events) {
        return events.stream()
                .filter(e -> e.getEventType().getName().equals("dev.dbbulkhead.Operation"))
                .map(e -> e.getString("kind"))
                .toList();
    }
}
