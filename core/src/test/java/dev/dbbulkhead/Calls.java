package dev.dbbulkhead;

/** A call to the barrier that may throw anything, and catching the rejection it must end in. */
final class Calls {
    private Calls() {}

    @FunctionalInterface
    interface Call {
        void run() throws Exception;
    }

    /** The rejection {@code call} throws; fails the test if it succeeds or throws anything else. */
    static BulkheadRejectedException catchRejection(Call call) {
        try {
            call.run();
        } catch (BulkheadRejectedException e) {
            return e;
        } catch (Exception e) {
            throw new AssertionError("expected a rejection, got " + e, e);
        }
        throw new AssertionError("expected a rejection, the call succeeded");
    }
}
