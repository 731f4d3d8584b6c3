package dev.dbbulkhead.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.QueueTimeoutException;
import dev.dbbulkhead.testkit.TestDatabase;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A rejection thrown out of a controller, over a real HTTP port: 503 with Retry-After and a problem body; the
 * application's own handler wins where it has one; Spring Boot's problem details keep working.
 */
@SpringBootTest(
        classes = ProblemResponseTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "db-bulkhead.workloads.w.concurrent=1",
            "db-bulkhead.workloads.w.extra-slots=1",
            "db-bulkhead.workloads.w.queue-wait=0ms",
            "db-bulkhead.web.retry-after=1500ms",
            "spring.mvc.problemdetails.enabled=true",
            "spring.datasource.hikari.maximum-pool-size=2",
            "spring.datasource.hikari.connection-timeout=250",
            "spring.jpa.open-in-view=false"
        })
class ProblemResponseTest {
    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        TestDatabase db = TestDatabase.get();
        registry.add("spring.datasource.url", db::jdbcUrl);
        registry.add("spring.datasource.username", db::user);
        registry.add("spring.datasource.password", db::password);
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @RestController
        static class Busy {
            private final DbBulkhead db;

            Busy(DbBulkhead db) {
                this.db = db;
            }

            /** Asks for the workload's one permit while a test holds it. */
            @GetMapping("/busy")
            String busy() throws Exception {
                try (Lease lease = db.acquire(Duration.ZERO)) {
                    return "admitted";
                }
            }
        }

        /** Admitted work whose pool has no connection to give: the pool's timeout, inside the admission. */
        @RestController
        static class Pooled {
            private final org.springframework.jdbc.core.JdbcTemplate jdbc;

            Pooled(javax.sql.DataSource dataSource) {
                this.jdbc = new org.springframework.jdbc.core.JdbcTemplate(dataSource);
            }

            @GetMapping("/pooled")
            @dev.dbbulkhead.spring.DbWorkload("w")
            public String pooled() {
                return String.valueOf(jdbc.queryForObject("SELECT 1", Integer.class));
            }
        }

        @org.springframework.context.annotation.Bean
        io.micrometer.core.instrument.MeterRegistry meterRegistry() {
            return new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        }

        @RestController
        static class Polite {
            private final DbBulkhead db;

            Polite(DbBulkhead db) {
                this.db = db;
            }

            @GetMapping("/polite")
            String polite() throws Exception {
                try (Lease lease = db.acquire(Duration.ZERO)) {
                    return "admitted";
                }
            }

            @ExceptionHandler(QueueTimeoutException.class)
            ResponseEntity<String> mine(QueueTimeoutException e) {
                return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).body("handled by the application");
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    DbBulkhead db;

    @Autowired
    javax.sql.DataSource dataSource;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    private final HttpClient http = HttpClient.newHttpClient();

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void rejectionsBecome503ProblemsUnlessTheApplicationHandlesThem() throws Exception {
        assertThat(get("/busy").body()).isEqualTo("admitted");
        var release = new CountDownLatch(1);
        var held = new CountDownLatch(1);
        var holder = Executors.newVirtualThreadPerTaskExecutor();
        try {
            holder.submit(() -> {
                try (Lease lease = db.acquire(Duration.ofSeconds(5))) {
                    held.countDown();
                    release.await();
                }
                return null;
            });
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();

            var busy = get("/busy");
            assertThat(busy.statusCode()).isEqualTo(503);
            assertThat(busy.headers().firstValue("Retry-After"))
                    .as("1.5 s rounded up")
                    .hasValue("2");
            assertThat(busy.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/problem+json");
            assertThat(busy.body())
                    .isEqualTo(
                            "{\"type\":\"about:blank\",\"title\":\"Service Unavailable\","
                                    + "\"status\":503,\"detail\":\"The database is at capacity: no capacity freed up within the queue "
                                    + "wait. Retry after 2 s.\",\"instance\":\"/busy\",\"reason\":\"QUEUE_TIMEOUT\",\"workload\":\"w\"}");

            assertThat(KeepAlive.statuses(port, "/busy", 3))
                    .as("Tomcat closes the connection after a 503")
                    .containsExactly(503);

            var polite = get("/polite");
            assertThat(polite.statusCode()).isEqualTo(429);
            assertThat(polite.body()).isEqualTo("handled by the application");
        } finally {
            release.countDown();
            holder.close();
        }
        var notAllowed = http.send(
                HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/busy"))
                        .DELETE()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(notAllowed.statusCode()).as("Spring's own problem details").isEqualTo(405);
        assertThat(notAllowed.headers().firstValue("Content-Type").orElseThrow())
                .startsWith("application/problem+json");
        assertThat(notAllowed.body()).contains("\"status\":405");
    }

    /**
     * A pool that cannot hand out a connection to admitted work in time (here every connection is taken outside the
     * barrier) is overload, answered as a rejection is: 503, reason POOL_TIMEOUT, counted for the workload, and never
     * a 500 with the pool's stack trace.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aPoolTimeoutInsideAdmittedWorkIsA503CountedForItsWorkload() throws Exception {
        assertThat(get("/pooled").body()).isEqualTo("1");
        try (var first = dataSource.getConnection();
                var second = dataSource.getConnection()) {
            var response = get("/pooled");
            assertThat(response.statusCode()).isEqualTo(503);
            assertThat(response.headers().firstValue("Retry-After")).hasValue("2");
            assertThat(response.body())
                    .isEqualTo("{\"type\":\"about:blank\",\"title\":\"Service Unavailable\","
                            + "\"status\":503,\"detail\":\"The database is at capacity: no connection was free in time. "
                            + "Retry after 2 s.\",\"instance\":\"/pooled\",\"reason\":\"POOL_TIMEOUT\"}");
        }
        assertThat(meters.get(dev.dbbulkhead.micrometer.BulkheadMeterNames.POOL_TIMEOUTS)
                        .tag("workload", "w")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(get("/pooled").body()).as("and it serves again").isEqualTo("1");
        assertThat(db.workload("w").available()).isEqualTo(1);
    }
}
