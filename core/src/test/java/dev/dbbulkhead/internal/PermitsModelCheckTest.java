package dev.dbbulkhead.internal;

import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Model checking of the permit logic with Lincheck: every interleaving of small concurrent scenarios over
 * {@code enter} (no wait), {@code enter} then {@code await(0)} (which queues, may be handed a permit, and settles
 * a grant racing its timeout), {@code exit}, and {@code limit(L)} (an adaptive limit lowered or raised while others
 * hold and wait), checked for linearizability against this class run sequentially; and, in a model of its own checked
 * for conservation only, {@code enter} then {@code abandon} twice (a wait that failed half-way, settled again by a
 * retry) and {@code enter} then leaving the queue without settling (a waiter whose thread is gone, which the grant's
 * hand-shake must take back without its help): a queued node granted a permit holds it until it abandons or is found,
 * and refuses others meanwhile, which no sequential order of atomic operations shows. After each scenario: every
 * permit and slot back but those still held (with waiters that failed or left: once the holders released and one more
 * caller came, who must get the permit), the free permits and slots exactly what the limit leaves (L and L + Q),
 * nobody left queued.
 *
 * <p>A permit belongs to the thread that took it: {@code exit(tid)} releases one only if thread {@code tid} holds
 * one, and each thread keeps its own count (Lincheck passes the thread id), so that the test's bookkeeping never
 * races across threads. Results are "acquired" or "refused". Which refusal (admission full or timed out) a caller
 * sees depends on waiters that are only passing through, as with the article's two semaphores, and no sequential specification
 * can tell those apart; the contract tests check the reasons.
 */
@Tag("no-db")
public class PermitsModelCheckTest {
    private static final int THREADS = 3;

    /** The scenario's state: one permit structure, and what each thread holds of it. */
    abstract static class State {
        private final int b;
        private final int q;
        final Permits permits;

        State(int b, int q) {
            this.b = b;
            this.q = q;
            this.permits = new Permits(b, q);
        }

        /** Permits held per thread id (parallel threads, plus Lincheck's initial and post parts), each slot written
         * by its own thread only. */
        private final int[] held = new int[THREADS + 2];

        /** Per thread id, the nodes that hold permits, oldest first. */
        @SuppressWarnings("unchecked")
        private final java.util.ArrayDeque<Permits.Node>[] nodes = new java.util.ArrayDeque[THREADS + 2];

        {
            for (int i = 0; i < nodes.length; i++) {
                nodes[i] = new java.util.ArrayDeque<>();
            }
        }

        /**
         * Records a permit taken by thread {@code tid}.
         *
         * @return "acquired" or "refused"
         */
        String acquired(int tid, boolean acquired, Permits.Node node) {
            if (acquired) {
                held[tid]++;
                nodes[tid].add(node);
            }
            return acquired ? "acquired" : "refused";
        }

        /** Gives back the oldest permit thread {@code tid} holds; false when it holds none. */
        boolean exitOldest(int tid) {
            var node = nodes[tid].poll();
            if (node == null) {
                return false;
            }
            held[tid]--;
            permits.exit(node);
            return true;
        }

        /** Gives back, from the validating thread, every permit the scenario's threads still hold. */
        final void releaseEverythingHeld() {
            for (int tid = 0; tid < nodes.length; tid++) {
                for (var node = nodes[tid].poll(); node != null; node = nodes[tid].poll()) {
                    held[tid]--;
                    permits.exit(node);
                }
            }
        }

        /** Each model's {@code @Validate}: Lincheck takes an inherited validation function for two. */
        final void everythingBackButWhatIsHeld() {
            int h = java.util.Arrays.stream(held).sum();
            int free = Math.max(0, permits.limit() - h);
            check(
                    permits.available() == free,
                    "free execution permits " + permits.available() + ", held " + h + ", limit " + permits.limit());
            int slots = Math.max(0, permits.limit() + q - h);
            check(permits.availableSlots() == slots, "free slots " + permits.availableSlots() + ", held " + h);
            check(permits.waiting() == 0, "still queued: " + permits.waiting());
            check(permits.executing() == h, "executing " + permits.executing() + ", held " + h);
        }

        static void check(boolean ok, String what) {
            if (!ok) {
                throw new IllegalStateException(what);
            }
        }
    }

    /** The operations of the linearizability models. */
    abstract static class Model extends State {
        Model(int b, int q) {
            super(b, q);
        }

        @Operation
        public String enterNoWait(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            return acquired(tid, permits.enter(node, false) == Permits.Entry.ACQUIRED, node);
        }

        @Operation
        public String enterAndAwaitZero(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            return acquired(tid, Waits.acquire(permits, node, 0), node);
        }

        @Operation
        public boolean exit(@Param(gen = ThreadIdGen.class) int tid) {
            return exitOldest(tid);
        }
    }

    /** B = 1, Q = 1: admission full, queueing, hand-off and abandon in every interleaving. */
    public static class Fixed extends Model {
        public Fixed() {
            super(1, 1);
        }

        @Validate
        public void validate() {
            everythingBackButWhatIsHeld();
        }
    }

    /**
     * With an adaptive limit: B = 2, lowered to 1 and raised to 2 while others hold and wait. Q = 3 (as many as the
     * threads), so that admission is never full: with a free permit, a slot taken by a caller only passing through
     * would otherwise refuse a caller that no sequential order refuses (as {@code exit} can too once B > 1).
     */
    @Param(name = "limit", gen = IntGen.class, conf = "1:2")
    public static class WithLimit extends Model {
        public WithLimit() {
            super(2, THREADS);
        }

        @Validate
        public void validate() {
            everythingBackButWhatIsHeld();
        }

        /** One controller moves the limit: Lincheck's threads stand for its successive decisions. */
        @Operation
        public synchronized int limit(@Param(name = "limit") int limit) {
            permits.limit(limit);
            return limit;
        }
    }

    /**
     * Waiters that fail half-way or leave without settling, beside ordinary callers, B = 1, Q = 2. A grant made to a
     * waiter in the instant before it abandons or leaves is out of circulation until it or the next locked operation
     * takes it back, which no sequential order shows: so this model checks conservation only (every result is "done"), in every
     * interleaving: its operations return nothing.
     */
    public static class Leaving extends State {
        public Leaving() {
            super(1, 2);
        }

        /** A caller that takes a permit if one is free and holds it. */
        @Operation
        public void hold(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            acquired(tid, permits.enter(node, false) == Permits.Entry.ACQUIRED, node);
        }

        @Operation
        public void release(@Param(gen = ThreadIdGen.class) int tid) {
            exitOldest(tid);
        }

        /**
         * No sweep: the holders give their permits back, then one more caller comes; those two steps alone must
         * bring back whatever the waiters that left were granted or held (a slot of theirs must not refuse the
         * newcomer), and the newcomer must get the permit.
         */
        @Validate
        public void validate() throws InterruptedException {
            releaseEverythingHeld();
            var newcomer = new Permits.Node(Thread.currentThread());
            check(
                    Waits.acquire(permits, newcomer, 0),
                    "the next caller is refused: free " + permits.available() + ", slots " + permits.availableSlots()
                            + ", waiting " + permits.waiting());
            permits.exit(newcomer);
            everythingBackButWhatIsHeld();
        }

        /**
         * A caller whose wait fails half-way (a stack overflow) and abandons its node, twice (a retry of the clean-up).
         * A queued node that an {@code exit} granted holds the permit until it abandons and refuses others meanwhile,
         * which no sequential order with this operation atomic shows: so it is checked here, for conservation.
         */
        @Operation
        public void enterAndAbandon(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            var entry = Waits.enterAndQueue(permits, node);
            if (entry == Permits.Entry.MUST_WAIT) {
                permits.abandon(node);
                permits.abandon(node);
                return;
            }
            acquired(tid, entry == Permits.Entry.ACQUIRED, node);
        }

        /** A caller that waits for nothing: it may queue, be handed a permit, and settle a grant racing its timeout. */
        @Operation
        public void holdAfterAwaitZero(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            acquired(tid, Waits.acquire(permits, node, 0), node);
        }

        /**
         * A waiter whose thread leaves without settling (a stack overflow cut its clean-up short, or the thread
         * died): it queues, then only marks its node abandoned and never calls again. Whatever it was granted or holds
         * must come back without its help, through the next release, queueing or limit change (the hand-shake), and
         * at the latest through a sweep, which the validation runs first. A permit it got without waiting it keeps
         * (a holder that dies is the reclaimer's case, not the queue's).
         */
        @Operation
        public void enterAndLeave(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            var entry = Waits.enterAndQueue(permits, node);
            if (entry == Permits.Entry.MUST_WAIT) {
                node.abandoned = true; // what admission's failure handler writes, and nothing more
                permits.leaving = true;
                return;
            }
            acquired(tid, entry == Permits.Entry.ACQUIRED, node);
        }
    }

    /** Scenarios per run: a short run in every build, the full one with {@code -Pfull} (CI runs both). */
    private static final int ITERATIONS = Integer.getInteger("modelcheck.iterations", 4);
    /** Interleavings per scenario: fewer in every build, 2,000 with {@code -Pfull}. */
    private static final int INVOCATIONS = Integer.getInteger("modelcheck.invocations", 500);

    @Test
    public void modelChecking() {
        modelCheck(Fixed.class);
    }

    @Test
    public void modelCheckingWithLimitChanges() {
        modelCheck(WithLimit.class);
    }

    @Test
    public void modelCheckingWithWaitersThatLeave() {
        modelCheck(Leaving.class);
    }

    @Test
    public void stressWithWaitersThatLeave() {
        stress(Leaving.class);
    }

    @Test
    public void stress() {
        stress(Fixed.class);
    }

    @Test
    public void stressWithLimitChanges() {
        stress(WithLimit.class);
    }

    private static void modelCheck(Class<?> model) {
        new ModelCheckingOptions()
                .threads(THREADS)
                .actorsPerThread(3)
                .iterations(ITERATIONS)
                .invocationsPerIteration(INVOCATIONS)
                .check(model);
    }

    /** The stress runs (real threads, no model) only with {@code -Pfull}: the model check covers more, sooner. */
    private static void stress(Class<?> model) {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                Boolean.getBoolean("modelcheck.stress"), "stress runs only with -Pfull");
        new StressOptions()
                .threads(THREADS)
                .actorsPerThread(4)
                .iterations(ITERATIONS)
                .invocationsPerIteration(2_000)
                .check(model);
    }
}
