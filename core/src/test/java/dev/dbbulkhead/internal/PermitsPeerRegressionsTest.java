package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Bugs that peers shipped in the permit structure itself, each as a test that would catch it here, named after the
 * original report. The Lincheck model check ({@link PermitsModelCheckTest}) covers them exhaustively too.
 */
@Tag("no-db")
class PermitsPeerRegressionsTest {
    /**
     * Failsafe #393: a waiter whose timed wait expired stayed queued and later received a permit that nobody
     * released. Here a release races a waiter's timeout thousands of times on real threads; every time the
     * waiter either got the permit (and gives it back) or gave up with nothing, and the permits add up.
     */
    @Test
    void failsafe393_aWaiterWhoseWaitExpiresNeverKeepsAPermitThatNobodyReleases() throws Exception {
        var permits = new Permits(1, 1);
        var random = new Random(393);
        int acquiredAtTheEdge = 0;
        for (int i = 0; i < 5_000; i++) {
            var holder = new Permits.Node(Thread.currentThread());
            assertThat(permits.enter(holder, false)).isEqualTo(Permits.Entry.ACQUIRED);
            long waitNanos = 1_000 + random.nextInt(20_000);
            long releaseAfter = random.nextInt(25_000);
            var result = new AtomicReference<String>();
            var waiting = new Permits.Node[1];
            Thread waiter = Thread.ofPlatform().start(() -> {
                try {
                    waiting[0] = new Permits.Node(Thread.currentThread());
                    boolean acquired = Waits.acquire(permits, waiting[0], waitNanos);
                    result.set(acquired ? "acquired" : "timed out");
                } catch (InterruptedException e) {
                    result.set("interrupted");
                }
            });
            LockSupport.parkNanos(releaseAfter);
            permits.exit(holder);
            waiter.join();
            if (result.get().equals("acquired")) {
                acquiredAtTheEdge++;
                permits.exit(waiting[0]);
            } else {
                assertThat(result.get()).as("iteration %d", i).isEqualTo("timed out");
            }
            assertThat(permits.available()).as("iteration %d", i).isEqualTo(1);
            assertThat(permits.availableSlots()).as("iteration %d", i).isEqualTo(2);
            assertThat(permits.waiting()).as("iteration %d", i).isZero();
        }
        assertThat(acquiredAtTheEdge).as("the race was exercised both ways").isBetween(1, 4_999);
    }
}
