package dev.dbbulkhead.tools.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.dbbulkhead.tools.Cli;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code http-load} against a server in this JVM that answers every other request with a 503 and the slow page with a
 * 200: each answer lands in its column, the slow page's apart, in the closed loop and in the open one.
 */
@Tag("no-db")
class HttpLoadCommandTest {
    private HttpServer server;
    private final AtomicLong calls = new AtomicLong();

    @BeforeEach
    void start() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/page", exchange -> {
            int status = calls.incrementAndGet() % 2 == 0 ? 200 : 503;
            exchange.sendResponseHeaders(status, -1);
            exchange.close();
        });
        server.createContext("/slow", exchange -> {
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    private static double column(String line, String page, String name) {
        var m = Pattern.compile(page + ": .*?" + name + "=([0-9.]+)").matcher(line);
        assertThat(m.find()).as("%s %s in %s", page, name, line).isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void aClosedLoopCountsEachAnswerInItsColumn() {
        var result = Cli.run(
                "http-load",
                "--url",
                url("/page"),
                "--slow-url",
                url("/slow"),
                "--slow-share",
                "0.2",
                "--connections",
                "4",
                "--duration",
                "1",
                "--warmup",
                "0.2",
                "--label",
                "test");
        assertThat(result.exit()).as(result.err()).isZero();
        String line = result.out();
        assertThat(line).startsWith("test closed c=4 ");
        assertThat(column(line, "page", "ok/s")).isPositive();
        assertThat(column(line, "page", "intime/s")).isPositive();
        assertThat(column(line, "page", "refused/s")).isPositive();
        assertThat(column(line, "page", "timeouts")).isZero();
        assertThat(column(line, "slow", "ok/s")).isPositive();
        assertThat(column(line, "slow", "refused/s"))
                .as("the slow page never refuses")
                .isZero();
    }

    @Test
    void anOpenLoopSendsAtItsRate() {
        var result = Cli.run("http-load", "--url", url("/page"), "--rate", "200", "--duration", "1", "--warmup", "0.2");
        assertThat(result.exit()).as(result.err()).isZero();
        double answered = column(result.out(), "page", "ok/s") + column(result.out(), "page", "refused/s");
        assertThat(answered)
                .as("answered a second: some, never more than the rate sends (200, and what the warm-up left)")
                .isPositive()
                .isLessThanOrEqualTo(300.0);
    }

    @Test
    void oneLoopMustBeChosen() {
        var result = Cli.run("http-load", "--url", url("/page"));
        assertThat(result.exit()).isEqualTo(2);
        assertThat(result.err()).contains("--connections").contains("--rate");
    }
}
