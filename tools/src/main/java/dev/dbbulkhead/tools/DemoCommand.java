package dev.dbbulkhead.tools;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.testkit.TestDatabase;
import dev.dbbulkhead.tools.support.PostgresOnly;
import java.io.PrintStream;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;

/**
 * The article's scenario: a pool of 2, B=1, Q=0. While a first transaction holds the only execution permit, a
 * second is rejected at once; then the first commits and the permit is back. Prints exactly
 * {@code overload=rejected}, {@code query=42}, {@code available=1}.
 */
@Command(
        name = "demo",
        header = "Run the article's demo on PostgreSQL: prints overload=rejected, query=42, available=1.",
        mixinStandardHelpOptions = true,
        description = "Run the article's scenario (pool 2, B=1, Q=0) on PostgreSQL: DB_URL/DB_USER/DB_PASSWORD "
                + "when set, else an embedded server.")
public final class DemoCommand implements Callable<Integer> {
    private static final long STEP_SECONDS = 5;

    @Override
    public Integer call() throws Exception {
        PostgresOnly.check();
        run(TestDatabase.get(), System.out);
        return 0;
    }

    static void run(TestDatabase db, PrintStream out) throws Exception {
        try (HikariDataSource pool = db.pool(2, Duration.ofMillis(500));
                var tasks = Executors.newVirtualThreadPerTaskExecutor()) {
            var gate = new DbBulkhead(pool, 1, 0);
            var entered = new CountDownLatch(1);
            var release = new CountDownLatch(1);
            var first = tasks.submit(() -> gate.transaction(Duration.ZERO, connection -> {
                try (var statement = connection.createStatement();
                        var rows = statement.executeQuery("SELECT 42")) {
                    rows.next();
                    int value = rows.getInt(1);
                    entered.countDown();
                    awaitRelease(release);
                    return value;
                }
            }));
            try {
                if (!entered.await(STEP_SECONDS, TimeUnit.SECONDS)) {
                    throw new IllegalStateException(
                            "the first transaction did not start within " + STEP_SECONDS + " s");
                }
                var second = tasks.submit(() -> gate.transaction(Duration.ZERO, connection -> 0));
                try {
                    second.get(STEP_SECONDS, TimeUnit.SECONDS);
                    throw new IllegalStateException("the second transaction was admitted; it must be rejected");
                } catch (ExecutionException failure) {
                    if (!(failure.getCause() instanceof RejectedExecutionException)) {
                        throw failure;
                    }
                    out.println("overload=rejected");
                }
            } finally {
                release.countDown();
            }
            out.println("query=" + first.get(STEP_SECONDS, TimeUnit.SECONDS));
            out.println("available=" + gate.available());
        }
    }

    private static void awaitRelease(CountDownLatch release) throws SQLException {
        try {
            if (!release.await(STEP_SECONDS, TimeUnit.SECONDS)) {
                throw new SQLException("demo coordination timed out");
            }
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new SQLException("demo interrupted", interrupted);
        }
    }
}
