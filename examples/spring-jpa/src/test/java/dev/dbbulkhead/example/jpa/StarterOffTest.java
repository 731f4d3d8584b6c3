package dev.dbbulkhead.example.jpa;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DbBulkhead;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;

/**
 * The JPA example starts and serves with the starter switched off ({@code db-bulkhead.enabled=false}): no barrier,
 * and {@code GET /owners} straight on the pool, as the flood benchmark's "off" side.
 */
class StarterOffTest {
    @Test
    void theServiceStartsAndServesWithTheStarterSwitchedOff() throws Exception {
        try (var app =
                SpringApplication.run(OwnersApplication.class, "--db-bulkhead.enabled=false", "--server.port=0")) {
            assertThat(app.getBeanNamesForType(DbBulkhead.class)).isEmpty();
            String port = app.getEnvironment().getProperty("local.server.port");
            try (var http = HttpClient.newHttpClient()) {
                var answer = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/owners?lastName=Da"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(answer.statusCode()).isEqualTo(200);
            }
        }
    }
}
