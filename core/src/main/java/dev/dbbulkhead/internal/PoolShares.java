package dev.dbbulkhead.internal;

import java.util.Comparator;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * The barriers built over each pool in this JVM, with what each admits at once (its workloads' B, or its shared
 * limit). One barrier per pool is the rule; a second barrier over the same pool is legal, but when the barriers' B
 * add up past the pool size they admit more operations than there are connections, and the excess waits inside the
 * pool, where no barrier sees it. That is told once, when the barrier that crosses the line is built. Pools and
 * barriers are held weakly: a barrier that is gone no longer counts. Thread-safe.
 */
public final class PoolShares {
    /** Per pool, per barrier (weak keys both), the barrier's name and what it admits at once. */
    private static final Map<DataSource, Map<Object, Share>> BY_POOL = new WeakHashMap<>();

    private record Share(String name, int admits) {}

    private PoolShares() {}

    /**
     * Records that {@code barrier} ({@code name}) admits {@code admits} operations at once over {@code pool} of
     * {@code poolSize} connections (≤ 0: unknown, nothing is checked); returns the warning to log when the barriers
     * over that pool now admit more than it holds, else null.
     */
    public static String claim(DataSource pool, Object barrier, String name, int admits, int poolSize) {
        synchronized (BY_POOL) {
            Map<Object, Share> shares = BY_POOL.computeIfAbsent(pool, p -> new WeakHashMap<>());
            shares.put(barrier, new Share(name, admits));
            long total = shares.values().stream().mapToLong(Share::admits).sum();
            if (poolSize <= 0 || shares.size() < 2 || total <= poolSize) {
                return null;
            }
            String each = shares.values().stream().sorted(Comparator.comparing(Share::name)).map(s -> "'" + s.name() + "' " + s.admits())
                    .collect(Collectors.joining(", "));
            return shares.size() + " barriers over one pool of " + poolSize + " connections admit " + total
                    + " operations at once (" + each + "): the " + (total - poolSize) + " beyond the pool wait inside "
                    + "it, where no barrier sees them. Share one barrier per pool (with a workload for each budget), "
                    + "or lower concurrent so that they add up to at most " + poolSize;
        }
    }
}
