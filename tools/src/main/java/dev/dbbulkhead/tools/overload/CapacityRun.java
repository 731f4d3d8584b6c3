package dev.dbbulkhead.tools.overload;

import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DeadlineExceededException;
import dev.dbbulkhead.KindCappedException;
import dev.dbbulkhead.LoadShedException;
import dev.dbbulkhead.QueueTimeoutException;
import dev.dbbulkhead.WouldTimeOutException;
import dev.dbbulkhead.tools.support.Failures;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * One open-loop run of a capacity scenario through one configuration: Poisson arrivals (seeded) at a fixed mean
 * rate, each with a deadline from its intended start; the limit in force sampled every 50 ms.
 */
final class CapacityRun {
    private static final long HIGHEST = TimeUnit.MINUTES.toNanos(10);
    private static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** How one operation ended. */
    enum Result {
        /** Committed by its deadline. */
        IN_SLO,
        /** Committed after its deadline: useless to a caller that has given up. */
        LATE,
        /** Refused at once, holding nothing: admission full, predicted, a limiter's rejection. */
        REFUSED,
        /** Admitted, then timed out: in the queue, in the pool, or cancelled in the database. */
        WASTED,
        OTHER
    }

    final Tally<Result> counts = new Tally<>(Result.class);
    /** The first operation that failed otherwise ({@link Result#OTHER}), in one line; null while none has. */
    private final AtomicReference<@Nullable String> firstFailure = new AtomicReference<>();

    final Histogram succeeded = new ConcurrentHistogram(HIGHEST, 3);
    final Histogram failed = new ConcurrentHistogram(HIGHEST, 3);
    /** Callers refused after waiting: how long past what they were allowed to wait they were told. */
    final Histogram overshoot = new ConcurrentHistogram(HIGHEST, 3);
    /** (seconds since the start, limit in force, K, each kind's cap by mean hold or NaN) every 50 ms. */
    final List<double[]> limits = new ArrayList<>();

    double seconds;
    /** Per third of the run and kind of operation ({@link CapacityScenario.Work#kind}): arrived. */
    final LongAdder[][] arrived = adders();
    /** Per third of the run and kind of operation: committed within its deadline. */
    final LongAdder[][] inSlo = adders();
    /** Successes of callers that arrived at least {@code settle} into the run (see {@link #run}). */
    final Histogram settled = new ConcurrentHistogram(HIGHEST, 3);
    /** Successes within their deadline, by the {@value #BIN_MILLIS} ms in which they ended. */
    final AtomicLongArray bins = new AtomicLongArray(4_096);

    static final long BIN_MILLIS = 100;
    private long start;
    private long settleAt;
    /** Predictive rejection's audit: {audited, served in time}. */
    long[] audits = new long[2];

    private CapacityRun() {}

    long count(Result r) {
        return counts.count(r);
    }

    @Nullable
    String firstFailure() {
        return firstFailure.get();
    }

    /** Admitted callers (everyone not refused at once) that then timed out, as a share of them. */
    double wastedShare() {
        long admitted = count(Result.IN_SLO) + count(Result.LATE) + count(Result.WASTED) + count(Result.OTHER);
        return admitted == 0 ? 0 : (double) count(Result.WASTED) / admitted;
    }

    /**
     * Successes within their deadline that ended within the run's length, per second: what a workload whose callers
     * queue past the run's end (a long deadline, a large Q) completed while the run lasted.
     */
    double goodputWithinRun() {
        int bins = (int) Math.min(this.bins.length(), Math.round(seconds * 1000 / BIN_MILLIS));
        long n = 0;
        for (int b = 0; b < bins; b++) {
            n += this.bins.get(b);
        }
        return n / seconds;
    }

    /** Successes within their deadline per second. */
    double goodputInSlo() {
        return count(Result.IN_SLO) / seconds;
    }

    private static LongAdder[][] adders() {
        var a = new LongAdder[3][CapacityScenario.KINDS];
        for (LongAdder[] phase : a) {
            for (int k = 0; k < phase.length; k++) {
                phase[k] = new LongAdder();
            }
        }
        return a;
    }

    /** Goodput within SLO per second of the operations of {@code kind}. */
    double goodputInSlo(int kind) {
        return (inSlo[0][kind].sum() + inSlo[1][kind].sum() + inSlo[2][kind].sum()) / seconds;
    }

    /** Goodput within SLO per second in third {@code phase} (0–2) of the run, of every kind. */
    double phaseGoodput(int phase) {
        long n = 0;
        for (LongAdder k : inSlo[phase]) {
            n += k.sum();
        }
        return n / (seconds / 3);
    }

    /** The share of the arrivals that were of {@code kind}. */
    double offeredShare(int kind) {
        long all = 0;
        long of = 0;
        for (LongAdder[] phase : arrived) {
            for (int k = 0; k < phase.length; k++) {
                all += phase[k].sum();
                of += k == kind ? phase[k].sum() : 0;
            }
        }
        return all == 0 ? 0 : (double) of / all;
    }

    /** The mean limit between {@code from} and {@code to} (fractions of the run). */
    double meanLimit(double from, double to) {
        return limits.stream()
                .filter(s -> s[0] >= from * seconds && s[0] < to * seconds)
                .mapToDouble(s -> s[1])
                .average()
                .orElse(Double.NaN);
    }

    static CapacityRun run(
            CapacityGates.Gate gate,
            CapacityScenario.Work work,
            double rate,
            double seconds,
            long deadlineNanos,
            long seed)
            throws InterruptedException {
        return run(gate, work, rate, seconds, deadlineNanos, seed, 0);
    }

    /** {@link #run}, and the successes of callers arriving {@code settleSeconds} or more into it, apart. */
    static CapacityRun run(
            CapacityGates.Gate gate,
            CapacityScenario.Work work,
            double rate,
            double seconds,
            long deadlineNanos,
            long seed,
            double settleSeconds)
            throws InterruptedException {
        var run = new CapacityRun();
        run.seconds = seconds;
        var random = new Random(seed);
        long duration = (long) (seconds * 1e9);
        var done = new LongAdder();
        long started = 0;
        try (ExecutorService tasks = Executors.newVirtualThreadPerTaskExecutor()) {
            long start = System.nanoTime();
            run.start = start;
            run.settleAt = start + (long) (settleSeconds * 1e9);
            var stop = new CountDownLatch(1);
            Thread sampler = Thread.ofPlatform().daemon().name("limit-sampler").start(() -> {
                do {
                    double t = (System.nanoTime() - start) / 1e9;
                    synchronized (run.limits) {
                        run.limits.add(sample(t, gate.limit(), work.capacityAt(t / seconds), gate.caps()));
                    }
                } while (!await(stop));
            });
            long intended = start;
            while (true) {
                intended += (long) (-Math.log(1 - random.nextDouble()) * 1e9 / rate); // exponential gaps
                if (intended - start >= duration) {
                    break;
                }
                long now = System.nanoTime();
                if (intended > now) {
                    LockSupport.parkNanos(intended - now);
                }
                long at = intended;
                double u = random.nextDouble();
                double fraction = (at - start) / (double) duration;
                String sql = work.sql(fraction, u);
                int kind = work.kind(fraction, u);
                int phase = Math.min(2, (int) (3 * fraction));
                started++;
                tasks.execute(() -> {
                    run.operation(gate, sql, kind, phase, at, at + deadlineNanos);
                    done.increment();
                });
            }
            while (done.sum() < started) {
                Thread.sleep(5);
            }
            stop.countDown();
            sampler.join();
        }
        run.audits = gate.audits();
        return run;
    }

    /**
     * Bursts of {@code size} callers released at once from a latch, one burst every two deadlines (at least 100 ms)
     * for {@code seconds}; each caller's deadline counts from the release.
     */
    static CapacityRun bursts(
            CapacityGates.Gate gate, CapacityScenario.Work work, int size, double seconds, long deadlineNanos)
            throws InterruptedException {
        var run = new CapacityRun();
        run.seconds = seconds;
        long gap = Math.max(TimeUnit.MILLISECONDS.toNanos(100), 2 * deadlineNanos);
        long duration = (long) (seconds * 1e9);
        String sql = work.sql(0, 0);
        try (ExecutorService tasks = Executors.newVirtualThreadPerTaskExecutor()) {
            long start = System.nanoTime();
            for (long next = start; next - start < duration; next += gap) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                var ready = new CountDownLatch(size);
                var go = new CountDownLatch(1);
                long[] releasedAt = new long[1];
                var done = new CountDownLatch(size);
                for (int i = 0; i < size; i++) {
                    tasks.execute(() -> {
                        ready.countDown();
                        try {
                            go.await();
                            run.operation(gate, sql, 0, 0, releasedAt[0], releasedAt[0] + deadlineNanos);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } finally {
                            done.countDown();
                        }
                    });
                }
                ready.await();
                releasedAt[0] = System.nanoTime(); // published to the callers by the latch
                go.countDown();
                done.await();
                run.limits.add(sample((System.nanoTime() - start) / 1e9, gate.limit(), 0, new double[0]));
            }
        }
        run.audits = gate.audits();
        return run;
    }

    /** {seconds, limit, K, then each kind's cap (by mean hold) or NaN}. */
    private static double[] sample(double seconds, int limit, int capacity, double[] caps) {
        double[] s = new double[3 + CapacityScenario.KINDS];
        s[0] = seconds;
        s[1] = limit;
        s[2] = capacity;
        for (int k = 0; k < CapacityScenario.KINDS; k++) {
            s[3 + k] = k < caps.length ? caps[k] : Double.NaN;
        }
        return s;
    }

    private static boolean await(CountDownLatch latch) {
        try {
            return latch.await(SAMPLE_NANOS, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    private void operation(CapacityGates.Gate gate, String sql, int kind, int phase, long intended, long deadline) {
        Throwable failure = null;
        long called = System.nanoTime();
        try {
            gate.execute(deadline, kind, c -> {
                try (var statement = c.createStatement()) {
                    statement.execute(sql);
                }
            });
        } catch (SQLException | InterruptedException | RuntimeException e) {
            failure = e;
        }
        long end = System.nanoTime();
        Result result = failure != null ? classify(failure) : end <= deadline ? Result.IN_SLO : Result.LATE;
        counts.add(result);
        if (result == Result.OTHER && failure != null) {
            firstFailure.compareAndSet(null, oneCell(Failures.oneLine(failure)));
        }
        arrived[phase][kind].increment();
        if (result == Result.IN_SLO) {
            inSlo[phase][kind].increment();
            int bin = (int) ((end - start) / (BIN_MILLIS * 1_000_000));
            if (bin >= 0 && bin < bins.length()) {
                bins.incrementAndGet(bin);
            }
        }
        long latency = Math.min(HIGHEST, Math.max(0, end - intended));
        (failure == null ? succeeded : failed).recordValue(latency);
        if (failure == null && intended >= settleAt) {
            settled.recordValue(latency);
        }
        if (failure instanceof BulkheadRejectedException refused && waitedAndRefused(refused)) {
            overshoot.recordValue(Math.min(
                    HIGHEST, Math.max(0, end - called - refused.allowedWait().toNanos())));
        }
    }

    /** A rejection told when the caller's wait for a permit ended: its queue wait, deadline or reserve. */
    private static boolean waitedAndRefused(@Nullable Throwable t) {
        return t instanceof QueueTimeoutException
                || (t instanceof WouldTimeOutException w && !w.waited().isZero())
                || (t instanceof DeadlineExceededException d
                        && d.stage() == DeadlineExceededException.Stage.PERMIT_WAIT);
    }

    /** {@code line} as a Markdown table cell holds it: no bar, at most 100 characters. */
    private static String oneCell(String line) {
        String cell = line.replace('|', '/');
        return cell.length() <= 100 ? cell : cell.substring(0, 99) + "…";
    }

    static Result classify(@Nullable Throwable t) {
        if (t instanceof AdmissionFullException
                || t instanceof WouldTimeOutException
                || t instanceof LoadShedException
                || t instanceof KindCappedException
                || t instanceof CapacityGates.LimiterRejected) {
            return Result.REFUSED;
        }
        if (t instanceof DeadlineExceededException d) {
            return d.stage() == DeadlineExceededException.Stage.BEFORE_ADMISSION ? Result.REFUSED : Result.WASTED;
        }
        if (t instanceof QueueTimeoutException
                || t instanceof SQLTransientConnectionException
                || (t instanceof SQLException s && "57014".equals(s.getSQLState()))) {
            return Result.WASTED;
        }
        return Result.OTHER;
    }
}
