package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The two permits of a workload in one state word: B + Q admission slots, taken without waiting, and B execution
 * permits, waited for in arrival order. Same contract as the article's pair of semaphores (a plain
 * {@code tryAcquire()} on the slots, a timed {@code tryAcquire} on a fair semaphore of B), at the cost of one CAS
 * to enter and one to leave when nobody waits.
 *
 * <p>State word: bits 32–62 the admitted count (≤ B + Q), bit 31 "waiters queued", bits 0–30 the free execution
 * permits (≤ B). Invariants: the waiters bit is set exactly while the queue is non-empty, and then no execution
 * permit is free: a release hands its permit straight to the oldest waiter, so a newcomer can never overtake a
 * waiter. The queue and the bit change only under {@link #lock()}; the counts change by CAS, with or without it.
 *
 * <p>An adaptive limit L ≤ B ({@link #limit(int)}) takes execution permits out of circulation without losing or
 * creating any: free ones at once ("withheld"), held ones as they are released ("owed", served before any waiter,
 * with the waiters bit set so that every release takes the locked path). Raising L first cancels what is still
 * owed, then hands withheld permits to the oldest waiters or frees them. Always: free + held + withheld = B.
 *
 * <p>Each caller brings its own {@link Node}, allocated before it takes anything. A queued node's
 * {@link Node#state} changes once, under the lock: {@code WAITING} → {@code GRANTED} (a release handed it the
 * permit) or {@code WAITING} → {@code CANCELLED} (its wait ended). Unlinking it and giving back its slot happen only
 * on that change, so settling twice (a retry after a {@link StackOverflowError}, an interrupt racing a grant) is a
 * no-op. A call can throw (a stack overflow), a field write cannot: so every change is ordered so that a failure
 * at a call leaves a state that a retry (or the waiter's timeout) settles, never a slot given back twice or a node
 * left queued with nobody to settle it. Thread-safe.
 */
public final class Permits {
    /** {@link #enter} and {@link #await}: both permits are held; call {@link #exit} exactly once. */
    public static final int ACQUIRED = 0;
    /** {@link #enter}: all B + Q slots are taken; nothing is held. */
    public static final int ADMISSION_FULL = 1;
    /** {@link #enter} with no wait, or {@link #await}: no execution permit in time; nothing is held. */
    public static final int TIMED_OUT = 2;
    /** {@link #enter}: an admission slot is held and the caller must {@link #await} an execution permit. */
    public static final int MUST_WAIT = 3;

    private static final long ONE_ADMITTED = 1L << 32;
    private static final long WAITERS = 1L << 31;
    private static final long FREE = WAITERS - 1;
    private static final VarHandle STATE;
    private static final VarHandle LOCKED;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Permits.class, "state", long.class);
            LOCKED = MethodHandles.lookup().findVarHandle(Permits.class, "locked", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int concurrent;
    private final int extraSlots;
    /** L + Q: admission follows the limit, so that a lower L does not leave B − L more callers queued. */
    private volatile int maxAdmitted;
    @SuppressWarnings("unused") // accessed through STATE
    private volatile long state;
    /** The queue lock: 1 while held. See {@link #lock()}. */
    @SuppressWarnings("unused") // taken through LOCKED
    private volatile int locked;
    private Node head; // guarded by lock
    private Node tail; // guarded by lock
    private volatile int waiting; // written under lock
    private volatile int limit; // written under lock
    /** Execution permits taken out of circulation by a lower {@link #limit}; written under lock. */
    private volatile int withheld;
    /** Execution permits a lower limit still has to take, from the next releases; written under lock. */
    private volatile int owed;

    /**
     * One caller's claim, created before it takes anything and used by its thread only (but for the queue fields
     * and {@link #state}, which the lock guards).
     */
    public static class Node {
        static final int NEW = 0;
        static final int WAITING = 1;
        static final int GRANTED = 2;
        static final int CANCELLED = 3;

        static final int HOLDS_NOTHING = 0;
        static final int HOLDS_SLOT = 1;
        static final int HOLDS_BOTH = 2;

        final Thread thread;
        volatile int state; // written under lock
        /** What {@link Permits#enter} took for this node; written by the owner's thread only. */
        int holds;
        /** Both permits given back; written by the owner's exit, read by the owner. */
        boolean released;
        Node prev; // guarded by lock
        Node next; // guarded by lock

        public Node(Thread thread) {
            this.thread = thread;
        }

        /**
         * Whether this node's last operation fully ended: released, cancelled, or never took anything. A node left
         * otherwise (its settlement failed on a stack overflow) is never reused.
         */
        final boolean reusable() {
            int s = state;
            return released || s == CANCELLED || (s == NEW && holds == HOLDS_NOTHING);
        }

        /** Whether this node holds a permit or a slot now. */
        final boolean holding() {
            return holds != HOLDS_NOTHING && !released && state != CANCELLED;
        }

        /** Ready for another operation of the same thread; only once {@link #reusable()}. */
        final void renew() {
            if (state != NEW) {
                state = NEW;
            }
            holds = HOLDS_NOTHING;
            released = false;
        }

        /** True once {@link Permits#exit} (or an {@link Permits#abandon} of a granted node) gave everything back. */
        public final boolean released() {
            return released;
        }
    }

    /**
     * Takes the queue lock. Not a {@code ReentrantLock}: its {@code unlock()} is a call that a stack overflow can
     * interrupt before the lock is free, leaving every later caller stuck. This one is taken by a CAS (a failure
     * there takes nothing) and given back by a plain volatile write, which cannot fail. The sections it guards are a
     * few field writes and a CAS long, and never block; a waiter spins briefly, then yields, then parks for a
     * microsecond at a time, so a waiting virtual thread never pins its carrier. It is given back by {@code locked = 0}
 * written in place (in {@code finally}), never through a method.
     */
    private void lock() {
        int spins = 0;
        while (!LOCKED.compareAndSet(this, 0, 1)) {
            spins++;
            if (spins < 32) {
                Thread.onSpinWait();
            } else if (spins < 64) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(this, 1_000);
            }
        }
    }

    /** {@code concurrent + extraSlots} must fit in an int (checked by the caller). */
    public Permits(int concurrent, int extraSlots) {
        this.concurrent = concurrent;
        this.extraSlots = extraSlots;
        this.maxAdmitted = concurrent + extraSlots;
        this.limit = concurrent;
        this.state = concurrent;
    }

    private static int admitted(long s) {
        return (int) (s >>> 32);
    }

    private static int free(long s) {
        return (int) (s & FREE);
    }

    private boolean cas(long expected, long next) {
        return STATE.compareAndSet(this, expected, next);
    }

    /**
     * Takes an admission slot and, when one is free and nobody waits, an execution permit, without blocking.
     *
     * @param mayWait whether the caller will wait for an execution permit; if not, a busy barrier is
     *     {@link #TIMED_OUT} and no slot is taken
     * @return {@link #ACQUIRED}, {@link #ADMISSION_FULL}, {@link #TIMED_OUT} or {@link #MUST_WAIT}
     * @throws InterruptedException when the thread is interrupted (and slots were free): nothing is held
     */
    public int enter(Node node, boolean mayWait) throws InterruptedException {
        long s = state;
        if (admitted(s) >= maxAdmitted) {
            return ADMISSION_FULL;
        }
        // As Semaphore.tryAcquire(timeout): an interrupted caller is refused even when a permit is free.
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        while (true) {
            if (admitted(s) >= maxAdmitted) {
                return ADMISSION_FULL;
            }
            if (free(s) > 0) {
                if (STATE.compareAndSet(this, s, s + ONE_ADMITTED - 1)) {
                    node.holds = Node.HOLDS_BOTH; // no call between the CAS and here
                    return ACQUIRED;
                }
            } else if (!mayWait) {
                return TIMED_OUT;
            } else if (STATE.compareAndSet(this, s, s + ONE_ADMITTED)) {
                node.holds = Node.HOLDS_SLOT;
                return MUST_WAIT;
            }
            s = state;
        }
    }

    /**
     * After {@link #MUST_WAIT}: queues {@code node} and waits up to {@code nanos} for an execution permit, in
     * arrival order.
     *
     * @return {@link #ACQUIRED} (both permits held) or {@link #TIMED_OUT} (the slot was released)
     * @throws InterruptedException when interrupted while waiting: the slot was released, nothing is held
     * @throws StackOverflowError or any other unexpected throwable: the caller must {@link #abandon} the node
     */
    public int await(Node node, long nanos) throws InterruptedException {
        if (queue(node)) {
            return ACQUIRED;
        }
        long deadline = Nanos.saturatedAdd(System.nanoTime(), nanos);
        while (true) {
            if (node.state == Node.GRANTED) {
                return ACQUIRED;
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

    /** Takes a permit freed since {@link #enter} (true), or links the node at the tail of the queue. */
    private boolean queue(Node node) {
        lock();
        try {
            while (true) {
                long s = state;
                if (free(s) > 0) { // free > 0 means nobody is queued
                    if (cas(s, s - 1)) {
                        node.state = Node.GRANTED;
                        return true;
                    }
                } else if ((s & WAITERS) != 0 || cas(s, s | WAITERS)) {
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
            return false;
        } finally {
            locked = 0; // a field write, not a call: releasing the lock cannot fail
        }
    }

    private int timedOut(Node node) {
        lock();
        try {
            if (node.state == Node.GRANTED) {
                return ACQUIRED; // granted as the wait ended: keep it
            }
            cancelLocked(node);
            return TIMED_OUT;
        } finally {
            locked = 0; // a field write, not a call: releasing the lock cannot fail
        }
    }

    /**
     * Gives back whatever {@code node} holds, whatever state a failure (a stack overflow, an interrupt) left it in:
     * nothing if {@link #enter} took nothing, the slot if it never got a permit (leaving the queue if it was in it),
     * both permits (the execution permit handed on to the next waiter) if it held them. Idempotent.
     */
    public void abandon(Node node) {
        lock();
        try {
            if (node.released) {
                return;
            }
            int s = node.state;
            if (s == Node.WAITING) {
                cancelLocked(node);
            } else if (s == Node.GRANTED || (s == Node.NEW && node.holds == Node.HOLDS_BOTH)) {
                exitLocked(node);
            } else if (s == Node.NEW && node.holds == Node.HOLDS_SLOT) {
                settleLocked(-ONE_ADMITTED, null, Node.CANCELLED, null, 0);
                node.state = Node.CANCELLED;
            }
        } finally {
            locked = 0; // a field write, not a call: releasing the lock cannot fail
        }
    }

    /** Under the lock, a WAITING node leaves the queue and gives back its slot. */
    private void cancelLocked(Node node) {
        settleLocked(-ONE_ADMITTED, node, Node.CANCELLED, null, 0);
    }

    /** Releases both permits held by {@code node}; the execution permit goes to the oldest waiter, if any. */
    public void exit(Node node) {
        while (true) {
            long s = state;
            if ((s & WAITERS) != 0) {
                Node next;
                lock();
                try {
                    // exitLocked's steps, inlined: a lease is closed at the depth it was taken at.
                    int absorbed = owed > 0 ? 1 : 0;
                    next = absorbed == 0 ? head : null;
                    settleLocked(next != null || absorbed == 1 ? -ONE_ADMITTED : 1 - ONE_ADMITTED, next, Node.GRANTED,
                            node, absorbed);
                } finally {
                    locked = 0; // a field write, not a call: releasing the lock cannot fail
                }
                if (next != null) {
                    LockSupport.unpark(next.thread);
                }
                return;
            }
            // STATE directly, not cas(): one frame less, so that a lease closed at the depth it was taken at fits.
            if (STATE.compareAndSet(this, s, s - ONE_ADMITTED + 1)) {
                node.released = true;
                return;
            }
        }
    }

    /**
     * Under the lock: gives back the slot and the execution permit, to a lower limit that is still owed one, else to
     * the oldest waiter, if any.
     */
    private void exitLocked(Node releasing) {
        int absorbed = owed > 0 ? 1 : 0;
        Node next = absorbed == 0 ? head : null;
        settleLocked(next != null || absorbed == 1 ? -ONE_ADMITTED : 1 - ONE_ADMITTED, next, Node.GRANTED, releasing,
                absorbed);
        if (next != null) {
            LockSupport.unpark(next.thread); // a missed wake-up (a failure here) ends at the waiter's timeout
        }
    }

    /**
     * Under the lock, the one place where a queued node's state changes: adds {@code delta} to the state word (and
     * clears the waiters bit if the queue ends empty and no permit is owed to a lower limit), then, with field writes
     * only, moves {@code absorbed} (0 or 1) permits from owed to withheld, unlinks {@code node} (if not null), sets
     * its state, and marks {@code releasing} released. A failure (a stack overflow at the CAS) changes nothing; past
     * the CAS nothing can fail.
     */
    private void settleLocked(long delta, Node node, int nodeState, Node releasing, int absorbed) {
        boolean empties = (node == null ? head == null : head == node && node.next == null) && owed == absorbed;
        while (true) {
            long s = state;
            long updated = s + delta;
            if (empties) {
                updated &= ~WAITERS;
            }
            if (STATE.compareAndSet(this, s, updated)) {
                break;
            }
        }
        if (absorbed != 0) {
            owed -= absorbed;
            withheld += absorbed;
        }
        if (releasing != null) {
            releasing.released = true;
        }
        if (node == null) {
            return;
        }
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
        node.state = nodeState;
    }

    /**
     * Sets the limit L (1 ≤ L ≤ B) on execution permits in use, and with it the admission slots to L + Q. Lowering
     * it takes free permits out of circulation at once and the rest from the next releases, before any waiter is
     * served; callers already holding permits or slots keep them. Raising it cancels what is still owed, then hands
     * withheld permits to the oldest waiters or frees them. No permit is lost or created. Serialise calls (one
     * controller per instance).
     */
    public void limit(int newLimit) {
        Node[] granted = null;
        int handed = 0;
        lock();
        try {
            int take = concurrent - newLimit - withheld - owed; // > 0: withhold more; < 0: give back
            limit = newLimit;
            maxAdmitted = newLimit + extraSlots; // callers already admitted stay; new ones see the new bound
            if (take > 0) {
                withholdLocked(take);
            } else if (take < 0) {
                int give = -take;
                int cancelled = Math.min(owed, give);
                if (cancelled > 0) {
                    owed -= cancelled;
                    if (owed == 0 && head == null) {
                        clearWaitersLocked();
                    }
                }
                give -= cancelled;
                granted = new Node[give];
                for (int i = 0; i < give; i++) {
                    Node next = head;
                    settleLocked(next != null ? 0 : 1, next, Node.GRANTED, null, 0);
                    withheld--;
                    if (next != null) {
                        granted[handed++] = next;
                    }
                }
            }
        } finally {
            locked = 0; // a field write, not a call: releasing the lock cannot fail
        }
        for (int i = 0; i < handed; i++) {
            LockSupport.unpark(granted[i].thread);
        }
    }

    /** Under the lock: takes up to {@code count} free permits, and owes the rest (setting the waiters bit). */
    private void withholdLocked(int count) {
        while (true) {
            long s = state;
            int free = free(s);
            int taken = Math.min(free, count);
            long updated = s - taken;
            if (taken < count) {
                updated |= WAITERS; // no permit is free from here on: every release takes the locked path
            }
            if (cas(s, updated)) {
                withheld += taken;
                owed += count - taken;
                return;
            }
        }
    }

    private void clearWaitersLocked() {
        while (true) {
            long s = state;
            if ((s & WAITERS) == 0 || cas(s, s & ~WAITERS)) {
                return;
            }
        }
    }

    /** The limit L on execution permits in use: B unless lowered by {@link #limit(int)}. */
    public int limit() {
        return limit;
    }

    /** Execution permits a lower limit still takes from the next releases: until then, more than L may hold. */
    int owed() {
        return owed;
    }

    /** Free execution permits (0 while anyone waits). */
    public int available() {
        return free(state);
    }

    /** Free admission slots. */
    public int availableSlots() {
        return Math.max(0, maxAdmitted - admitted(state)); // < 0 just after L was lowered: none free
    }

    /** Operations holding a slot: executing or waiting. */
    public int admitted() {
        return admitted(state);
    }

    /** Operations holding an execution permit (a racy sum of two fields: for observation). */
    public int executing() {
        return Math.max(0, concurrent - free(state) - withheld);
    }

    /** Callers queued for an execution permit. */
    public int waiting() {
        return waiting;
    }
}
