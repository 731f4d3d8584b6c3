package dev.dbbulkhead.spring.client;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A client's budget for retries, so that retrying a saturated service does not multiply its load: each request
 * deposits {@code ratio} of a retry, each retry withdraws one, and {@code minRetriesPerSecond} more are allowed per
 * second whatever the traffic (so that a client with few requests can still retry). Over any run of {@code n}
 * requests lasting {@code t} seconds, a client sends at most {@code n × (1 + ratio) + minRetriesPerSecond × (t + 1)}.
 * The deposits are capped at what the last 100 requests earned, so a long calm does not save up a burst of retries.
 * (The scheme of Finagle's {@code RetryBudget} and gRPC's retry throttling.)
 *
 * <p>Thread-safe.
 */
public final class RetryBudget {
    private static final long ONE = 1_000; // a retry, in thousandths
    private final long deposit;
    private final long cap;
    private final long minPerSecond;
    private final LongSupplier nanoClock;
    private long balance;
    private long reserve;
    private long refilledAt;

    private RetryBudget(double ratio, int minRetriesPerSecond, LongSupplier nanoClock) {
        if (!(ratio >= 0 && ratio <= 10)) {
            throw new IllegalArgumentException("ratio must be between 0 and 10, was " + ratio);
        }
        if (minRetriesPerSecond < 0) {
            throw new IllegalArgumentException("minRetriesPerSecond must be >= 0, was " + minRetriesPerSecond);
        }
        this.deposit = Math.round(ratio * ONE);
        this.cap = Math.max(ONE, deposit * 100);
        this.minPerSecond = minRetriesPerSecond;
        this.nanoClock = nanoClock;
        this.reserve = minRetriesPerSecond * ONE;
        this.refilledAt = nanoClock.getAsLong();
    }

    /** A budget of {@code ratio} retries per request (e.g. 0.1) plus {@code minRetriesPerSecond}. */
    public static RetryBudget of(double ratio, int minRetriesPerSecond) {
        return new RetryBudget(ratio, minRetriesPerSecond, System::nanoTime);
    }

    /** The same on {@code nanoClock}, for tests. */
    public static RetryBudget of(double ratio, int minRetriesPerSecond, LongSupplier nanoClock) {
        return new RetryBudget(ratio, minRetriesPerSecond, nanoClock);
    }

    /** A first attempt was made: deposits {@code ratio} of a retry. */
    public synchronized void onRequest() {
        balance = Math.min(cap, balance + deposit);
    }

    /** Withdraws one retry if the budget has one. */
    public synchronized boolean tryRetry() {
        refill();
        if (reserve >= ONE) {
            reserve -= ONE;
            return true;
        }
        if (balance >= ONE) {
            balance -= ONE;
            return true;
        }
        return false;
    }

    private void refill() {
        if (minPerSecond == 0) {
            return;
        }
        long now = nanoClock.getAsLong();
        long elapsed = now - refilledAt;
        long nanosPerThousandth = TimeUnit.SECONDS.toNanos(1) / (minPerSecond * ONE);
        long earned = nanosPerThousandth == 0 ? Long.MAX_VALUE : elapsed / Math.max(1, nanosPerThousandth);
        if (earned <= 0) {
            return;
        }
        long full = minPerSecond * ONE;
        reserve = earned >= full - reserve ? full : reserve + earned;
        refilledAt = reserve == full ? now : refilledAt + earned * nanosPerThousandth;
    }

    @Override
    public synchronized String toString() {
        return "RetryBudget[deposit=" + deposit / (double) ONE + "/request, balance=" + balance / (double) ONE
                + ", minPerSecond=" + minPerSecond + "]";
    }
}
