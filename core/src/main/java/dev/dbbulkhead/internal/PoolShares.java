package dev.dbbulkhead.internal;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The barriers built over each pool in this JVM, with what each admits at once (its workloads' B, or its shared
 * limit). One barrier per pool is the rule; a second barrier over the same pool is legal, but when the barriers' B
 * add up past the pool size they admit more operations than there are connections, and the excess waits inside the
 * pool, where no barrier sees it. That is told once, when the barrier that crosses the line is built (a barrier
 * that alone exceeds the pool is told so by its own check). Pools and barriers are held weakly and compared by
 * identity (a pool's own {@code equals} and {@code hashCode} are never called): a barrier no longer referenced stops
 * counting once it has been garbage-collected. Thread-safe.
 */
public final class PoolShares {
    private record Share(WeakReference<DataSource> pool, WeakReference<Object> barrier, String name, int admits) {
        boolean gone() {
            return pool.get() == null || barrier.get() == null;
        }
    }

    /** Every live barrier's share; a JVM has few pools and barriers, so a list scanned under a lock is enough. */
    private static final List<Share> SHARES = new ArrayList<>();

    private PoolShares() {}

    /**
     * Records that {@code barrier} ({@code name}) admits {@code admits} operations at once over {@code pool} of
     * {@code poolSize} connections (≤ 0: unknown, nothing is checked); returns the warning to log when the barriers
     * over that pool now admit more than it holds, else null.
     */
    public static @Nullable String claim(DataSource pool, Object barrier, String name, int admits, int poolSize) {
        List<Share> same;
        synchronized (SHARES) {
            SHARES.removeIf(Share::gone);
            SHARES.add(new Share(new WeakReference<>(pool), new WeakReference<>(barrier), name, admits));
            same = SHARES.stream().filter(s -> s.pool().get() == pool).toList();
        }
        long total = same.stream().mapToLong(Share::admits).sum();
        if (poolSize <= 0 || admits > poolSize || same.size() < 2 || total <= poolSize) {
            return null;
        }
        String each = same.stream()
                .sorted(Comparator.comparing(Share::name))
                .map(s -> "'" + s.name() + "' " + s.admits())
                .collect(Collectors.joining(", "));
        return same.size() + " barriers over one pool of " + poolSize + " connections admit " + total
                + " operations at once (" + each + "): the " + (total - poolSize) + " beyond the pool wait inside "
                + "it, where no barrier sees them. Share one barrier per pool (with a workload for each budget), "
                + "or lower concurrent so that they add up to at most " + poolSize;
    }
}
