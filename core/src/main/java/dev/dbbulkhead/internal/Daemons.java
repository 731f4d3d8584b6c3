package dev.dbbulkhead.internal;

/**
 * The barrier's background threads (the scheduler, the reclaimer of leaked leases): daemons, in the root thread group
 * rather than in the group of whichever caller happened to start them. A launcher that waits for the threads of its
 * own group before it exits (Maven's {@code exec:java} waits 15 s for each, then gives up) does not wait for ours.
 */
final class Daemons {
    private Daemons() {}

    static Thread thread(String name, Runnable task) {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root != null && root.getParent() != null) {
            root = root.getParent();
        }
        Thread t = new Thread(root, task, name);
        t.setDaemon(true);
        return t;
    }
}
