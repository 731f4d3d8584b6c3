package dev.dbbulkhead.internal;

import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the guard's reading of SQL costs per statement that work sends ({@code TransactionControl.find}: what every
 * {@code execute}, {@code prepareStatement} and {@code addBatch} runs before the driver), on typical statements.
 * In the core's own package (the class path allows it) to reach the package-private reader; {@code find} has the
 * same signature before and after the session checks, so the same jar compares both cores, one after the other on
 * the class path:
 *
 * <pre>java -cp OLD_CORE.jar:benchmarks/target/benchmarks.jar org.openjdk.jmh.Main SqlGuard.find</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public class SqlGuardBenchmark {
    static final String[] STATEMENTS = {
        "SELECT id, note FROM bulkhead_items WHERE id = ?",
        "INSERT INTO bulkhead_items (id, note) VALUES (?, ?)",
        "UPDATE accounts SET balance = balance - ?, updated_at = now() WHERE id = ? AND balance >= ?",
        "INSERT INTO orders (id, customer_id, status, total) VALUES (?, ?, 'new', ?) ON CONFLICT (id) DO UPDATE "
                + "SET status = EXCLUDED.status, total = EXCLUDED.total",
        "SELECT o.id, o.created_at, c.name, sum(l.quantity * l.price) AS total, string_agg(p.name, ', ') AS items "
                + "FROM orders o JOIN customers c ON c.id = o.customer_id JOIN order_lines l ON l.order_id = o.id "
                + "JOIN products p ON p.id = l.product_id /* the report of the day */ WHERE o.created_at >= now() - "
                + "interval '1 day' AND o.status IN ('paid', 'shipped') AND c.country = ? -- only this country\n"
                + "GROUP BY o.id, o.created_at, c.name HAVING sum(l.quantity * l.price) > 100 ORDER BY total DESC "
                + "LIMIT 50",
    };

    /** Which of {@link #STATEMENTS}: a point select, an insert, an update, an upsert, a 600-character report. */
    @Param({"0", "1", "2", "3", "4"})
    int statement;

    private String sql;

    @Setup
    public void setUp() {
        sql = STATEMENTS[statement];
    }

    @Benchmark
    public @Nullable String find() {
        return TransactionControl.find(sql);
    }

    /**
     * The same statements read by MySQL's rules ({@code MySqlStatements}, the default {@code sql_mode}), for the
     * cost on MySQL against the cost on PostgreSQL ({@link #find}) in one run; new cores only.
     */
    @Benchmark
    public @Nullable Object mysql() {
        return MySqlStatements.inspect(sql, true, false);
    }

    /**
     * A statement's shape ({@code Shapes.of}): what a workload that learns kinds pays on each transaction's first
     * statement, to tell the shapes one call site sends apart.
     */
    @Benchmark
    public long shape() {
        return Shapes.of(sql, false);
    }
}
