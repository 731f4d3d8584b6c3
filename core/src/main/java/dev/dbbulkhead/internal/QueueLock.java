package dev.dbbulkhead.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

/**
 * The permit queue's lock. Not a {@code ReentrantLock}: its {@code unlock()} is a call that a stack overflow can
 * interrupt before the lock is free, leaving every later caller stuck. This one is taken by a CAS (a failure there
 * takes nothing) and given back by a plain volatile write ({@code lock.held = 0}, in {@code finally}), which cannot
 * fail; {@link #unlock()} exists for the interface and is the same write. The sections it guards are a few field writes
 * and CASes and never block; a waiter spins briefly, then yields, then parks for a microsecond at a time, so a waiting
 * virtual thread never pins its carrier.
 *
 * <p>A {@link Lock} so that the compiler knows where it is held: Error Prone checks every {@code @GuardedBy("lock")}
 * field of {@link Permits} against the sections between {@code lock.lock()} and their {@code finally}. Only
 * {@link #lock()} and the release are used; not reentrant.
 */
final class QueueLock implements Lock {
    private static final VarHandle HELD;

    static {
        try {
            HELD = MethodHandles.lookup().findVarHandle(QueueLock.class, "held", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** 1 while held; released by writing 0 (failure model, rule 2). */
    volatile int held;

    @Override
    @SuppressWarnings("ThreadPriorityCheck") // a yield between spinning and parking, deliberately
    public void lock() {
        int spins = 0;
        while (!HELD.compareAndSet(this, 0, 1)) {
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

    @Override
    public void unlock() {
        held = 0;
    }

    @Override
    public boolean tryLock() {
        return HELD.compareAndSet(this, 0, 1);
    }

    @Override
    public void lockInterruptibly() {
        throw new UnsupportedOperationException("the queue lock is only taken by lock()");
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) {
        throw new UnsupportedOperationException("the queue lock is only taken by lock()");
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("the queue lock has no conditions");
    }
}
