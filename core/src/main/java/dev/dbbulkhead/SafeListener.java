package dev.dbbulkhead;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;

/** Calls the user's listeners, catching and logging what they throw so that no permit path breaks. */
final class SafeListener implements BulkheadListener {
    private final BulkheadListener[] delegates;
    private final Logger log;

    private SafeListener(BulkheadListener[] delegates, Logger log) {
        this.delegates = delegates;
        this.log = log;
    }

    static BulkheadListener of(List<BulkheadListener> listeners, Logger log) {
        return new SafeListener(listeners.toArray(BulkheadListener[]::new), log);
    }

    private void failed(BulkheadListener listener, String call, Throwable t) {
        log.log(Level.WARNING, "db-bulkhead listener " + listener.getClass().getName() + "." + call
                + " threw; ignored (the operation goes on)", t);
    }

    @Override
    public void onAdmitted(Workload workload) {
        for (var l : delegates) {
            try {
                l.onAdmitted(workload);
            } catch (RuntimeException | LinkageError | AssertionError e) {
                failed(l, "onAdmitted", e);
            }
        }
    }

    @Override
    public void onRejected(Workload workload, RejectionReason reason, long waitedNanos) {
        for (var l : delegates) {
            try {
                l.onRejected(workload, reason, waitedNanos);
            } catch (RuntimeException | LinkageError | AssertionError e) {
                failed(l, "onRejected", e);
            }
        }
    }

    @Override
    public void onPermitAcquired(Workload workload, long waitNanos) {
        for (var l : delegates) {
            try {
                l.onPermitAcquired(workload, waitNanos);
            } catch (RuntimeException | LinkageError | AssertionError e) {
                failed(l, "onPermitAcquired", e);
            }
        }
    }

    @Override
    public void onConnectionAcquired(Workload workload, long poolWaitNanos) {
        for (var l : delegates) {
            try {
                l.onConnectionAcquired(workload, poolWaitNanos);
            } catch (RuntimeException | LinkageError | AssertionError e) {
                failed(l, "onConnectionAcquired", e);
            }
        }
    }

    @Override
    public void onFinished(Workload workload, Outcome outcome, long permitWaitNanos, long poolWaitNanos,
            long holdNanos, long workNanos) {
        for (var l : delegates) {
            try {
                l.onFinished(workload, outcome, permitWaitNanos, poolWaitNanos, holdNanos, workNanos);
            } catch (RuntimeException | LinkageError | AssertionError e) {
                failed(l, "onFinished", e);
            }
        }
    }
}
