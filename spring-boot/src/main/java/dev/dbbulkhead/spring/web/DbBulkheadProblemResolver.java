package dev.dbbulkhead.spring.web;

import dev.dbbulkhead.BulkheadRejectedException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers a db-bulkhead rejection thrown out of a Spring MVC handler with {@code 503 Service Unavailable} (or
 * {@code 429 Too Many Requests}, {@link Status}),
 * {@code Retry-After} in whole seconds, and an RFC 9457 problem body ({@code application/problem+json}) with the
 * extension members {@code reason} and {@code workload}:
 * <pre>
 * HTTP/1.1 503
 * Retry-After: 1
 * Content-Type: application/problem+json
 *
 * {"type":"about:blank","title":"Service Unavailable","status":503,
 *  "detail":"The database is at capacity: every admission slot is taken. Retry after 1 s.",
 *  "instance":"/orders","reason":"ADMISSION_FULL","workload":"interactive"}
 * </pre>
 * It runs after Spring MVC's own resolvers, so the application's {@code @ExceptionHandler}s and
 * {@code @ControllerAdvice}s win, and Spring Boot's problem-details handling of Spring's own exceptions is untouched.
 * The body names no barrier size (B, Q): those stay in the server's logs and metrics.
 *
 * <p>A pool that could not hand out a connection in time to admitted work (a
 * {@link java.sql.SQLTransientConnectionException}, as HikariCP's timeout is, or Spring's
 * {@code CannotGetJdbcConnectionException} around one) is overload too, not a server error: the same 503, with
 * {@code "reason":"POOL_TIMEOUT"} (and no {@code workload} member; the barrier's
 * {@code db.bulkhead.pool.timeouts} counter has it). Thread-safe.
 */
public class DbBulkheadProblemResolver implements HandlerExceptionResolver, Ordered {
    /**
     * The status a refusal is answered with. Tomcat (and Jetty) close the client's connection after a 503, so each
     * refused client of a flood comes back through a new TCP connection; a 429 keeps it open (docs/spring.md).
     */
    public enum Status {
        /** 503 Service Unavailable (the default): the server is at capacity; the connection is closed after it. */
        SERVICE_UNAVAILABLE(HttpServletResponse.SC_SERVICE_UNAVAILABLE, "Service Unavailable"),
        /** 429 Too Many Requests: the connection stays open for the client's next request. */
        TOO_MANY_REQUESTS(429, "Too Many Requests");

        final int code;
        final String title;

        Status(int code, String title) {
            this.code = code;
            this.title = title;
        }

        /** {@code 503} or {@code 429}; anything else is refused, naming the value. */
        public static Status of(int code) {
            for (Status s : values()) {
                if (s.code == code) {
                    return s;
                }
            }
            throw new IllegalArgumentException("status must be 503 or 429, was " + code);
        }
    }

    private final long retryAfterSeconds;
    private final Status status;
    /** Holds a refusal of the named workload before it is answered: not at all, a fixed delay, or paced. */
    private final Consumer<String> hold;

    /** @param retryAfter more than zero, at most a day; sent in whole seconds, rounded up */
    public DbBulkheadProblemResolver(Duration retryAfter) {
        this(retryAfter, Status.SERVICE_UNAVAILABLE);
    }

    /**
     * @param retryAfter more than zero, at most a day; sent in whole seconds, rounded up
     * @param status 503 or 429
     */
    public DbBulkheadProblemResolver(Duration retryAfter, Status status) {
        this(retryAfter, status, Duration.ZERO);
    }

    /**
     * @param retryAfter more than zero, at most a day; sent in whole seconds, rounded up
     * @param status 503 or 429
     * @param refusalDelay how long a refusal is held before it is answered, zero for at once: a client of a closed loop
     *     that comes straight back then costs the server one refusal per delay, not one per round trip
     *     (Netflix's {@code partitionRejectDelay}); held on the request's thread, so meant for virtual threads
     */
    public DbBulkheadProblemResolver(Duration retryAfter, Status status, Duration refusalDelay) {
        this(retryAfter, status, fixed(refusalDelay, retryAfter));
    }

    /**
     * Refusals held as {@code pacer} says (the starter's default): refusals answered at about the rate the workload
     * completes operations, however many clients come straight back.
     *
     * @param retryAfter more than zero, at most a day; sent in whole seconds, rounded up
     * @param status 503 or 429
     * @param pacer how long each refusal is held; its longest hold should be {@code retryAfter}
     */
    public DbBulkheadProblemResolver(Duration retryAfter, Status status, RefusalPacer pacer) {
        this(retryAfter, status, (Consumer<String>) pacer::hold);
    }

    private DbBulkheadProblemResolver(Duration retryAfter, Status status, Consumer<String> hold) {
        long millis = checkRetryAfter(retryAfter).toMillis();
        this.retryAfterSeconds = Math.max(1, millis / 1000 + (millis % 1000 == 0 ? 0 : 1));
        this.status = status;
        this.hold = hold;
    }

    private static Duration checkRetryAfter(@Nullable Duration retryAfter) {
        if (retryAfter == null
                || retryAfter.isNegative()
                || retryAfter.isZero()
                || retryAfter.compareTo(Duration.ofDays(1)) > 0) {
            throw new IllegalArgumentException("retryAfter must be > 0 and at most a day, was " + retryAfter);
        }
        return retryAfter;
    }

    /** A hold of {@code delay} for every refusal, or none for zero. */
    private static Consumer<String> fixed(@Nullable Duration delay, Duration retryAfter) {
        if (delay == null || delay.isNegative() || delay.compareTo(checkRetryAfter(retryAfter)) > 0) {
            throw new IllegalArgumentException(
                    "refusalDelay must be >= 0 and at most retryAfter " + retryAfter + ", was " + delay);
        }
        if (delay.isZero()) {
            return workload -> {};
        }
        return workload -> {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // answered at once
            }
        };
    }

    @Override
    public @Nullable ModelAndView resolveException(
            HttpServletRequest request, HttpServletResponse response, @Nullable Object handler, Exception ex) {
        BulkheadRejectedException rejected = rejection(ex);
        boolean poolTimeout = rejected == null && poolTimeout(ex);
        if ((rejected == null && !poolTimeout) || response.isCommitted()) {
            return null;
        }
        try {
            if (rejected != null) {
                hold.accept(rejected.workload());
            }
            response.resetBuffer();
            response.setStatus(status.code);
            response.setHeader("Retry-After", Long.toString(retryAfterSeconds));
            response.setContentType("application/problem+json");
            response.setCharacterEncoding(StandardCharsets.UTF_8.name());
            response.getWriter()
                    .write(
                            rejected != null
                                    ? problem(rejected, request.getRequestURI())
                                    : problem(
                                            "no connection was free in time",
                                            "POOL_TIMEOUT",
                                            null,
                                            request.getRequestURI()));
            response.flushBuffer();
        } catch (IOException e) {
            return null; // the client is gone: let the default handling log it
        }
        return new ModelAndView();
    }

    /** The rejection, or one that caused {@code ex} (a proxy may wrap it). */
    private static @Nullable BulkheadRejectedException rejection(Throwable ex) {
        for (Throwable t : causes(ex)) {
            if (t instanceof BulkheadRejectedException rejected) {
                return rejected;
            }
        }
        return null;
    }

    /** The pool's timeout, here or in a cause: Spring's {@code CannotGetJdbcConnectionException} wraps it. */
    private static boolean poolTimeout(Throwable ex) {
        for (Throwable t : causes(ex)) {
            if (t instanceof SQLTransientConnectionException
                    || t.getClass().getName().equals("org.springframework.jdbc.CannotGetJdbcConnectionException")) {
                return true;
            }
        }
        return false;
    }

    /** {@code ex} and its causes, each once: a cycle of causes (a -> b -> a) ends where it comes back. */
    private static List<Throwable> causes(Throwable ex) {
        var seen = Collections.newSetFromMap(new IdentityHashMap<Throwable, Boolean>());
        var chain = new ArrayList<Throwable>();
        for (Throwable t = ex; t != null && seen.add(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }

    private String problem(BulkheadRejectedException rejected, String instance) {
        String why = switch (rejected.reason()) {
            case ADMISSION_FULL -> "every admission slot is taken";
            case QUEUE_TIMEOUT -> "no capacity freed up within the queue wait";
            case DEADLINE -> "the request's deadline passed before it reached the database";
            case WOULD_TIME_OUT -> "the expected wait for capacity is longer than the request may wait";
            case LOAD_SHED -> "demand exceeds what it serves, and the excess is shed at once";
            case KIND_CAPPED -> "this kind of operation holds connections far longer than most and is at its share";
            case INTERRUPTED -> "the request was interrupted while waiting";
        };
        return problem(why, rejected.reason().name(), rejected.workload(), instance);
    }

    private String problem(String why, String reason, @Nullable String workload, String instance) {
        return "{\"type\":\"about:blank\",\"title\":\"" + status.title + "\",\"status\":" + status.code + ",\"detail\":"
                + json("The database is at capacity: " + why + ". Retry after " + retryAfterSeconds + " s.")
                + ",\"instance\":" + json(instance) + ",\"reason\":" + json(reason)
                + (workload == null ? "" : ",\"workload\":" + json(workload)) + "}";
    }

    private static String json(String s) {
        var out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    /** After Spring MVC's resolvers (order 0), so that the application's handlers win. */
    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE;
    }
}
