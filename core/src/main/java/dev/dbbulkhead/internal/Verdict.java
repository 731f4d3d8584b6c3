package dev.dbbulkhead.internal;

/**
 * What a workload's {@link Controls} answer for a caller that may find no permit free: come in and wait at most so
 * long, or be refused, and why. A value: admission acts on it, the controls never refuse anyone themselves.
 */
sealed interface Verdict {
    /**
     * Come in, and wait at most {@code waitNanos} for an execution permit.
     *
     * @param deadlineBinds the caller's deadline, not its queue wait, sets the wait
     * @param leavesEarly the controls let it wait less than it allows: they keep back the time its work needs
     * @param audited a refusal was predicted and overruled, to measure how often predictions are wrong
     * @param kindCounted the caller is counted inside its kind of operation until it leaves (admitted while contended)
     */
    record Admit(long waitNanos, boolean deadlineBinds, boolean leavesEarly, boolean audited, boolean kindCounted)
            implements Verdict {
        /** What a caller allows itself: its queue wait, or what is left of its deadline. */
        static Admit allowing(long waitNanos, boolean deadlineBinds) {
            return new Admit(waitNanos, deadlineBinds, false, false, false);
        }

        /** This wait, shortened to {@code nanos} when that is less. */
        Admit atMost(long nanos) {
            return nanos < waitNanos ? new Admit(nanos, deadlineBinds, true, audited, kindCounted) : this;
        }

        /** This admission, as a predicted refusal overruled. */
        Admit overruled() {
            return new Admit(waitNanos, deadlineBinds, leavesEarly, true, kindCounted);
        }

        /** This admission, counted inside its kind. */
        Admit counted() {
            return new Admit(waitNanos, deadlineBinds, leavesEarly, audited, true);
        }
    }

    /** Refused: it would almost surely not start within the {@code allowedNanos} it may wait. */
    record WouldTimeOut(long expectedNanos, long allowedNanos) implements Verdict {}

    /** Refused: no permit free, and the caller's kind had {@code cap} operations inside already. */
    record Capped(int cap, long allowedNanos) implements Verdict {}

    /**
     * Refused: the workload is overloaded and sheds whoever is expected to wait more than the {@code allowedNanos} it
     * may.
     */
    record Shed(long expectedNanos, long allowedNanos) implements Verdict {}
}
