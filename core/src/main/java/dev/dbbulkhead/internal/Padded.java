package dev.dbbulkhead.internal;

/**
 * Superclasses that keep hot fields off the cache lines of their neighbours: the JVM lays out a superclass's fields
 * before a subclass's, so 128 bytes of padding (two lines, for the adjacent-line prefetch) in a superclass separate a
 * subclass's fields from whatever object lies before it in memory.
 *
 * <p>Why: a permit node's owner writes its fields on every operation, and two threads' nodes moved side by side by
 * the garbage collector shared a line (a JMH run of the transaction path at 2 threads varied by ± 120 ns, 178 ns
 * against 89 ns padded); the permits' state word, written by every CAS, must share a line neither with the objects
 * allocated around it (the workload's, read on every operation) nor with the permits' own fields that change only with
 * the limit.
 */
final class Padded {
    private Padded() {}

    /** 128 bytes before the subclass's fields. */
    @SuppressWarnings("unused")
    abstract static class Line {
        private long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;
    }

    /** {@code Permits}' state word, with padding before it. */
    abstract static class State extends Line {
        /** See {@code Permits}: written by CAS through its VarHandle, read as a volatile. */
        volatile long state;
    }

    /** The state word with padding after it too, before {@code Permits}' own fields. */
    @SuppressWarnings("unused")
    abstract static class StateWord extends State {
        private long q00, q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15;
    }
}
