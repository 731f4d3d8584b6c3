package dev.dbbulkhead.internal;

import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.Workload;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Both permits of one workload, owned by the thread that acquired them, and that caller's node in the permit queue
 * (so nothing needs allocating once a permit is taken). Admission hands it out and takes it back;
 * the lease itself only keeps what one operation needs: its deadline, when its permit was granted, whether its
 * transaction failed with an overload signal, and how far its release got.
 *
 * <p>A lease handed to a caller ({@code acquire()}) is used once. The one inside {@code transaction()}, which no
 * caller ever sees, is the thread's spare, reset for each operation: no allocation on the hot path.
 *
 * <p>Used by its owner thread only; {@link #close()} from another thread is refused.
 */
final class PermitLease extends Permits.Node implements Lease {
    /** What a lease tells the admission that granted it; the lease never calls further up. */
    interface Owner {
        Workload workload();

        /** Gives the lease's permits back; its {@link #release()} marked it closing first. */
        void release(PermitLease lease);

        /** Settles whatever the lease still holds, whatever state a failure left it in; idempotent. */
        void abandon(PermitLease lease);

        /**
         * Takes back the permits of a lease never released: its thread terminated ({@code threadEnded}), or, still
         * alive, it found the lease leaked on its next call.
         */
        void reclaim(PermitLease lease, boolean threadEnded);

        /** The lease's transaction failed with an overload signal ({@link Overload}); once per operation. */
        void overloaded(Throwable signal);

        /**
         * The first statement of the lease's transaction, {@code sql}, is about to be sent: its kind may be refined by
         * the statement's shape, and the operation refused if that kind is at its cap ({@link Kinds#refine}).
         */
        default void firstStatement(PermitLease lease, String sql, boolean mysql) {}
    }

    private final boolean forCaller;
    private Owner owner;
    private @Nullable Deadline deadline;
    private boolean timed;
    /** Set by admission for an operation that reads the clock; stale (and never read) for one that does not. */
    private long permitWaitNanos;
    /** As {@link #permitWaitNanos}. */
    private long grantedAt;

    private boolean overloaded;
    /** Release began: if permits are still held, it was cut short (a stack overflow) and is finished later. */
    private boolean closing;
    /** The kind of operation it was admitted as, until it leaves it; null without kinds, or once it left. */
    Kinds.@Nullable Kind kind;
    /** Whether it is counted inside {@link #kind} (admitted while the workload was contended). */
    boolean kindCounted;
    /** Whether its kind is a call site's, which its first statement's shape may refine. */
    boolean refinable() {
        Kinds.Kind k = kind;
        return k != null && k.callSite;
    }

    /** See {@link Owner#firstStatement}. */
    void firstStatement(String sql, boolean mysql) {
        owner.firstStatement(this, sql, mysql);
    }

    /** The name of the kind it was admitted as, for the flight recorder; null without one. */
    @Nullable
    String kindName() {
        Kinds.Kind k = kind;
        return k == null ? null : k.name;
    }

    /** Leak detection's watch, for a caller's lease when the barrier has a threshold; else null. */
    Leaks.@Nullable Watch watch;
    /** {@link #closeWhenComplete}: 0 the owner releases, 1 the stage will, 2 the stage did. */
    private volatile int handedOff;

    private static final VarHandle HANDED_OFF;

    static {
        try {
            HANDED_OFF = MethodHandles.lookup().findVarHandle(PermitLease.class, "handedOff", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Built before any permit is taken: a failure to allocate it then holds nothing. */
    PermitLease(Owner owner, @Nullable Deadline deadline, boolean timed, boolean forCaller) {
        super(Thread.currentThread());
        this.forCaller = forCaller;
        this.owner = owner;
        this.deadline = deadline;
        this.timed = timed;
    }

    /** For another {@code transaction()} of the same thread, once the previous one has fully ended. */
    @SuppressWarnings("ReferenceEquality") // only a different object is written; an equal one would do as well
    void reset(Owner owner, @Nullable Deadline deadline, boolean timed) {
        // Only what changed is written: the owner writes its lease on every operation, and fewer stores are fewer
        // chances for a cache line shared with another thread's data to bounce.
        if (this.owner != owner) {
            this.owner = owner;
        }
        if (this.deadline != deadline) {
            this.deadline = deadline;
        }
        if (this.timed != timed) {
            this.timed = timed;
        }
        if (overloaded) {
            overloaded = false;
        }
        closing = false;
        renew();
    }

    /** Both permits are now held, after waiting {@code permitWaitNanos}. Field writes only. */
    void granted(long permitWaitNanos, long now) {
        this.permitWaitNanos = permitWaitNanos;
        this.grantedAt = now;
    }

    long grantedAt() {
        return grantedAt;
    }

    boolean forCaller() {
        return forCaller;
    }

    boolean overloaded() {
        return overloaded;
    }

    Owner owner() {
        return owner;
    }

    /** Whether this operation reports its durations (a listener or a flight recording wants them). */
    boolean timed() {
        return timed;
    }

    /** The deadline, or {@code null}. */
    @Nullable
    Deadline deadlineOrNull() {
        return deadline;
    }

    @Override
    public void transactionFailed(Throwable failure) {
        if (failure == null || overloaded || !Overload.signalled(failure)) {
            return; // once per operation
        }
        overloaded = true;
        owner.overloaded(failure);
    }

    @Override
    public Workload workload() {
        return owner.workload();
    }

    @Override
    public long permitWaitNanos() {
        return permitWaitNanos;
    }

    @Override
    public Optional<Deadline> deadline() {
        return Optional.ofNullable(deadline);
    }

    @Override
    public void close() {
        checkOwner();
        if (handedOff == 0) {
            release();
        }
    }

    private void checkOwner() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("db-bulkhead '" + workload().bulkheadName() + "', workload '"
                    + workload().name() + "': a lease is released by the thread that acquired it ("
                    + thread + "), not by " + Thread.currentThread() + "; nothing was released");
        }
    }

    @Override
    public void closeWhenComplete(CompletionStage<?> stage) {
        Preconditions.notNull(stage, "stage");
        checkOwner();
        if (released || handedOff != 0) {
            return;
        }
        handedOff = 1;
        stage.whenComplete((value, failure) -> {
            if (HANDED_OFF.compareAndSet(this, 1, 2)) {
                transactionFailed(failure);
                release();
            }
        });
    }

    /** Whether a stage, not the owner, releases this lease ({@link #closeWhenComplete}). */
    boolean handedOff() {
        return handedOff != 0;
    }

    /** Gives both permits back, once; see the failure model in {@code package-info}. */
    void release() {
        if (released) { // the field, not released(): no call before closing is set
            return;
        }
        closing = true; // a field write before any call
        owner.release(this);
    }

    /**
     * A release cut short (a stack overflow in {@link #release()}), or an admission that failed so after taking
     * permits ({@link Permits.Node#abandoned}), is finished by the thread's next call to the barrier, at whatever
     * depth that is, instead of being taken for re-entry. Idempotent, as {@link Permits#abandon} is.
     *
     * @return true when this lease was cut short and now holds nothing
     */
    boolean settleCutShort() {
        if (!closing && !abandoned) {
            return false;
        }
        owner.abandon(this);
        return true;
    }

    @Override
    public String toString() {
        return "Lease[" + workload().bulkheadName() + "/" + workload().name() + (released() ? ", released" : ", held")
                + "]";
    }
}
