package dev.dbbulkhead.spring.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.Workload;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The pacer's hold, on real threads with its clock in the test's hands: none for a refusal with none held ahead or on a
 * platform thread, the longest hold while the workload has completed nothing, two completions per refusal held ahead
 * once it has, and never more than {@value RefusalPacer#MAX_HELD} held at once.
 */
class RefusalPacerTest {
    private static final Duration MAX_HOLD = Duration.ofSeconds(30);

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final RefusalPacer pacer = new RefusalPacer(MAX_HOLD, now::get);

    private static Workload workload(String name) {
        return (Workload) Proxy.newProxyInstance(
                Workload.class.getClassLoader(),
                new Class<?>[] {Workload.class},
                (proxy, method, args) -> method.getName().equals("name") ? name : null);
    }

    private static <T> T onVirtualThread(Callable<T> call) throws Exception {
        var result = new ArrayList<T>();
        var failure = new ArrayList<Exception>();
        Thread.ofVirtual()
                .start(() -> {
                    try {
                        result.add(call.call());
                    } catch (Exception e) {
                        failure.add(e);
                    }
                })
                .join();
        if (!failure.isEmpty()) {
            throw failure.getFirst();
        }
        return result.getFirst();
    }

    /**
     * Refusals of {@code workload} held on virtual threads until they are interrupted, {@code n} of them started after
     * the first one held. A refusal with none held ahead is answered at once, so the first hold needs two refusals in
     * the pacer at the same instant: batches released together by a latch until one overlaps; from then on every
     * refusal finds one ahead and is held.
     */
    private List<Thread> holding(String workload, int n) throws InterruptedException {
        var threads = new ArrayList<Thread>();
        for (int batch = 0; pacer.held() == 0 && batch < 10_000; batch++) {
            var go = new CountDownLatch(1);
            var started = new ArrayList<Thread>();
            for (int i = 0; i < 64; i++) {
                started.add(Thread.ofVirtual().start(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int k = 0; k < 1_000 && pacer.held() == 0; k++) {
                        pacer.hold(workload); // at once, until one finds another in the pacer
                    }
                }));
            }
            go.countDown();
            threads.addAll(started);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> pacer.held() > 0 || started.stream().noneMatch(Thread::isAlive));
        }
        assertThat(pacer.held()).as("two refusals overlapped once").isPositive();
        for (int i = 0; i < n; i++) {
            threads.add(Thread.ofVirtual().start(() -> pacer.hold(workload)));
        }
        return threads;
    }

    private static void release(List<Thread> threads) throws InterruptedException {
        threads.forEach(Thread::interrupt);
        for (Thread t : threads) {
            t.join();
        }
    }

    @Test
    void aRefusalWithNoneHeldAheadIsAnsweredAtOnce() throws Exception {
        assertThat(onVirtualThread(() -> pacer.holdFor("w"))).isZero();
        onVirtualThread(() -> {
            pacer.hold("w"); // nothing ahead: returns at once, whatever the longest hold
            return null;
        });
        assertThat(pacer.held()).isZero();
    }

    @Test
    void heldRefusalsSetTheNextOnesHoldByTheWorkloadsCompletions() throws Exception {
        List<Thread> held = holding("w", 8);
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> pacer.held() >= 8);
            assertThat(onVirtualThread(() -> pacer.holdFor("w")))
                    .as("nothing completed yet: the longest hold")
                    .isEqualTo(MAX_HOLD);
            assertThat(pacer.holdFor("w")).as("a platform thread is never held").isZero();
            assertThat(onVirtualThread(() -> pacer.holdFor("other")))
                    .as("another workload with none held")
                    .isZero();
            for (int i = 0; i < 100; i++) {
                pacer.onFinished(workload("w"), Outcome.COMMITTED, 0, 0, 0, 0);
            }
            now.addAndGet(1_000_000_000L); // one second: 100 completions a second
            pacer.onFinished(workload("w"), Outcome.COMMITTED, 0, 0, 0, 0);
            int ahead = pacer.held();
            assertThat(onVirtualThread(() -> pacer.holdFor("w")))
                    .as("two completions (at 101/s) per refusal held ahead")
                    .isEqualTo(Duration.ofNanos(2L * ahead * 1_000_000_000L / 101));
        } finally {
            release(held);
        }
        assertThat(pacer.held()).isZero();
    }

    @Test
    void noMoreThanMaxHeldAreHeldAtOnce() throws Exception {
        List<Thread> held = holding("w", RefusalPacer.MAX_HELD + 200);
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> pacer.held() == RefusalPacer.MAX_HELD);
            assertThat(onVirtualThread(() -> pacer.holdFor("w")))
                    .as("the next one is answered at once")
                    .isZero();
            assertThat(held.stream().filter(Thread::isAlive).count()).isEqualTo(RefusalPacer.MAX_HELD);
        } finally {
            release(held);
        }
        assertThat(pacer.held()).isZero();
    }
}
