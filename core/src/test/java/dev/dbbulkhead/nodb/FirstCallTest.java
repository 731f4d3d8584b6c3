package dev.dbbulkhead.nodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.testkit.NoopDataSource;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * One-time costs are paid when the barrier is built, never inside the first caller's deadline: in a fresh JVM (the
 * only place where they show), the first transaction with a 50 ms deadline must not run out of time. Loading and
 * registering the flight-recorder events alone took about 150 ms there before they moved into the constructor.
 */
@Tag("no-db")
class FirstCallTest {
    /** Run in its own JVM by the test. */
    public static void main(String[] args) throws Exception {
        var gate = DbBulkhead.builder(new NoopDataSource()).poolSize(1).statementTimeoutFromDeadline(false)
                .workload("w", 1, 0).build();
        var deadline = Deadline.in(Duration.ofMillis(50));
        long start = System.nanoTime();
        int value = gate.transaction(deadline, c -> 42);
        System.out.println("first=" + value + " in " + (System.nanoTime() - start) / 1_000 + " us");
    }

    @Test
    void theFirstCallOfAFreshJvmFitsInA50msDeadline() throws Exception {
        var java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        var process = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                FirstCallTest.class.getName()).redirectErrorStream(true).start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(output).as("exit %d", process.exitValue()).contains("first=42 in ");
        assertThat(process.exitValue()).isZero();
    }
}
