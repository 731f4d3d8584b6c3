package dev.dbbulkhead;

import java.time.Duration;

/**
 * What a workload has learned of one kind of its operations ({@link WorkloadConfig.Builder#kinds}): a snapshot, for
 * observation only. A kind is a call site (the class of the {@link SqlWork}, named where it is first called from: the
 * class that wrote the lambda, its method and line, {@code OrderService.place:42}), the shape of a first statement when
 * one call site sends several ({@code select * from orders where id = ?}), the name a caller gave
 * ({@link TransactionOptions#kind}, at most 200 characters), or {@code other}, which call sites beyond the first 32
 * share until a place frees up.
 *
 * @param name the kind's name
 * @param arrivalsPerSecond its recent arrival rate, refused callers included
 * @param share its share of the workload's arrivals, 0 to 1
 * @param meanHold the recent mean time its operations held their connection
 * @param holdP50 the recent median hold (within 19 %), as of the last window with any
 * @param holdP99 the recent 99th percentile hold (within 19 %), as of the last window with any
 * @param cap how many of its operations may be inside (queued or holding a connection) while the workload is
 *     contended; -1 for none: it holds at most twice as long as the workload's median operation
 * @param inside its operations counted inside now: those admitted while the workload was contended (queued or holding
 *     a connection); an operation admitted with a permit free is not counted, since no cap binds then
 * @param capped how many of its callers were refused at once because it was at its cap ({@link KindCappedException})
 */
public record KindStats(
        String name,
        double arrivalsPerSecond,
        double share,
        Duration meanHold,
        Duration holdP50,
        Duration holdP99,
        int cap,
        int inside,
        long capped) {}
