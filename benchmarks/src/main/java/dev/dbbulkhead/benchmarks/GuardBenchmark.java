package dev.dbbulkhead.benchmarks;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.SqlWork;
import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The cost of the guard that {@code transaction()} puts around the connection, its statements and result sets, on a
 * real PostgreSQL ({@code DB_URL}, or an embedded server): the same work through {@code transaction()} and on the raw
 * pgJDBC connection of the same one-connection HikariCP pool, in a transaction each. A 100,000-row × 10-column scan
 * ({@code next} and ten getters per row through the guarded result set) and a 1,000-row batch insert (ten setters
 * and {@code addBatch} per row through the guarded prepared statement).
 *
 * <pre>DB_URL=... bin/bench GuardBenchmark -f 3</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
        value = 3,
        jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
public class GuardBenchmark {
    static final int SCAN_ROWS = 100_000;
    static final int BATCH_ROWS = 1_000;
    static final Duration WAIT = Duration.ofSeconds(5);
    private static final String SCAN = "SELECT g, g + 1, g + 2, g + 3, g + 4, 'a' || g, 'b' || g, 'c' || g, 'd' || g, "
            + "'e' || g FROM generate_series(1, " + SCAN_ROWS + ") g";
    private static final String INSERT = "INSERT INTO guard_bench VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

    private HikariDataSource pool;
    private DbBulkhead gate;

    @Setup
    public void setUp() throws SQLException {
        pool = TestDatabase.get().pool(1, Duration.ofSeconds(10));
        gate = DbBulkhead.builder(pool).workload("bench", 1, 0).build();
        try (Connection c = pool.getConnection();
                var s = c.createStatement()) {
            s.execute("CREATE UNLOGGED TABLE IF NOT EXISTS guard_bench (a bigint, b bigint, c bigint, d bigint, "
                    + "e bigint, f text, g text, h text, i text, j text)");
        }
    }

    @Setup(Level.Iteration)
    public void empty() throws SQLException {
        try (Connection c = pool.getConnection();
                var s = c.createStatement()) {
            s.execute("TRUNCATE guard_bench");
        }
    }

    @TearDown
    public void tearDown() throws SQLException {
        try (Connection c = pool.getConnection();
                var s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS guard_bench");
        }
        pool.close();
    }

    @Benchmark
    public long scanRaw(Blackhole bh) throws SQLException {
        return raw(c -> scan(c, bh));
    }

    @Benchmark
    public long scanGuarded(Blackhole bh) throws SQLException, InterruptedException {
        return gate.transaction(WAIT, c -> scan(c, bh));
    }

    @Benchmark
    public long batchRaw() throws SQLException {
        return raw(GuardBenchmark::batch);
    }

    @Benchmark
    public long batchGuarded() throws SQLException, InterruptedException {
        return gate.transaction(WAIT, GuardBenchmark::batch);
    }

    private static long scan(Connection c, Blackhole bh) throws SQLException {
        long rows = 0;
        try (var s = c.prepareStatement(SCAN);
                var r = s.executeQuery()) {
            while (r.next()) {
                for (int i = 1; i <= 5; i++) {
                    bh.consume(r.getLong(i));
                }
                for (int i = 6; i <= 10; i++) {
                    bh.consume(r.getString(i));
                }
                rows++;
            }
        }
        return rows;
    }

    private static long batch(Connection c) throws SQLException {
        try (var s = c.prepareStatement(INSERT)) {
            for (int row = 0; row < BATCH_ROWS; row++) {
                for (int i = 1; i <= 5; i++) {
                    s.setLong(i, row + i);
                }
                for (int i = 6; i <= 10; i++) {
                    s.setString(i, "v" + row);
                }
                s.addBatch();
            }
            return s.executeBatch().length;
        }
    }

    /** The work in a transaction on the pool's raw connection, as a transaction template runs it. */
    private long raw(SqlWork<Long> work) throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try {
                long value = work.run(c);
                c.commit();
                return value;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }
}
