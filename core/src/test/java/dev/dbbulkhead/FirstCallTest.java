package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.testkit.TestDatabase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * One-time costs are paid when the barrier is built, never inside the first caller's deadline: in a fresh JVM (the
 * only place where they show), on the real PostgreSQL, the first transaction with a 50 ms deadline must be served.
 * Loading and registering the flight-recorder events alone took 70–150 ms there before they moved into the
 * constructor (the child then failed with "deadline exceeded before admission").
 */
class FirstCallTest {
    /** Run in its own JVM by the test, with DB_URL pointing at this JVM's server. */
    public static void main(String[] args) throws Exception {
        try (var pool = TestDatabase.get().pool(1, Duration.ofSeconds(5))) {
            pool.getConnection().close(); // the pool's own first connection is not the barrier's cost
            var gate = new DbBulkhead(pool, 1, 0);
            var deadline = Deadline.in(Duration.ofMillis(50));
            long start = System.nanoTime();
            int value = gate.transaction(deadline, c -> Db.count(c, "SELECT 42"));
            System.out.println("first=" + value + " in " + (System.nanoTime() - start) / 1_000 + " us");
        }
    }

    @Test
    void theFirstCallOfAFreshJvmFitsInA50msDeadline() throws Exception {
        var db = TestDatabase.get();
        var java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        var child = new ProcessBuilder(
                        java, "-cp", System.getProperty("java.class.path"), FirstCallTest.class.getName())
                .redirectErrorStream(true);
        child.environment().put("DB_URL", db.jdbcUrl());
        child.environment().put("DB_USER", db.user());
        child.environment().put("DB_PASSWORD", db.password());
        Process process = child.start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(output).as("exit %d", process.exitValue()).contains("first=42 in ");
        assertThat(process.exitValue()).isZero();
    }
}
