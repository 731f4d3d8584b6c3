package dev.dbbulkhead.internal;

/** The three steps of a caller that may wait (enter, queue, await), for tests that drive {@link Permits} directly. */
public final class Waits {
    private Waits() {}

    /** {@code enter}, then {@code queue} if it must wait: ACQUIRED, FULL, BUSY, or MUST_WAIT (queued). */
    public static Permits.Entry enterAndQueue(Permits permits, Permits.Node node) throws InterruptedException {
        var entry = permits.enter(node, true);
        return entry == Permits.Entry.MUST_WAIT ? permits.queue(node) : entry;
    }

    /** Whether {@code node} got both permits within {@code nanos}. */
    public static boolean acquire(Permits permits, Permits.Node node, long nanos) throws InterruptedException {
        var entry = enterAndQueue(permits, node);
        return entry == Permits.Entry.ACQUIRED
                || entry == Permits.Entry.MUST_WAIT && permits.await(node, nanos) == Permits.Entry.ACQUIRED;
    }
}
