package dev.dbbulkhead.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.spring.client.RetryBudget;
import dev.dbbulkhead.spring.client.RetryBudgetInterceptor;
import dev.dbbulkhead.spring.web.RefusalPacer;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.client.RestClient;

/**
 * The example service over a real HTTP port and the real PostgreSQL: what a client sees under a burst, workload
 * isolation, a client's retry budget against a saturated service, and the actuator.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(SpringServiceTest.ServerTimes.class)
class SpringServiceTest {
    /** Times each request inside the service, from the servlet filter chain's entry to its exit, by status. */
    @TestConfiguration
    static class ServerTimes {
        static final ConcurrentLinkedQueue<long[]> TIMES = new ConcurrentLinkedQueue<>();

        @Bean
        Filter serverTimes() {
            return (request, response, chain) -> {
                long t0 = System.nanoTime();
                chain.doFilter(request, response);
                TIMES.add(new long[] {((HttpServletResponse) response).getStatus(), (System.nanoTime() - t0) / 1_000});
            };
        }

        static Percentiles of(int status) {
            return new Percentiles(TIMES.stream()
                    .filter(t -> t[0] == status)
                    .mapToLong(t -> t[1])
                    .sorted()
                    .toArray());
        }
    }

    record Percentiles(long[] sorted) {
        long p(int percent) {
            return sorted[Math.min(sorted.length - 1, (int) Math.ceil(sorted.length * percent / 100.0) - 1)];
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    DbBulkhead db;

    @Autowired
    RefusalPacer pacer;

    @Autowired
    BackfillJob backfill;

    @Autowired
    org.springframework.jdbc.core.simple.JdbcClient jdbc;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .executor(Executors.newVirtualThreadPerTaskExecutor())
            .build();

    @AfterEach
    void everyPermitIsBack() {
        for (Workload w : db.workloads()) {
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(5))
                    .until(() -> w.inside() == 0 && w.available() == w.limit()); // an elastic limit moves
        }
    }

    private HttpResponse<String> send(String method, String path) throws Exception {
        var request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(20))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private record Answer(int status, long micros, HttpResponse<String> response) {}

    @Test
    void theBackfillJobCopiesEveryProductInChunksPacedBesideTheInteractiveWorkload() throws Exception {
        long products =
                jdbc.sql("SELECT count(*) FROM product").query(Long.class).single();
        Workload backfillWorkload = db.workload("backfill");
        assertThat(backfillWorkload.config().priority()).isEqualTo(dev.dbbulkhead.Priority.ELASTIC);
        long chunks;
        Thread holder;
        var taken = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        holder = Thread.ofVirtual()
                .start(
                        () -> { // holds the elastic floor for a while: the job must wait for it
                            try (Lease lease = backfillWorkload.acquire(Duration.ZERO)) {
                                taken.countDown();
                                release.await();
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        });
        taken.await();
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            Future<Long> job = executor.submit(() -> backfill.run(1));
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(20))
                    .until(() ->
                            backfillWorkload.waiting() == 1 || backfill.job().chunks() > 0);
            release.countDown();
            chunks = job.get(30, TimeUnit.SECONDS);
        }
        holder.join();
        assertThat(chunks).as("one chunk per product").isEqualTo(products);
        assertThat(jdbc.sql("SELECT count(*) FROM product_archive")
                        .query(Long.class)
                        .single())
                .isEqualTo(products);
        assertThat(backfill.job().chunks()).as("and the last, empty one").isEqualTo(products + 1);
    }

    @Test
    void underABurstTheExcessGets503WithRetryAfterAndAProblemBodyBeforeAnyAdmittedRequestIsServed() throws Exception {
        burst(); // the first burst opens the client's 120 connections
        ServerTimes.TIMES.clear();
        List<Answer> answers = burst();
        var ok = answers.stream().filter(a -> a.status() == 200).toList();
        var rejected = answers.stream().filter(a -> a.status() == 503).toList();
        assertThat(ok.size() + rejected.size()).as("every answer is 200 or 503").isEqualTo(120);
        assertThat(ok).as("admitted requests served").isNotEmpty();
        assertThat(rejected).as("the excess rejected").isNotEmpty();
        for (var a : ok) {
            assertThat(a.response().body()).isEqualTo("[\"anchor\",\"bollard\",\"capstan\"]");
        }
        for (var a : rejected) {
            var r = a.response();
            assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(r.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(type -> assertThat(type).startsWith("application/problem+json"));
            assertThat(r.body())
                    .contains("\"status\":503")
                    .contains("\"title\":\"Service Unavailable\"")
                    .contains("\"workload\":\"interactive\"")
                    .containsPattern("\"reason\":\"(WOULD_TIME_OUT|LOAD_SHED|QUEUE_TIMEOUT|ADMISSION_FULL)\"");
        }
        // Inside the service (the filter below): each admitted request spends 20 ms in PostgreSQL, a rejection none.
        var served = ServerTimes.of(200);
        var refused = ServerTimes.of(503);
        System.out.printf(
                "burst of 120: %d ok, %d rejected; in the service, 200: p50 %d us, p99 %d us; 503: p50 %d us,"
                        + " p99 %d us; at the client, 503: p50 %d us%n",
                ok.size(), rejected.size(), served.p(50), served.p(99), refused.p(50), refused.p(99), median(rejected));
        // A 503's time in the service is mostly its pacing (RefusalPacer holds refusals while many are refused):
        // what counts is that every held refusal was answered.
        assertThat(pacer.held()).as("refusals still held after the burst").isZero();
    }

    private static long median(List<Answer> answers) {
        return answers.stream()
                .mapToLong(Answer::micros)
                .sorted()
                .skip(answers.size() / 2)
                .findFirst()
                .orElseThrow();
    }

    private List<Answer> burst() throws InterruptedException {
        var answers = Collections.synchronizedList(new ArrayList<Answer>());
        var start = new CountDownLatch(1);
        try (var clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 120; i++) {
                clients.submit(() -> {
                    start.await();
                    long t0 = System.nanoTime();
                    var r = send("GET", "/products");
                    answers.add(new Answer(r.statusCode(), (System.nanoTime() - t0) / 1_000, r));
                    return null;
                });
            }
            start.countDown();
        }
        return answers;
    }

    @Test
    void aSaturatedBatchWorkloadCannotStarveTheInteractiveOne() throws Exception {
        var stop = new AtomicBoolean();
        var batchAnswers = new AtomicInteger();
        var batchRejected = new AtomicInteger();
        try (var clients = Executors.newVirtualThreadPerTaskExecutor()) {
            var load = new ArrayList<Future<?>>();
            for (int i = 0; i < 8; i++) { // 8 report loops against a batch budget of 2 running + 2 waiting
                load.add(clients.submit(() -> {
                    while (!stop.get()) {
                        int status = send("POST", "/reports").statusCode();
                        batchAnswers.incrementAndGet();
                        if (status == 503) {
                            batchRejected.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            try {
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(10))
                        .until(() -> db.workload("batch").executing() == 2 && batchRejected.get() > 0);
                for (int i = 0; i < 40; i++) {
                    var r = send("GET", "/products");
                    assertThat(r.statusCode())
                            .as("interactive request %d while batch is saturated", i)
                            .isEqualTo(200);
                }
            } finally {
                stop.set(true); // the report loops end whatever failed
            }
            for (var f : load) {
                f.get(20, TimeUnit.SECONDS);
            }
        }
        assertThat(batchRejected.get()).as("batch requests rejected").isPositive();
    }

    @Test
    void aClientWithARetryBudgetSendsAtMostItsRequestsTimesOnePlusTheRatioPlusTheMinimum() throws Exception {
        // Saturate interactive deterministically: every execution permit held.
        try (var held = HeldPermits.all(db.workload("interactive"))) {
            retriesWithinTheBudget();
        }
    }

    private void retriesWithinTheBudget() {
        var sent = new AtomicInteger();
        double ratio = 0.1;
        int minPerSecond = 1;
        var budget = RetryBudget.of(ratio, minPerSecond);
        RestClient client = RestClient.builder()
                .baseUrl("http://localhost:" + port)
                .requestInterceptor(new RetryBudgetInterceptor(budget, 3))
                .requestInterceptor((request, body, execution) -> { // inside the budget: counts what is sent
                    sent.incrementAndGet();
                    return execution.execute(request, body);
                })
                .build();
        int requests = 100;
        var statuses = Collections.synchronizedList(new ArrayList<Integer>());
        long t0 = System.nanoTime();
        try (var clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < requests; i++) {
                clients.submit(() -> statuses.add(client.get()
                        .uri("/products")
                        .attribute(RetryBudgetInterceptor.DEADLINE_ATTRIBUTE, Deadline.in(Duration.ofSeconds(10)))
                        .exchange((req, res) -> res.getStatusCode().value())));
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.out.printf("retry budget: %d requests, %d sent in %.1f s%n", requests, sent.get(), seconds);
        assertThat(statuses).hasSize(requests).containsOnly(503);
        assertThat(sent.get()).as("retries were made").isGreaterThan(requests);
        assertThat((double) sent.get())
                .as("sent, against (1 + ratio) x requests + min x (seconds + 1)")
                .isLessThanOrEqualTo((1 + ratio) * requests + minPerSecond * (Math.ceil(seconds) + 1));
    }

    @Test
    void theDeadlineStopsRetriesThatWouldAnswerTooLate() throws Exception {
        try (var held = HeldPermits.all(db.workload("interactive"))) {
            var sent = new AtomicInteger();
            RestClient client = RestClient.builder()
                    .baseUrl("http://localhost:" + port)
                    .requestInterceptor(new RetryBudgetInterceptor(RetryBudget.of(1.0, 10), 3))
                    .requestInterceptor((request, body, execution) -> {
                        sent.incrementAndGet();
                        return execution.execute(request, body);
                    })
                    .build();
            HttpStatusCode status = client.get()
                    .uri("/products")
                    .attribute(RetryBudgetInterceptor.DEADLINE_ATTRIBUTE, Deadline.in(Duration.ofMillis(500)))
                    .exchange((req, res) -> res.getStatusCode());
            assertThat(status.value()).isEqualTo(503);
            assertThat(sent.get())
                    .as("no retry: Retry-After (1 s) ends past the 500 ms deadline")
                    .isEqualTo(1);
        }
    }

    @Test
    void theActuatorShowsTheWorkloadsTheMetersAndStaysUpWhileSaturated() throws Exception {
        var endpoint = send("GET", "/actuator/dbbulkhead");
        assertThat(endpoint.statusCode()).isEqualTo(200);
        assertThat(endpoint.body())
                .contains("\"defaultWorkload\":\"interactive\"")
                .contains("\"name\":\"batch\"")
                .contains("\"concurrent\":4")
                .contains("\"extraSlots\":256")
                .contains("\"limit\":4")
                .contains("\"adaptive\":false");
        for (String meter : List.of("db.bulkhead.permits.max", "db.bulkhead.executing", "hikaricp.connections.max")) {
            assertThat(send("GET", "/actuator/metrics/" + meter).statusCode())
                    .as(meter)
                    .isEqualTo(200);
        }
        try (var held = HeldPermits.all(db.workload("interactive"))) {
            assertThat(send("GET", "/products").statusCode()).isEqualTo(503);
            var health = send("GET", "/actuator/health");
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"UP\"");
            assertThat(send("GET", "/actuator/dbbulkhead").body()).contains("\"executing\":" + POOL_SIZE);
        }
    }

    /** The pool's size (application.properties): what interactive may have, borrowing what the others leave idle. */
    static final int POOL_SIZE = 8;

    /**
     * Every execution permit a workload can have, held on virtual threads until closed (also when an assertion fails):
     * its B, then what it borrows of the idle others, up to the shared limit (the pool's size here).
     */
    static final class HeldPermits implements AutoCloseable {
        private final CountDownLatch release = new CountDownLatch(1);
        private final ExecutorService holders = Executors.newVirtualThreadPerTaskExecutor();

        static HeldPermits all(Workload workload) throws InterruptedException {
            var held = new HeldPermits();
            var taken = new CountDownLatch(POOL_SIZE);
            for (int i = 0; i < POOL_SIZE; i++) {
                held.holders.submit(() -> {
                    try (Lease lease = workload.acquire(Duration.ofSeconds(5))) {
                        taken.countDown();
                        held.release.await();
                    }
                    return null;
                });
            }
            if (!taken.await(10, TimeUnit.SECONDS)) {
                held.close();
                throw new AssertionError("could not take every permit of " + workload);
            }
            return held;
        }

        @Override
        public void close() {
            release.countDown();
            holders.close();
        }
    }
}
