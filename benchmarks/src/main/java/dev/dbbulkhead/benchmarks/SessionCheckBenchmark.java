package dev.dbbulkhead.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the session check costs (issue "Truth, sixth pass", point 3): one statement per transaction, 4 threads on a
 * pool of 4 and a barrier of 4 (nobody waits for a permit), on a real PostgreSQL ({@code DB_URL}, or an embedded
 * server), through {@code transaction()} and on the bare pool, for a plain statement, a {@code DO} block whose body
 * shows no session change (read, not checked), a {@code DO} block with dynamic SQL and a {@code CALL} (both checked:
 * the session is compared around the transaction).
 *
 * <pre>DB_URL=... taskset -c 1 bin/bench SessionCheckBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 4, time = 2)
@Threads(4)
@Fork(
        value = 2,
        jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class SessionCheckBenchmark {
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** The statement each transaction sends. */
    @Param({"plain", "do", "do-execute", "call"})
    public String statement = "plain";

    private String sql;
    private HikariDataSource pool;
    private DbBulkhead gate;

    @Setup
    public void setUp() throws SQLException {
        pool = TestDatabase.get().pool(4, Duration.ofSeconds(10));
        gate = DbBulkhead.builder(pool).workload("bench", 4, 0).build();
        try (Connection c = pool.getConnection();
                var s = c.createStatement()) {
            s.execute("CREATE OR REPLACE PROCEDURE session_bench_nothing() LANGUAGE plpgsql AS $$BEGIN END$$");
        }
        sql = switch (statement) {
            case "plain" -> "SELECT 1";
            case "do" -> "DO $$BEGIN PERFORM 1; END$$";
            case "do-execute" -> "DO $$BEGIN EXECUTE 'SELECT 1'; END$$";
            case "call" -> "CALL session_bench_nothing()";
            default -> throw new IllegalArgumentException("statement: " + statement);
        };
    }

    @TearDown
    public void tearDown() {
        pool.close();
    }

    @Benchmark
    public Object barrier() throws SQLException, InterruptedException {
        return gate.transaction(WAIT, c -> {
            try (var s = c.createStatement()) {
                return s.execute(sql);
            }
        });
    }

    @Benchmark
    public Object barePool() throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (var s = c.createStatement()) {
                boolean result = s.execute(sql);
                c.commit();
                return result;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }
}
