package dev.dbbulkhead;

import dev.dbbulkhead.internal.Nanos;
import dev.dbbulkhead.internal.Preconditions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * One point in time by which an operation must have finished, on the {@link System#nanoTime()} clock.
 *
 * <p>Its remaining time bounds, in order, the wait for an execution permit, the connection acquisition (checked
 * once the connection is in hand) and, on PostgreSQL, the statements ({@code SET LOCAL statement_timeout}).
 * Create it where the caller's budget starts (e.g. when the request arrives) and pass it down. Arithmetic
 * saturates: a deadline 30 days or {@code Duration.ofNanos(Long.MAX_VALUE)} away, or at {@link Instant#MAX}, is
 * simply far away (on PostgreSQL, the statement timeout is then capped at the server's maximum, about 24.8 days).
 *
 * <p>Immutable and thread-safe.
 */
public final class Deadline {
    private final long nanoTime;

    private Deadline(long nanoTime) {
        this.nanoTime = nanoTime;
    }

    /** The deadline {@code timeout} from now. */
    public static Deadline in(Duration timeout) {
        return in(timeout, System.nanoTime());
    }

    /** The deadline {@code timeout} after {@code nowNanos} on the nano clock the barrier uses. */
    public static Deadline in(Duration timeout, long nowNanos) {
        Preconditions.notNull(timeout, "timeout");
        return new Deadline(Nanos.saturatedAdd(nowNanos, Nanos.of(timeout)));
    }

    /** The deadline at a wall-clock instant, converted once, now, to the nano clock. */
    public static Deadline at(Instant instant) {
        Preconditions.notNull(instant, "instant");
        long now = System.nanoTime();
        return new Deadline(Nanos.saturatedAdd(
                now, Nanos.of(Duration.between(Clock.systemUTC().instant(), instant))));
    }

    /** The deadline at an absolute {@link System#nanoTime()} (or injected nano clock) value. */
    public static Deadline atNanoTime(long nanoTime) {
        return new Deadline(nanoTime);
    }

    /** The absolute nano-clock value of this deadline. */
    public long nanoTime() {
        return nanoTime;
    }

    /** Nanoseconds left at {@code nowNanos}; zero or negative once passed. */
    public long remainingNanos(long nowNanos) {
        return Nanos.saturatedSubtract(nanoTime, nowNanos);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Deadline other && other.nanoTime == nanoTime;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(nanoTime);
    }

    @Override
    public String toString() {
        return "Deadline[in " + Duration.ofNanos(remainingNanos(System.nanoTime())) + "]";
    }
}
