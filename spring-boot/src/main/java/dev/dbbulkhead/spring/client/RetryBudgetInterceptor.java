package dev.dbbulkhead.spring.client;

import dev.dbbulkhead.Deadline;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Retries {@code 503 Service Unavailable} within a {@link RetryBudget}, for {@code RestClient} (and
 * {@code RestTemplate}): waits the response's {@code Retry-After} (seconds or an HTTP date; 1 s when absent) plus up
 * to 20 % of jitter, at most {@code maxRetries} times, never when the wait would end past the request's deadline (a
 * {@link Deadline} in the request attribute {@link #DEADLINE_ATTRIBUTE}), and never without a retry left in the
 * budget: then the 503 is returned as it came.
 * <pre>{@code
 * var budget = RetryBudget.of(0.1, 1);
 * RestClient client = RestClient.builder().requestInterceptor(new RetryBudgetInterceptor(budget, 2)).build();
 * client.get().uri(url).attribute(RetryBudgetInterceptor.DEADLINE_ATTRIBUTE, Deadline.in(Duration.ofSeconds(2)))...
 * }</pre>
 * Only idempotent methods (GET, HEAD, OPTIONS, PUT, DELETE) are retried unless {@link #retryingAnyMethod()}: a 503 from
 * db-bulkhead means nothing was written, but a 503 from a proxy in front of it may not. Thread-safe.
 */
public final class RetryBudgetInterceptor implements ClientHttpRequestInterceptor {
    /** Request attribute holding the caller's {@link Deadline}: no retry wait ends past it. */
    public static final String DEADLINE_ATTRIBUTE = RetryBudgetInterceptor.class.getName() + ".deadline";

    private static final Set<HttpMethod> IDEMPOTENT =
            Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS, HttpMethod.PUT, HttpMethod.DELETE);
    private static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

    private final RetryBudget budget;
    private final int maxRetries;
    private final boolean anyMethod;

    /** Retries idempotent requests up to {@code maxRetries} times each, within {@code budget}. */
    public RetryBudgetInterceptor(RetryBudget budget, int maxRetries) {
        this(budget, maxRetries, false);
    }

    private RetryBudgetInterceptor(RetryBudget budget, int maxRetries, boolean anyMethod) {
        if (budget == null) {
            throw new NullPointerException("budget");
        }
        if (maxRetries < 0) {
            throw new IllegalArgumentException("maxRetries must be >= 0, was " + maxRetries);
        }
        this.budget = budget;
        this.maxRetries = maxRetries;
        this.anyMethod = anyMethod;
    }

    /** The same, retrying any method (a 503 from db-bulkhead itself means nothing was written). */
    public RetryBudgetInterceptor retryingAnyMethod() {
        return new RetryBudgetInterceptor(budget, maxRetries, true);
    }

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        budget.onRequest();
        ClientHttpResponse response = execution.execute(request, body);
        boolean retryable = anyMethod || IDEMPOTENT.contains(request.getMethod());
        for (int retry = 0;
                retryable && retry < maxRetries && response.getStatusCode().value() == 503;
                retry++) {
            long waitNanos = withJitter(retryAfter(response.getHeaders().getFirst("Retry-After")));
            if (request.getAttributes().get(DEADLINE_ATTRIBUTE) instanceof Deadline deadline
                    && deadline.remainingNanos(System.nanoTime()) <= waitNanos) {
                break; // it would answer after the caller stopped waiting
            }
            if (!budget.tryRetry()) {
                break;
            }
            response.close();
            try {
                TimeUnit.NANOSECONDS.sleep(waitNanos);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                var interrupted = new InterruptedIOException("interrupted while waiting to retry " + request.getURI());
                interrupted.initCause(e);
                throw interrupted;
            }
            response = execution.execute(request, body);
        }
        return response;
    }

    static Duration retryAfter(@Nullable String header) {
        if (header == null || header.isBlank()) {
            return DEFAULT_RETRY_AFTER;
        }
        String value = header.trim();
        try {
            return Duration.ofSeconds(Math.max(0, Long.parseLong(value)));
        } catch (NumberFormatException notSeconds) {
            try {
                var at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME);
                Duration until = Duration.between(ZonedDateTime.now(at.getZone()), at);
                return until.isNegative() ? Duration.ZERO : until;
            } catch (DateTimeParseException notADate) {
                return DEFAULT_RETRY_AFTER;
            }
        }
    }

    private static long withJitter(Duration wait) {
        long nanos = wait.toNanos();
        return nanos + (long) (nanos * 0.2 * ThreadLocalRandom.current().nextDouble());
    }
}
