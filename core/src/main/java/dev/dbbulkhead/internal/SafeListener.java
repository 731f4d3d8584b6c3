package dev.dbbulkhead.internal;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.RejectionReason;
import dev.dbbulkhead.Workload;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * Calls the user's listeners and contains whatever they throw: every {@link Throwable}, checked ones thrown
 * sneakily (Kotlin, Lombok) and {@link Error}s included, {@link VirtualMachineError}s too. A listener observes an
 * operation; it never changes what the caller is told, nor whether a permit or a connection goes back. What it
 * threw is logged (at ERROR for a {@code VirtualMachineError}, WARNING otherwise), and if even logging fails the
 * failure is dropped.
 */
final class SafeListener implements BulkheadListener {
    private final BulkheadListener[] delegates;
    private final Logger log;

    private SafeListener(BulkheadListener[] delegates, Logger log) {
        this.delegates = delegates;
        this.log = log;
    }

    static BulkheadListener of(List<BulkheadListener> listeners, Logger log) {
        return listeners.isEmpty()
                ? BulkheadListener.NOOP
                : new SafeListener(listeners.toArray(BulkheadListener[]::new), log);
    }

    private void failed(BulkheadListener listener, String call, Throwable t) {
        try {
            log.log(
                    t instanceof VirtualMachineError ? Level.ERROR : Level.WARNING,
                    "db-bulkhead listener " + listener.getClass().getName() + "." + call
                            + " threw; ignored (the operation goes on)",
                    t);
        } catch (Throwable logging) {
            // Nothing left to tell it to: the operation must go on regardless.
        }
    }

    @Override
    public void onAdmitted(Workload workload) {
        for (var l : delegates) {
            try {
                l.onAdmitted(workload);
            } catch (Throwable t) {
                failed(l, "onAdmitted", t);
            }
        }
    }

    @Override
    public void onRejected(Workload workload, RejectionReason reason, long waitedNanos) {
        for (var l : delegates) {
            try {
                l.onRejected(workload, reason, waitedNanos);
            } catch (Throwable t) {
                failed(l, "onRejected", t);
            }
        }
    }

    @Override
    public void onPermitAcquired(Workload workload, long waitNanos) {
        for (var l : delegates) {
            try {
                l.onPermitAcquired(workload, waitNanos);
            } catch (Throwable t) {
                failed(l, "onPermitAcquired", t);
            }
        }
    }

    @Override
    public void onConnectionAcquired(Workload workload, long poolWaitNanos) {
        for (var l : delegates) {
            try {
                l.onConnectionAcquired(workload, poolWaitNanos);
            } catch (Throwable t) {
                failed(l, "onConnectionAcquired", t);
            }
        }
    }

    @Override
    public void onFinished(
            Workload workload,
            Outcome outcome,
            long permitWaitNanos,
            long poolWaitNanos,
            long holdNanos,
            long workNanos) {
        for (var l : delegates) {
            try {
                l.onFinished(workload, outcome, permitWaitNanos, poolWaitNanos, holdNanos, workNanos);
            } catch (Throwable t) {
                failed(l, "onFinished", t);
            }
        }
    }

    @Override
    public void onLimitChanged(Workload workload, int previousLimit, int newLimit) {
        for (var l : delegates) {
            try {
                l.onLimitChanged(workload, previousLimit, newLimit);
            } catch (Throwable t) {
                failed(l, "onLimitChanged", t);
            }
        }
    }

    @Override
    public void onLeaseReclaimed(Workload workload, long heldNanos) {
        for (var l : delegates) {
            try {
                l.onLeaseReclaimed(workload, heldNanos);
            } catch (Throwable t) {
                failed(l, "onLeaseReclaimed", t);
            }
        }
    }

    @Override
    public void onPoolTimeout(Workload workload) {
        for (var l : delegates) {
            try {
                l.onPoolTimeout(workload);
            } catch (Throwable t) {
                failed(l, "onPoolTimeout", t);
            }
        }
    }

    @Override
    public void onPredictionAudited(Workload workload, boolean servedInTime, long waitedNanos) {
        for (var l : delegates) {
            try {
                l.onPredictionAudited(workload, servedInTime, waitedNanos);
            } catch (Throwable t) {
                failed(l, "onPredictionAudited", t);
            }
        }
    }

    @Override
    public void onOverloadSignal(Workload workload, Throwable signal) {
        for (var l : delegates) {
            try {
                l.onOverloadSignal(workload, signal);
            } catch (Throwable t) {
                failed(l, "onOverloadSignal", t);
            }
        }
    }

    @Override
    public void onSessionDiscarded(Workload workload) {
        for (var l : delegates) {
            try {
                l.onSessionDiscarded(workload);
            } catch (Throwable t) {
                failed(l, "onSessionDiscarded", t);
            }
        }
    }

    @Override
    public void onLeakSuspected(Workload workload, long heldNanos) {
        for (var l : delegates) {
            try {
                l.onLeakSuspected(workload, heldNanos);
            } catch (Throwable t) {
                failed(l, "onLeakSuspected", t);
            }
        }
    }
}
