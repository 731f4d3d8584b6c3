/**
 * The implementation behind the API package, not exported by the module and not part of the API. Anything here may
 * change in any release.
 *
 * <h2>Layout: who owns what</h2>
 * <ul>
 * <li>{@code Admission}, one per workload: its {@code Permits}, its {@code Controls} (chosen once: what it predicts,
 * learns and is allowed; {@code ConfiguredControls}: the {@code Door} and its {@code Drain}, the {@code AdaptiveLimit},
 * its share under the {@code Arbiter}, its {@code Kinds} of operation), leak detection ({@code Leaks}) and the
 * lifecycle of its leases: admit, hand out, release, reclaim. Every rejection is made here, from a {@code Snapshot} of
 * the workload, by the barrier's {@code Rejections} (implemented in the API package, whose exceptions' constructors are
 * not public).</li>
 * <li>{@code Permits}: the slots, the execution permits, the queue of waiters and the hand-shake of a grant, in one
 * state word; the limit L.</li>
 * <li>{@code PermitLease}: one operation's permits, its node in the queue, its deadline; nothing else.</li>
 * <li>{@code Frames}, one per barrier: per thread, the lease it took last (re-entry is refused) and the spare lease
 * that {@code transaction()} reuses; a cleaner that reclaims what a terminated thread left holding.</li>
 * <li>{@code TransactionRunner}, one per barrier: the JDBC transaction inside a lease, as short steps (open, begin,
 * work, commit, clean up); it never touches permits and tells the lease only what the transaction failed with.</li>
 * <li>{@code GuardedConnection} and the generated {@code Guarded*} statement, result set and metadata wrappers
 * ({@code GuardedJdbc}); {@code TransactionControl}; {@code ServerTimeouts} (the deadline on the server and on the
 * socket).</li>
 * <li>{@code BarrierClock}, one per barrier with a workload that adapts, shares or learns kinds: every workload's
 * periodic work, in one order, on the scheduler's thread.</li>
 * <li>{@code Telemetry}: listeners ({@code SafeListener}), flight-recorder events ({@code JfrEvents}), the clock.</li>
 * </ul>
 *
 * <h2>Failure model</h2>
 * Any call can throw an {@link java.lang.Error} that the code did not ask for: a {@link StackOverflowError} (a caller
 * near its stack limit, a listener), an {@link OutOfMemoryError}, an error from a listener. A field write, a CAS that
 * was already linked, and a {@code catch} handler's first statements cannot. So:
 * <ol>
 * <li><b>Nothing is taken before its owner can give it back.</b> A lease is allocated, and made the thread's current
 * one, before any permit is taken; a node takes a slot and its place in the queue in one locked step, so a node
 * holding a slot alone is always in the queue, where others find it.</li>
 * <li><b>The queue lock is given back by a field write</b> ({@code lock.held = 0} in {@code finally}), never by a
 * call;
 * inside it, the CAS on the state word comes first and only field writes follow, so a failure either changes nothing
 * or has finished the change.</li>
 * <li><b>Every settlement is idempotent</b> ({@code Permits.abandon}, {@code exit} through {@code released}), so that
 * whoever settles a node a second time (a retry, a reclaimer) does nothing.</li>
 * <li><b>A failure handler writes before it calls.</b> Admission's handler marks the lease {@code abandoned} (a field
 * write, the one place admission writes a lease field below it: nothing else can come before a call), then tells the
 * permits it left ({@code Permits.leave}: the queue is swept for it) and abandons it; a release marks the lease
 * {@code closing} before calling down. If a call fails too, the state says so.</li>
 * <li><b>Whoever finds a node whose owner left settles it</b>: the next locked operation (a release skips waiters
 * that left and takes back grants they never acknowledged; with {@code leaving} set, it sweeps the whole queue), a
 * newcomer refused for want of a slot (it sweeps first), the owner's own next call ({@code Frames.enter} settles a
 * lease cut short instead of refusing it as re-entry), and, once the owner's thread has terminated, the reclaimer of
 * {@code Frames}. A node "left" when it is {@code abandoned} or its thread is no longer alive.</li>
 * <li><b>Classes a failure needs are initialised when the barrier is built</b> (rejection reasons, outcomes, stages):
 * a class whose initialisation fails stays unusable for the JVM's lifetime.</li>
 * </ol>
 * A kind of operation counts the operations inside it; the lease names the kind it entered ({@code kind}) and admission
 * clears that field before it tells the kind the operation left, on every path (granted and released, refused after
 * entering, abandoned, reclaimed), so that each operation leaves its kind once. A leave a failure cut short is
 * finished with the lease's permits: the lease still names its kind, and whoever settles the lease (rule 5) leaves it.
 * Out of scope: a caller whose own code, between acquiring a lease and closing it, used up its stack so that
 * {@code close()} cannot even start; its permits come back only when its thread ends. Tests of this model:
 * {@code PermitsModelCheckTest} (Lincheck, every interleaving, with waiters that leave), {@code PermitsLeavingTest},
 * {@code StackOverflowWhileWaitingTest}, {@code DeadWaitersTest}, {@code LeakedLeasesTest}.
 */
@NullMarked
package dev.dbbulkhead.internal;

import org.jspecify.annotations.NullMarked;
