package dev.dbbulkhead.spring.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Lease;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@code db-bulkhead.web.status=429}: a refusal is a 429 problem, and the client's connection stays open for its
 * next request, where Tomcat closes it after a 503 (so each refused client of a flood comes back through a new TCP
 * connection). Over a real HTTP port, with raw keep-alive requests.
 */
@SpringBootTest(
        classes = ProblemResponseTest.App.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "db-bulkhead.workloads.w.concurrent=1",
            "db-bulkhead.workloads.w.queue-wait=0ms",
            "db-bulkhead.web.status=429",
            "spring.datasource.hikari.maximum-pool-size=2",
            "spring.jpa.open-in-view=false"
        })
class TooManyRequestsTest {
    @DynamicPropertySource
    static void database(DynamicPropertyRegistry registry) {
        ProblemResponseTest.database(registry);
    }

    @LocalServerPort
    int port;

    @Autowired
    DbBulkhead db;

    @Test
    void aRefusalIsA429AndTheConnectionStaysOpen() throws Exception {
        assertThat(KeepAlive.statuses(port, "/busy", 3)).containsExactly(200, 200, 200);
        var release = new CountDownLatch(1);
        var held = new CountDownLatch(1);
        try (var holder = Executors.newVirtualThreadPerTaskExecutor()) {
            holder.submit(() -> {
                try (Lease lease = db.acquire(Duration.ofSeconds(5))) {
                    held.countDown();
                    release.await();
                }
                return null;
            });
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(KeepAlive.statuses(port, "/busy", 3))
                    .as("three refusals on one connection")
                    .containsExactly(429, 429, 429);
            release.countDown();
        }
    }
}
