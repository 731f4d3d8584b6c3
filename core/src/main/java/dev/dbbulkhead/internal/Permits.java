package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The two permits of a workload in one state word: B + Q admission slots, taken without waiting, and B execution
 * permits, waited for in arrival order. Same contract as the article's pair of semaphores (a plain
 * {@code tryAcquire()} on the slots, a timed {@code tryAcquire} on a fair semaphore of B), at the cost of one CAS
 * to enter and one to leave when nobody waits.
 *
 * <p>State word: bits 32–62 the admitted count (≤ B + Q), bit 31 "waiters queued", bits 0–30 the free execution
 * permits (≤ B). Invariants: the waiters bit is set exactly while the queue is non-empty, and then no execution
 * permit is free: a release hands its permit straight to the oldest waiter, so a newcomer can never overtake a
 * waiter. The queue and the bit change only under {@link #lock} (a {@link ReentrantLock}, so a waiting virtual
 * thread never pins its carrier); the counts change by CAS, with or without the lock.
 *
 * <p>A waiter whose wait ends (timeout or interrupt) settles under the lock with any concurrent grant: granted
 * and timed out, it keeps the permit; granted and interrupted, it hands the permit on before throwing. Either
 * way no permit is lost or created. Thread-safe.
 */
public final class Permits {
    /** {@link #enter} and {@link #await}: both permits are held; call {@link #exit()} exactly once. */
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

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(Permits.class, "state", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int concurrent;
    private final int maxAdmitted;
    private final ReentrantLock lock = new ReentrantLock();
    @SuppressWarnings("unused") // accessed through STATE
    private volatile long state;
    private Node head; // guarded by lock
    private Node tail; // guarded by lock
    private volatile int waiting; // written under lock

    /** A caller waiting for an execution permit. */
    private static final class Node {
        final Thread thread;
        volatile boolean granted;
        Node prev; // guarded by lock
        Node next; // guarded by lock

        Node(Thread thread) {
            this.thread = thread;
        }
    }

    /** {@code concurrent + extraSlots} must fit in an int (checked by the caller). */
    public Permits(int concurrent, int extraSlots) {
        this.concurrent = concurrent;
        this.maxAdmitted = concurrent + extraSlots;
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
    public int enter(boolean mayWait) throws InterruptedException {
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
                if (cas(s, s + ONE_ADMITTED - 1)) {
                    return ACQUIRED;
                }
            } else if (!mayWait) {
                return TIMED_OUT;
            } else if (cas(s, s + ONE_ADMITTED)) {
                return MUST_WAIT;
            }
            s = state;
        }
    }

    /**
     * After {@link #MUST_WAIT}: waits up to {@code nanos} for an execution permit, in arrival order.
     *
     * @return {@link #ACQUIRED} (both permits held) or {@link #TIMED_OUT} (the slot was released)
     * @throws InterruptedException when interrupted while waiting: the slot was released, nothing is held
     */
    public int await(long nanos) throws InterruptedException {
        var node = new Node(Thread.currentThread());
        lock.lock();
        try {
            while (true) {
                long s = state;
                if (free(s) > 0) { // freed between enter() and here; free > 0 means nobody is queued
                    if (cas(s, s - 1)) {
                        return ACQUIRED;
                    }
                } else if (cas(s, s | WAITERS)) {
                    break;
                }
            }
            link(node);
        } finally {
            lock.unlock();
        }
        long deadline = System.nanoTime() + nanos;
        try {
            while (true) {
                if (node.granted) {
                    return ACQUIRED;
                }
                if (Thread.interrupted()) {
                    settle(node, true);
                    throw new InterruptedException();
                }
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return settle(node, false);
                }
                LockSupport.parkNanos(this, remaining);
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Throwable unexpected) {
            settle(node, true); // leave nothing behind, whatever went wrong
            throw unexpected;
        }
    }

    /** After {@link #MUST_WAIT}, when the caller will not {@link #await} after all: gives back the slot. */
    public void leave() {
        while (true) {
            long s = state;
            if (cas(s, s - ONE_ADMITTED)) {
                return;
            }
        }
    }

    /** A waiter's wait ended: keep a permit granted meanwhile, or leave the queue and give back the slot. */
    private int settle(Node node, boolean interrupted) {
        lock.lock();
        try {
            if (node.granted) {
                if (!interrupted) {
                    return ACQUIRED;
                }
                exitLocked(); // hand the permit on and give back the slot before reporting the interrupt
                return TIMED_OUT;
            }
            unlink(node);
            while (true) {
                long s = state;
                long next = s - ONE_ADMITTED;
                if (head == null) {
                    next &= ~WAITERS;
                }
                if (cas(s, next)) {
                    return TIMED_OUT;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Releases both permits; the execution permit goes to the oldest waiter, if any. */
    public void exit() {
        while (true) {
            long s = state;
            if ((s & WAITERS) != 0) {
                lock.lock();
                try {
                    exitLocked();
                } finally {
                    lock.unlock();
                }
                return;
            }
            if (cas(s, s - ONE_ADMITTED + 1)) {
                return;
            }
        }
    }

    /** Under the lock: gives back the slot and hands the execution permit to the oldest waiter, if any. */
    private void exitLocked() {
        Node next = head;
        if (next != null) {
            unlink(next);
            next.granted = true;
        }
        while (true) {
            long s = state;
            long updated = next != null ? s - ONE_ADMITTED : s - ONE_ADMITTED + 1;
            if (head == null) {
                updated &= ~WAITERS;
            }
            if (cas(s, updated)) {
                break;
            }
        }
        if (next != null) {
            LockSupport.unpark(next.thread);
        }
    }

    private void link(Node node) {
        if (tail == null) {
            head = node;
        } else {
            tail.next = node;
            node.prev = tail;
        }
        tail = node;
        waiting++;
    }

    private void unlink(Node node) {
        if (node.prev == null) {
            head = node.next;
        } else {
            node.prev.next = node.next;
        }
        if (node.next == null) {
            tail = node.prev;
        } else {
            node.next.prev = node.prev;
        }
        node.prev = null;
        node.next = null;
        waiting--;
    }

    /** Free execution permits (0 while anyone waits). */
    public int available() {
        return free(state);
    }

    /** Free admission slots. */
    public int availableSlots() {
        return maxAdmitted - admitted(state);
    }

    /** Operations holding a slot: executing or waiting. */
    public int admitted() {
        return admitted(state);
    }

    /** Operations holding an execution permit. */
    public int executing() {
        return concurrent - free(state);
    }

    /** Callers queued for an execution permit. */
    public int waiting() {
        return waiting;
    }
}
