package dev.dbbulkhead.internal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The two permits of a workload in one state word: B + Q admission slots, taken without waiting, and B execution
 * permits, waited for in arrival order. Same contract as the article's pair of semaphores (a plain
 * {@code tryAcquire()} on the slots, a timed {@code tryAcquire} on a fair semaphore of B), at the cost of one CAS
 * to enter and one to leave when nobody waits.
 *
 * <p>State word: bits 32–62 the admitted count (≤ L + Q), bit 31 "take the locked path", bits 0–30 the free
 * execution permits (≤ B). The bit is set while anyone is queued, while a lower limit is owed permits, or while a
 * grant has not been acknowledged; while anyone is queued no execution permit is free (a release hands its permit
 * straight to the oldest waiter), so a newcomer never overtakes a
 * waiter. The queue, the list of grants and the bit
 * change only under the queue lock ({@link QueueLock}); the counts change by CAS, with or without it.
 *
 * <p><b>The grant is a hand-shake.</b> A release hands its permit to the oldest waiter by moving its node from the
 * queue to the list of grants ({@code GRANTED}); the waiter, once awake, acknowledges it ({@code HELD}) under the
 * lock. A waiter that left without settling (a {@link StackOverflowError} cut its clean-up short: it wrote
 * {@link Node#abandoned} first, a field write that cannot fail) or whose thread has terminated never acknowledges:
 * the next locked operation (a release, a newcomer queueing, a limit change) takes such a grant back, and a grant
 * never goes to such a waiter in the first place. So no permit or slot is lost whatever happens to a waiter's
 * thread, and nobody has to call again for it.
 *
 * <p>An adaptive limit L ≤ B ({@link #limit(int)}) takes execution permits out of circulation without losing or
 * creating any: free ones at once ("withheld"), held ones as they are released ("owed", served before any waiter).
 * Raising L first cancels what is still owed, then hands withheld permits to the oldest waiters or frees them.
 * Always: free + held + granted + withheld = the capacity (B, or the shared limit for a workload that borrows).
 *
 * <p>Each caller brings its own {@link Node}, allocated before it takes anything. Every settlement is idempotent
 * (a retry after a stack overflow, an interrupt racing a grant, a reclaim racing nothing since the owner is gone)
 * and ordered so that a failure at a call leaves a state that a retry, the next locked operation or the waiter's
 * timeout settles: the CAS on the state word comes first, field writes follow, and the lock is given back by a field
 * write. Thread-safe.
 */
@SuppressWarnings("NonAtomicVolatileUpdate") // every ++ and -= of a volatile count runs under the queue lock
final class Permits extends Padded.StateWord {
    /** What {@link #enter} did. */
    enum Entry {
        /** Both permits are held: {@link #exit} them exactly once. */
        ACQUIRED,
        /** All L + Q admission slots are taken; nothing is held. */
        FULL,
        /** No execution permit is free and the caller would not wait; nothing is held. */
        BUSY,
        /** From {@link #enter}: no permit is free, nothing is held yet: {@link #queue}. From {@link #queue}: the slot
         * is held and the node queued: {@link #await} the permit. */
        MUST_WAIT,
        /** From {@link #await}: no permit within the wait; the slot was given back, nothing is held. */
        TIMED_OUT
    }

    private static final long ONE_ADMITTED = 1L << 32;
    private static final long LOCKED_PATH = 1L << 31;
    private static final long FREE = LOCKED_PATH - 1;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Padded.State.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int concurrent;
    /** The most L may be raised to: B, or the shared limit for a workload that borrows idle permits of others. */
    private final int capacity;

    private final int extraSlots;
    /** L + Q: admission follows the limit, so that a lower L does not leave B − L more callers queued. */
    private volatile int maxAdmitted;
    /**
     * Taken with {@code lock.lock()}, given back with {@code lock.held = 0} in {@code finally}: see {@link QueueLock}.
     */
    private final QueueLock lock = new QueueLock();

    @GuardedBy("lock")
    private @Nullable Node head;

    @GuardedBy("lock")
    private @Nullable Node tail;
    /** Grants not yet acknowledged, linked by {@link Node#nextGranted}. */
    @GuardedBy("lock")
    private @Nullable Node granted;

    private volatile int waiting; // written under lock
    private volatile int limit; // written under lock
    /** Execution permits taken out of circulation by a lower {@link #limit}; written under lock. */
    private volatile int withheld;
    /** Execution permits a lower limit still has to take, from the next releases; written under lock. */
    private volatile int owed;
    /** Grants and queued callers taken back because their thread left; written under lock. */
    private volatile long reclaimed;
    /**
     * Set with {@link Node#abandoned} by {@link #leave} (field writes, nothing that can fail): some node may have been
     * left anywhere in the queue, so the next locked operation, or the next caller refused for want of a slot, sweeps
     * the whole queue instead of only its head.
     */
    volatile boolean leaving;

    /**
     * One caller's claim, created before it takes anything and used by its thread only, but for the fields the lock
     * guards and {@link #abandoned}.
     */
    static class Node extends Padded.Line {
        static final int NEW = 0;
        static final int WAITING = 1;
        static final int GRANTED = 2;
        static final int HELD = 3;
        static final int CANCELLED = 4;

        final Thread thread;
        /** NEW → WAITING → GRANTED → HELD, or WAITING → CANCELLED; changed under the lock once queued. */
        volatile int state;
        /**
         * Both permits were taken by this node's thread (without waiting, or by acknowledging a grant); written by that
         * thread. A node holds a slot alone only while queued, where the lock's holders can always find it.
         */
        boolean both;
        /** Both permits given back. */
        boolean released;
        /**
         * The owner left without settling: whoever finds this node may settle it for the owner, which will not touch
         * it again. Written by the owner's failure handler, as a plain volatile write that cannot fail.
         */
        volatile boolean abandoned;
        // Guarded by the queue lock of the Permits the node is in: a node does not know its Permits, so this one rule
        // is a comment, not a @GuardedBy the compiler checks; every access is in a @GuardedBy("lock") method.
        @Nullable
        Node prev;

        @Nullable
        Node next;

        @Nullable
        Node nextGranted;

        Node(Thread thread) {
            this.thread = thread;
        }

        /** Whether this node holds a slot or both permits now. */
        final boolean holding() {
            if (released) {
                return false;
            }
            int s = state;
            return both || s == WAITING || s == GRANTED;
        }

        /** Whether this node's last operation fully ended (released, cancelled, or took nothing): then reusable. */
        final boolean reusable() {
            int s = state;
            return released || s == CANCELLED || (s == NEW && !both);
        }

        /** Ready for another operation of the same thread; only once {@link #reusable()}. */
        final void renew() {
            if (state != NEW) {
                state = NEW;
            }
            both = false;
            released = false;
            if (abandoned) {
                abandoned = false;
            }
        }

        /** Whether its owner can no longer settle it: it said so, or its thread has terminated. */
        final boolean left() {
            return abandoned || !thread.isAlive();
        }

        /** True once both permits were given back (by {@link Permits#exit}, an abandon or a reclaim). */
        final boolean released() {
            return released;
        }
    }

    private static final Node[] NONE = {};

    /** {@code concurrent + extraSlots} must fit in an int (checked by the caller). */
    Permits(int concurrent, int extraSlots) {
        this(concurrent, extraSlots, concurrent);
    }

    /**
     * B permits of {@code capacity} in circulation (the rest withheld until the limit is raised: a workload that may
     * borrow the idle permits of others, up to the shared limit); {@code capacity + extraSlots} must fit in an int.
     */
    Permits(int concurrent, int extraSlots, int capacity) {
        this.concurrent = concurrent;
        this.capacity = Math.max(concurrent, capacity);
        this.extraSlots = extraSlots;
        this.maxAdmitted = concurrent + extraSlots;
        this.limit = concurrent;
        this.withheld = this.capacity - concurrent;
        this.state = concurrent;
    }

    private static int admitted(long s) {
        return (int) (s >>> 32);
    }

    private static int free(long s) {
        return (int) (s & FREE);
    }

    /** Adds {@code delta} to the state word. Under the lock the counts still change by CAS: the fast paths race. */
    private void add(long delta) {
        while (true) {
            long s = state;
            if (STATE.compareAndSet(this, s, s + delta)) {
                return;
            }
        }
    }

    /**
     * Takes an admission slot and an execution permit when both are free, without blocking and without the lock.
     *
     * @param mayWait whether the caller will wait for an execution permit: then a busy barrier is
     *     {@link Entry#MUST_WAIT} (nothing taken yet: {@link #queue} next), else {@link Entry#BUSY}
     * @throws InterruptedException when the thread is interrupted (and slots were free): nothing is held
     */
    Entry enter(Node node, boolean mayWait) throws InterruptedException {
        long s = state;
        int max = maxAdmitted;
        if (admitted(s) >= max) {
            if (!leaving) {
                return Entry.FULL;
            }
            sweep(); // slots held by callers that left must not refuse this one: take them back first
            s = state;
            max = maxAdmitted;
            if (admitted(s) >= max) {
                return Entry.FULL;
            }
        }
        // As Semaphore.tryAcquire(timeout): an interrupted caller is refused even when a permit is free.
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        while (true) {
            if (free(s) == 0) {
                return mayWait ? Entry.MUST_WAIT : Entry.BUSY;
            }
            if (STATE.compareAndSet(this, s, s + ONE_ADMITTED - 1)) {
                node.both = true; // no call between the CAS and here
                return Entry.ACQUIRED;
            }
            s = state;
            if (admitted(s) >= max) {
                return Entry.FULL;
            }
        }
    }

    /**
     * After {@link #enter} said {@link Entry#MUST_WAIT}: under the lock, takes the admission slot and either a permit
     * freed meanwhile ({@link Entry#ACQUIRED}) or a place at the tail of the queue ({@link Entry#MUST_WAIT}: then
     * {@link #await}); {@link Entry#FULL} when the slots were taken meanwhile. The slot and the place in the queue are
     * taken together, so that a node holding a slot alone is always in the queue, where others find it.
     */
    @SuppressWarnings("GuardedBy") // takes the lock; released by the write in its finally (QueueLock)
    Entry queue(Node node) {
        lock.lock();
        try {
            settleLeftLocked();
            while (true) {
                long s = state;
                if (admitted(s) >= maxAdmitted) {
                    return Entry.FULL;
                }
                if (free(s) > 0) { // free > 0 means nobody is queued
                    if (STATE.compareAndSet(this, s, s + ONE_ADMITTED - 1)) {
                        node.both = true;
                        return Entry.ACQUIRED;
                    }
                } else if (STATE.compareAndSet(this, s, (s + ONE_ADMITTED) | LOCKED_PATH)) {
                    break;
                }
            }
            // No call from here on: the node is linked whole or not at all.
            if (tail == null) {
                head = node;
            } else {
                tail.next = node;
                node.prev = tail;
            }
            tail = node;
            waiting++;
            node.state = Node.WAITING;
            return Entry.MUST_WAIT;
        } finally {
            lock.held = 0; // failure model, rule 2
        }
    }

    /**
     * After {@link #queue} said {@link Entry#MUST_WAIT}: waits up to {@code nanos} for the grant of an execution
     * permit, and acknowledges it.
     *
     * @return {@link Entry#ACQUIRED} with both permits held, or {@link Entry#TIMED_OUT} (the slot was given back)
     * @throws InterruptedException when interrupted while waiting: the slot was given back, nothing is held
     * @throws StackOverflowError or any other unexpected throwable: the caller marks the node
     *     {@link Node#abandoned} (and {@link #leaving}) and {@link #abandon}s it
     */
    Entry await(Node node, long nanos) throws InterruptedException {
        long deadline = Nanos.saturatedAdd(System.nanoTime(), nanos);
        while (true) {
            if (node.state == Node.GRANTED && acknowledge(node)) {
                return Entry.ACQUIRED;
            }
            if (Thread.interrupted()) {
                abandon(node); // a permit granted meanwhile is handed on before the interrupt is reported
                throw new InterruptedException();
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                return timedOut(node);
            }
            LockSupport.parkNanos(this, remaining);
        }
    }

    /** The waiter's half of the hand-shake: false if the grant was taken back (only ever from a waiter that left). */
    @SuppressWarnings("GuardedBy") // takes the lock; released by the write in its finally (QueueLock)
    private boolean acknowledge(Node node) {
        lock.lock();
        try {
            if (node.state != Node.GRANTED) {
                return false;
            }
            acknowledgeLocked(node);
            return true;
        } finally {
            lock.held = 0; // failure model, rule 2
        }
    }

    @GuardedBy("lock")
    private void acknowledgeLocked(Node node) {
        unlinkGrantLocked(node);
        node.both = true;
        node.state = Node.HELD;
        clearLockedPathIfIdleLocked();
    }

    @SuppressWarnings("GuardedBy") // takes the lock; released by the write in its finally (QueueLock)
    private Entry timedOut(Node node) {
        lock.lock();
        try {
            int s = node.state;
            if (s == Node.GRANTED) {
                acknowledgeLocked(node); // granted as the wait ended: keep it
                return Entry.ACQUIRED;
            }
            if (s == Node.WAITING) {
                cancelLocked(node);
            }
            return Entry.TIMED_OUT;
        } finally {
            lock.held = 0; // failure model, rule 2
        }
    }

    /**
     * Says that {@code node}'s owner leaves without settling it, from a failure handler (a stack overflow, an error
     * from a listener), which has marked it {@link Node#abandoned} first: the next locked operation, or the next
     * caller refused for want of a slot, then sweeps the whole queue for it, even when the {@link #abandon} that
     * follows fails too.
     */
    void leave(Node node) {
        node.abandoned = true;
        leaving = true;
    }

    /**
     * Gives back whatever {@code node} holds, whatever state a failure (a stack overflow, an interrupt) left it in:
     * nothing if it took nothing, the slot and its place if it was queued, both permits (the execution permit handed
     * on) if it held them or was granted them. Idempotent. Any thread may call
     * it for a node whose owner will not touch it again ({@link Node#left()}).
     */
    @SuppressWarnings("GuardedBy") // takes the lock; released by the write in its finally (QueueLock)
    void abandon(Node node) {
        Node next = null;
        lock.lock();
        try {
            if (node.released) {
                return;
            }
            int s = node.state;
            if (s == Node.WAITING) {
                cancelLocked(node);
            } else if (s == Node.GRANTED) {
                unlinkGrantLocked(node);
                next = releaseLocked(node);
            } else if (node.both) {
                next = releaseLocked(node);
            }
            clearLockedPathIfIdleLocked();
        } finally {
            lock.held = 0; // failure model, rule 2
        }
        if (next != null) {
            LockSupport.unpark(next.thread); // a missed wake-up (a failure here) ends at the waiter's timeout
        }
    }

    /** Releases both permits held by {@code node}; the execution permit goes to the oldest waiter, if any. */
    void exit(Node node) {
        while (true) {
            long s = state;
            if ((s & LOCKED_PATH) != 0) {
                exitLocked(node);
                return;
            }
            if (STATE.compareAndSet(this, s, s - ONE_ADMITTED + 1)) {
                node.released = true;
                return;
            }
        }
    }

    /** {@link #exit} when someone waits, a lower limit is owed permits, or a grant is not yet acknowledged. */
    @SuppressWarnings("GuardedBy") // takes the lock; released by the write in its finally (QueueLock)
    private void exitLocked(Node node) {
        Node next;
        lock.lock();
        try {
            settleLeftLocked();
            next = releaseLocked(node);
            clearLockedPathIfIdleLocked();
        } finally {
            lock.held = 0; // failure model, rule 2
        }
        if (next != null) {
            LockSupport.unpark(next.thread);
        }
    }

    /**
     * Under the lock: gives back {@code releasing}'s slot and execution permit, the permit to a lower limit that is
     * still owed one, else to the oldest waiter that has not left (returned, to be woken), else to the free ones.
     */
    @GuardedBy("lock")
    private @Nullable Node releaseLocked(Node releasing) {
        if (owed > 0) {
            add(-ONE_ADMITTED);
            owed--;
            withheld++;
            releasing.released = true;
            return null;
        }
        Node next = oldestWaiterLocked();
        if (next == null) {
            add(1 - ONE_ADMITTED);
            releasing.released = true;
            return null;
        }
        add(-ONE_ADMITTED); // the permit is not freed: it goes to next
        releasing.released = true;
        grantLocked(next);
        return next;
    }

    /** The head of the queue, after cancelling every queued node at the head whose owner left. */
    @GuardedBy("lock")
    private @Nullable Node oldestWaiterLocked() {
        Node n = head;
        while (n != null && n.left()) {
            cancelLocked(n);
            reclaimed++;
            n = head;
        }
        return n;
    }

    /** Moves the queue's head to the list of grants: it holds both permits once it acknowledges. */
    @GuardedBy("lock")
    private void grantLocked(Node node) {
        unlinkQueuedLocked(node);
        node.nextGranted = granted;
        granted = node;
        node.state = Node.GRANTED;
    }

    /**
     * Takes back every grant whose waiter left before acknowledging it (its permits go on as a release's do), and,
     * when a failure handler said someone left, every queued node whose owner left, wherever it is in the queue.
     */
    @GuardedBy("lock")
    private void settleLeftLocked() {
        reclaimLeftGrantsLocked();
        if (leaving) {
            leaving = false;
            for (Node n = head; n != null; ) {
                Node next = n.next;
                if (n.left()) {
                    cancelLocked(n);
                    reclaimed++;
                }
                n = next;
            }
        }
    }

    @GuardedBy("lock")
    private void reclaimLeftGrantsLocked() {
        Node n = granted;
        while (n != null) {
            Node following = n.nextGranted;
            if (n.left()) {
                unlinkGrantLocked(n);
                Node next = releaseLocked(n);
                n.state = Node.CANCELLED;
                reclaimed++;
                if (next != null) {
                    LockSupport.unpark(next.thread); // rare: under the lock, the woken waiter spins a moment
                }
            }
            n = following;
        }
    }

    /** Under the lock, a WAITING node leaves the queue and gives back its slot. */
    @GuardedBy("lock")
    private void cancelLocked(Node node) {
        add(-ONE_ADMITTED);
        unlinkQueuedLocked(node);
        node.state = Node.CANCELLED;
    }

    @GuardedBy("lock")
    private void unlinkQueuedLocked(Node node) {
        Node prev = node.prev;
        Node next = node.next;
        if (prev == null) {
            head = next;
        } else {
            prev.next = next;
        }
        if (next == null) {
            tail = prev;
        } else {
            next.prev = prev;
        }
        node.prev = null;
        node.next = null;
        waiting--;
    }

    @GuardedBy("lock")
    private void unlinkGrantLocked(Node node) {
        if (granted == node) {
            granted = node.nextGranted;
        } else {
            for (Node n = granted; n != null; n = n.nextGranted) {
                if (n.nextGranted == node) {
                    n.nextGranted = node.nextGranted;
                    break;
                }
            }
        }
        node.nextGranted = null;
    }

    /** Clears the locked-path bit once nobody is queued, nothing is owed and every grant was acknowledged. */
    @GuardedBy("lock")
    private void clearLockedPathIfIdleLocked() {
        if (head != null || owed != 0 || granted != null) {
            return;
        }
        while (true) {
            long s = state;
            if ((s & LOCKED_PATH) == 0 || STATE.compareAndSet(this, s, s & ~LOCKED_PATH)) {
                return;
            }
        }
    }

    /**
     * Settles every queued caller and unacknowledged grant whose owner left, wherever it is in the queue. For a
     * reclaimer that knows a thread is gone, for a caller refused while someone may have left, and for tests.
     */
    @SuppressWarnings("GuardedBy") // takes the lock; released by the write in its finally (QueueLock)
    void sweep() {
        lock.lock();
        try {
            leaving = true;
            settleLeftLocked();
            clearLockedPathIfIdleLocked();
        } finally {
            lock.held = 0; // failure model, rule 2
        }
    }

    /**
     * Sets the limit L (1 ≤ L ≤ B) on execution permits in use, and with it the admission slots to L + Q. Lowering
     * it takes free permits out of circulation at once and the rest from the next releases, before any waiter is
     * served; callers already holding permits or slots keep them. Raising it cancels what is still owed, then hands
     * withheld permits to the oldest waiters or frees them. No permit is lost or created. Serialise calls (one
     * controller per workload).
     */
    @SuppressWarnings("GuardedBy") // takes the lock; released by the write in its finally (QueueLock)
    void limit(int newLimit) {
        Node[] woken = NONE;
        int handed = 0;
        lock.lock();
        try {
            settleLeftLocked();
            int take = capacity - newLimit - withheld - owed; // > 0: withhold more; < 0: give back
            limit = newLimit;
            maxAdmitted = newLimit + extraSlots; // callers already admitted stay; new ones see the new bound
            if (take > 0) {
                withholdLocked(take);
            } else if (take < 0) {
                int give = -take;
                int cancelled = Math.min(owed, give);
                owed -= cancelled;
                give -= cancelled;
                woken = new Node[give];
                for (int i = 0; i < give; i++) {
                    withheld--;
                    Node next = oldestWaiterLocked();
                    if (next == null) {
                        add(1);
                    } else {
                        grantLocked(next);
                        woken[handed++] = next;
                    }
                }
            }
            clearLockedPathIfIdleLocked();
        } finally {
            lock.held = 0; // failure model, rule 2
        }
        for (int i = 0; i < handed; i++) {
            LockSupport.unpark(woken[i].thread);
        }
    }

    /** Under the lock: takes up to {@code count} free permits, and owes the rest (so every release locks). */
    @GuardedBy("lock")
    private void withholdLocked(int count) {
        while (true) {
            long s = state;
            int taken = Math.min(free(s), count);
            long updated = s - taken;
            if (taken < count) {
                updated |= LOCKED_PATH;
            }
            if (STATE.compareAndSet(this, s, updated)) {
                withheld += taken;
                owed += count - taken;
                return;
            }
        }
    }

    /** B: the execution permits this structure was built with. */
    int concurrent() {
        return concurrent;
    }

    /** The most the limit may be raised to: B, or more for a workload that borrows. */
    int capacity() {
        return capacity;
    }

    /** Q: the admission slots beyond the limit. */
    int extraSlots() {
        return extraSlots;
    }

    /** The limit L on execution permits in use: B unless lowered by {@link #limit(int)}. */
    int limit() {
        return limit;
    }

    /** Execution permits a lower limit still takes from the next releases: until then, more than L may hold. */
    int owed() {
        return owed;
    }

    /** Free execution permits (0 while anyone waits). */
    int available() {
        return free(state);
    }

    /** Free admission slots. */
    int availableSlots() {
        return Math.max(0, maxAdmitted - admitted(state)); // < 0 just after L was lowered: none free
    }

    /** Operations holding a slot: executing, granted or waiting. */
    int admitted() {
        return admitted(state);
    }

    /** Operations holding (or granted) an execution permit (a racy sum of two fields: for observation). */
    int executing() {
        return Math.max(0, capacity - free(state) - withheld);
    }

    /** Callers queued for an execution permit. */
    int waiting() {
        return waiting;
    }

    /** Queued callers and grants taken back because their thread left without settling, since the start. */
    long reclaimed() {
        return reclaimed;
    }
}
