package dev.dbbulkhead.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.testkit.NoopDataSource;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/** The resolver follows causes to a rejection or a pool timeout, and stops where a chain of causes loops back. */
class ProblemResolverCausesTest {
    private final DbBulkheadProblemResolver resolver = new DbBulkheadProblemResolver(Duration.ofSeconds(1));

    private MockHttpServletResponse resolve(Exception ex) {
        var response = new MockHttpServletResponse();
        resolver.resolveException(new MockHttpServletRequest("GET", "/orders"), response, null, ex);
        return response;
    }

    /** A real rejection: the one permit is held on this thread, and another caller finds no slot. */
    private static BulkheadRejectedException aRejection() throws Exception {
        var gate = DbBulkhead.builder(new NoopDataSource()).workload("w", 1, 0).build();
        try (Lease held = gate.acquire(Duration.ofSeconds(1))) {
            var rejection = new AtomicReference<BulkheadRejectedException>();
            Thread.ofVirtual()
                    .start(() -> {
                        try (Lease none = gate.acquire(Duration.ZERO)) {
                            throw new AssertionError("admitted past a full barrier");
                        } catch (BulkheadRejectedException expected) {
                            rejection.set(expected);
                        } catch (InterruptedException e) {
                            throw new AssertionError(e);
                        }
                    })
                    .join();
            return rejection.get();
        }
    }

    @Test
    @Timeout(10)
    void aCycleOfCausesIsFollowedOnceAndLeftToTheDefaultHandling() {
        var a = new IllegalStateException("a");
        var b = new RuntimeException("b");
        a.initCause(b);
        b.initCause(a); // a -> b -> a: a loop that walking getCause() alone never leaves
        assertThat(resolve(a).getStatus())
                .as("neither a rejection nor a pool timeout")
                .isEqualTo(200);
    }

    @Test
    @Timeout(10)
    void aRejectionOrAPoolTimeoutInsideALoopOfCausesIsStillFound() throws Exception {
        var wrapper = new RuntimeException("wrapper");
        var inner = new RuntimeException("inner", new SQLTransientConnectionException("pool timed out"));
        wrapper.initCause(inner);
        var response = resolve(wrapper);
        assertThat(response.getStatus()).isEqualTo(503);
        assertThat(response.getContentAsString()).contains("\"reason\":\"POOL_TIMEOUT\"");

        var a = new IllegalStateException("a");
        var b = new RuntimeException("b", aRejection());
        a.initCause(b);
        var rejected = resolve(a);
        assertThat(rejected.getStatus()).isEqualTo(503);
        assertThat(rejected.getContentAsString()).contains("\"reason\":\"ADMISSION_FULL\"", "\"workload\":\"w\"");
    }

    /**
     * A refusal delay holds the answer (at least the delay: a lower bound, whatever the machine's load), and an
     * interrupt answers at once, the flag kept; a delay past Retry-After is refused naming it.
     */
    @Test
    @Timeout(10)
    void aRefusalIsHeldForItsDelayAndAnInterruptAnswersAtOnce() throws Exception {
        var held = new DbBulkheadProblemResolver(
                Duration.ofSeconds(1), DbBulkheadProblemResolver.Status.TOO_MANY_REQUESTS, Duration.ofMillis(200));
        var rejection = aRejection();
        long start = System.nanoTime();
        var response = new MockHttpServletResponse();
        held.resolveException(new MockHttpServletRequest("GET", "/orders"), response, null, rejection);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
        assertThat(response.getStatus()).isEqualTo(429);
        Thread.currentThread().interrupt();
        var interrupted = new MockHttpServletResponse();
        held.resolveException(new MockHttpServletRequest("GET", "/orders"), interrupted, null, rejection);
        assertThat(Thread.interrupted()).as("the interrupt is kept").isTrue();
        assertThat(interrupted.getStatus()).isEqualTo(429);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DbBulkheadProblemResolver(
                        Duration.ofSeconds(1),
                        DbBulkheadProblemResolver.Status.SERVICE_UNAVAILABLE,
                        Duration.ofSeconds(2)))
                .hasMessageContaining("refusalDelay must be >= 0 and at most retryAfter");
    }
}
