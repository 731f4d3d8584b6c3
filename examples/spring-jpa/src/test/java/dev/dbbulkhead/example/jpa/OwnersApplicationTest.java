package dev.dbbulkhead.example.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.spring.DbBulkheadAutoConfiguration;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The JPA example over a real HTTP port and the real PostgreSQL: controllers that call an annotated Spring Data
 * repository directly are admitted; under bursts of interactive and batch requests only 200 and 503 (with
 * Retry-After) come back, HikariCP never times out, no connection is taken outside an admission, and every permit
 * and connection is back afterwards.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OwnersApplicationTest {
    @LocalServerPort
    int port;

    @Autowired
    DbBulkhead db;

    @Autowired
    MeterRegistry registry;

    @Autowired
    com.zaxxer.hikari.HikariDataSource pool;

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .executor(Executors.newVirtualThreadPerTaskExecutor())
            .build();

    private HttpResponse<String> send(String method, String path) throws Exception {
        var request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .method(method, HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(20))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void underBurstsOnlyTwoHundredsAndFiveOThreesComeBackAndThePoolNeverTimesOut() throws Exception {
        var found = send("GET", "/owners?lastName=Da");
        assertThat(found.statusCode()).isEqualTo(200);
        assertThat(found.body())
                .contains("Davis (Sun Prairie)", "Davis (Windsor)")
                .doesNotContain("Franklin");

        var answers = new ArrayList<HttpResponse<String>>();
        for (int round = 0; round < 3; round++) {
            answers.addAll(burst(150, "/owners?lastName=", 50, "/reports/cities"));
        }
        assertThat(answers)
                .as("every answer is 200 or 503")
                .allSatisfy(r -> assertThat(r.statusCode()).isIn(200, 503));
        var rejected = answers.stream().filter(r -> r.statusCode() == 503).toList();
        assertThat(answers)
                .as("served")
                .anySatisfy(r -> assertThat(r.statusCode()).isEqualTo(200));
        assertThat(rejected).as("the batch excess is refused").isNotEmpty().allSatisfy(r -> {
            assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(r.body()).contains("\"status\":503");
        });
        long batchRefused = rejected.stream()
                .filter(r -> r.uri().getPath().startsWith("/reports"))
                .count();
        System.out.printf(
                "3 bursts of 150 interactive + 50 batch requests: %d served; refused: %d interactive, %d "
                        + "batch; by reason %s%n",
                answers.size() - rejected.size(),
                rejected.size() - batchRefused,
                batchRefused,
                rejected.stream()
                        .map(r -> r.body().replaceAll(".*\"reason\":\"([A-Z_]+)\".*", "$1"))
                        .collect(java.util.stream.Collectors.groupingBy(
                                x -> x, java.util.TreeMap::new, java.util.stream.Collectors.counting())));

        Counter timeouts = registry.find("hikaricp.connections.timeout").counter();
        assertThat(timeouts).as("HikariCP's meters are bound").isNotNull();
        assertThat(timeouts.count()).as("pool timeouts").isZero();
        FunctionCounter unadmitted =
                registry.find(DbBulkheadAutoConfiguration.UNADMITTED).functionCounter();
        assertThat(unadmitted).isNotNull();
        assertThat(unadmitted.count())
                .as("connections taken outside an admission")
                .isZero();

        var added = send("POST", "/owners?lastName=Coleman&city=Madison");
        assertThat(added.statusCode()).isEqualTo(201);
        for (Workload w : db.workloads()) {
            assertThat(w.available()).as("free permits of %s", w).isEqualTo(w.concurrent());
        }
        assertThat(pool.getHikariPoolMXBean().getActiveConnections())
                .as("connections in use")
                .isZero();
    }

    /** {@code interactive} requests to one path and {@code batch} to another, all released at once. */
    private List<HttpResponse<String>> burst(int interactive, String interactivePath, int batch, String batchPath)
            throws InterruptedException {
        var answers = Collections.synchronizedList(new ArrayList<HttpResponse<String>>());
        var start = new CountDownLatch(1);
        try (var clients = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < interactive + batch; i++) {
                String path = i < interactive ? interactivePath : batchPath;
                clients.submit(() -> {
                    start.await();
                    answers.add(send("GET", path));
                    return null;
                });
            }
            start.countDown();
        }
        return answers;
    }
}
