package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Each way a waiter's permits come back when its thread leaves without settling (the grant's hand-shake), step by
 * step: a queued waiter that left is skipped by the next release; a grant made just before its waiter left is taken
 * back by the next caller; waiters that left and fill every slot do not refuse a newcomer; a waiter whose thread
 * terminated is found without any flag; a limit raised while a waiter that left is first in line. (The model check,
 * {@code PermitsModelCheckTest.Leaving}, runs these in every interleaving; here each mechanism is checked alone, as
 * the others would mask it there.)
 */
@Tag("no-db")
class PermitsLeavingTest {
    private static Permits.Node holder(Permits p) throws InterruptedException {
        var node = new Permits.Node(Thread.currentThread());
        assertThat(p.enter(node, false)).isEqualTo(Permits.Entry.ACQUIRED);
        return node;
    }

    /** A node queued by this thread, as if it were another caller's: it never waits, it only leaves. */
    private static Permits.Node queued(Permits p) throws InterruptedException {
        var node = new Permits.Node(Thread.currentThread());
        assertThat(Waits.enterAndQueue(p, node)).isEqualTo(Permits.Entry.MUST_WAIT);
        return node;
    }

    private static void assertAllBack(Permits p, int b, int q) {
        assertThat(p.available()).as("free permits").isEqualTo(b);
        assertThat(p.availableSlots()).as("free slots").isEqualTo(b + q);
        assertThat(p.waiting()).as("queued").isZero();
        assertThat(p.executing()).as("executing").isZero();
    }

    @Test
    void aQueuedWaiterThatLeftIsSkippedByTheNextRelease() throws Exception {
        var p = new Permits(1, 2);
        var h = holder(p);
        var left = queued(p);
        left.abandoned = true; // no "leaving" flag: the release's own look at the head must find it
        p.exit(h);
        assertThat(left.state).isEqualTo(Permits.Node.CANCELLED);
        assertThat(p.reclaimed()).isEqualTo(1);
        assertAllBack(p, 1, 2);
    }

    @Test
    void aGrantMadeJustBeforeItsWaiterLeftIsTakenBackByTheNextCaller() throws Exception {
        var p = new Permits(1, 2);
        var h = holder(p);
        var w = queued(p);
        p.exit(h); // granted to w, which has not acknowledged it
        assertThat(w.state).isEqualTo(Permits.Node.GRANTED);
        w.abandoned = true;
        assertThat(p.available())
                .as("the grant is out of circulation until someone locks")
                .isZero();
        var next = new Permits.Node(Thread.currentThread());
        assertThat(Waits.enterAndQueue(p, next))
                .as("the next caller gets the reclaimed permit")
                .isEqualTo(Permits.Entry.ACQUIRED);
        assertThat(w.released()).isTrue();
        p.exit(next);
        assertThat(p.reclaimed()).isEqualTo(1);
        assertAllBack(p, 1, 2);
    }

    @Test
    void waitersThatLeftAndFillEverySlotDoNotRefuseANewcomer() throws Exception {
        var p = new Permits(1, 2);
        var h = holder(p);
        var a = queued(p);
        var b = queued(p);
        a.abandoned = true;
        b.abandoned = true;
        p.leaving = true; // what admission's failure handler writes beside abandoned
        var newcomer = new Permits.Node(Thread.currentThread());
        assertThat(p.enter(newcomer, true)).as("not refused as admission full").isEqualTo(Permits.Entry.MUST_WAIT);
        assertThat(p.waiting()).isZero();
        assertThat(p.availableSlots()).isEqualTo(2);
        assertThat(p.queue(newcomer)).isEqualTo(Permits.Entry.MUST_WAIT);
        p.exit(h);
        assertThat(p.await(newcomer, TimeUnit.SECONDS.toNanos(5))).isEqualTo(Permits.Entry.ACQUIRED);
        p.exit(newcomer);
        assertThat(p.reclaimed()).isEqualTo(2);
        assertAllBack(p, 1, 2);
    }

    @Test
    void aWaiterWhoseThreadTerminatedIsFoundWithoutAnyFlag() throws Exception {
        var p = new Permits(1, 2);
        var h = holder(p);
        var node = new Permits.Node[1];
        Thread t = Thread.ofVirtual().start(() -> {
            node[0] = new Permits.Node(Thread.currentThread());
            try {
                assertThat(Waits.enterAndQueue(p, node[0])).isEqualTo(Permits.Entry.MUST_WAIT);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            // ends here, queued: no abandoned flag, no settlement
        });
        t.join();
        assertThat(p.waiting()).isEqualTo(1);
        p.exit(h);
        assertThat(node[0].state).isEqualTo(Permits.Node.CANCELLED);
        assertAllBack(p, 1, 2);
    }

    @Test
    void aRaisedLimitIsNotHandedToAWaiterThatLeft() throws Exception {
        var p = new Permits(2, 2);
        var h = holder(p);
        p.limit(1);
        var left = queued(p);
        var live = queued(p);
        left.abandoned = true;
        p.limit(2); // the withheld permit goes past the waiter that left, to the live one
        assertThat(left.state).isEqualTo(Permits.Node.CANCELLED);
        assertThat(live.state).isEqualTo(Permits.Node.GRANTED);
        assertThat(p.await(live, 0)).isEqualTo(Permits.Entry.ACQUIRED);
        p.exit(live);
        p.exit(h);
        assertAllBack(p, 2, 2);
    }

    @Test
    void abandonIsIdempotentFromAnyThreadWhateverTheNodeHolds() throws Exception {
        var p = new Permits(1, 1);
        var h = holder(p);
        var w = queued(p);
        p.exit(h);
        Thread reclaimer = Thread.ofPlatform().start(() -> {
            p.abandon(w);
            p.abandon(w);
        });
        reclaimer.join();
        p.abandon(w);
        assertThat(w.released()).isTrue();
        assertAllBack(p, 1, 1);
    }
}
