package dev.dbbulkhead.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;

/**
 * The service started cold, then hit at once by a burst: every answer is 200 or 503, never a 500 (a cold pool used
 * to time out inside admitted requests, 2 starts in 3). {@code -Dcoldstarts=N} starts (2 in {@code bin/test}, 20 with
 * {@code -Pfull}) of a 120-request burst each.
 */
class ColdStartBurstTest {
    private static final int STARTS = Integer.getInteger("coldstarts", 2);
    private static final int BURST = 120;

    @Test
    void aBurstRightAfterAColdStartGetsOnly200Or503() throws Exception {
        var statuses = new TreeMap<Integer, Integer>();
        for (int start = 0; start < STARTS; start++) {
            var app = new SpringApplication(SpringServiceApplication.class);
            app.setDefaultProperties(Map.of("server.port", "0", "spring.sql.init.mode", "always"));
            try (var context = app.run()) {
                int port =
                        ((WebServerApplicationContext) context).getWebServer().getPort();
                burst(port).forEach((status, count) -> statuses.merge(status, count, Integer::sum));
            }
        }
        System.out.println(STARTS + " cold starts x " + BURST + " requests: statuses " + statuses);
        assertThat(statuses.keySet()).as("statuses over %d cold starts", STARTS).isSubsetOf(200, 503);
        assertThat(statuses.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(STARTS * BURST);
        assertThat(statuses.get(200)).as("some were served").isPositive();
    }

    private static Map<Integer, Integer> burst(int port) throws Exception {
        var http = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .build();
        var go = new CountDownLatch(1);
        var statuses = new TreeMap<Integer, Integer>();
        try (var callers = Executors.newVirtualThreadPerTaskExecutor()) {
            var calls = new ArrayList<Future<Integer>>();
            for (int i = 0; i < BURST; i++) {
                calls.add(callers.submit(() -> {
                    go.await();
                    return http.send(
                                    HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/products"))
                                            .timeout(Duration.ofSeconds(30))
                                            .build(),
                                    HttpResponse.BodyHandlers.discarding())
                            .statusCode();
                }));
            }
            go.countDown();
            for (var call : calls) {
                statuses.merge(call.get(60, TimeUnit.SECONDS), 1, Integer::sum);
            }
        }
        return statuses;
    }
}
