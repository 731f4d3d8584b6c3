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
 * a grant racing its timeout), {@code enter} then {@code abandon} twice (a wait that failed half-way, settled again
 * by a retry), {@code exit}, and {@code limit(L)} (an adaptive limit lowered or raised while others hold and wait),
 * checked for linearizability against this class run sequentially, and, after each, for conservation: every permit
 * and slot back but those still held, the free permits and slots exactly what the limit leaves (L and L + Q), nobody
 * left queued.
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
    abstract static class Model {
        private final int b;
        private final int q;
        final Permits permits;

        Model(int b, int q) {
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

        private String acquired(int tid, int result, Permits.Node node) {
            if (result == Permits.ACQUIRED) {
                held[tid]++;
                nodes[tid].add(node);
                return "acquired";
            }
            return "refused";
        }

        @Operation
        public String enterNoWait(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            return acquired(tid, permits.enter(node, false), node);
        }

        @Operation
        public String enterAndAwaitZero(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            int r = permits.enter(node, true);
            if (r == Permits.MUST_WAIT) {
                r = permits.await(node, 0);
            }
            return acquired(tid, r, node);
        }

        /** A caller whose wait fails half-way (a stack overflow) and abandons its node, possibly twice. */
        @Operation
        public String enterAndAbandon(@Param(gen = ThreadIdGen.class) int tid) throws InterruptedException {
            var node = new Permits.Node(Thread.currentThread());
            int r = permits.enter(node, true);
            if (r == Permits.MUST_WAIT) {
                permits.abandon(node);
                permits.abandon(node);
                return "refused";
            }
            return acquired(tid, r, node);
        }

        @Operation
        public boolean exit(@Param(gen = ThreadIdGen.class) int tid) {
            var node = nodes[tid].poll();
            if (node == null) {
                return false;
            }
            held[tid]--;
            permits.exit(node);
            return true;
        }

        /** Each model's {@code @Validate}: Lincheck takes an inherited validation function for two. */
        final void everythingBackButWhatIsHeld() {
            int h = java.util.Arrays.stream(held).sum();
            int free = Math.max(0, permits.limit() - h);
            check(permits.available() == free, "free execution permits " + permits.available() + ", held " + h
                    + ", limit " + permits.limit());
            int slots = Math.max(0, permits.limit() + q - h);
            check(permits.availableSlots() == slots, "free slots " + permits.availableSlots() + ", held " + h);
            check(permits.waiting() == 0, "still queued: " + permits.waiting());
            check(permits.executing() == h, "executing " + permits.executing() + ", held " + h);
        }

        private static void check(boolean ok, String what) {
            if (!ok) {
                throw new IllegalStateException(what);
            }
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
    public void stress() {
        stress(Fixed.class);
    }

    @Test
    public void stressWithLimitChanges() {
        stress(WithLimit.class);
    }

    private static void modelCheck(Class<?> model) {
        new ModelCheckingOptions().threads(THREADS).actorsPerThread(3).iterations(ITERATIONS)
                .invocationsPerIteration(INVOCATIONS).check(model);
    }

    private static void stress(Class<?> model) {
        new StressOptions().threads(THREADS).actorsPerThread(4).iterations(ITERATIONS)
                .invocationsPerIteration(2_000).check(model);
    }
}
