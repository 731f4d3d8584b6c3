package dev.dbbulkhead.tools.http;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Recorder;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * HTTP load on a running service, to measure what its users get: a closed loop of clients that each send their next
 * request as soon as the last one is answered (a refused client comes straight back, as a flood of browsers or
 * retrying services does), or an open loop of requests arriving at a fixed rate whatever the answers (Poisson
 * arrivals, each with its client's timeout). One line per run: 200s per second, 200s within the in-time bound per
 * second, refusals (503 and 429) per second, other answers, client timeouts, and the 200s' p50 and p99; the same for
 * the slow page when one is mixed in. Bounded in time by {@code --duration}; sends only to the URL given.
 */
@Command(
        name = "http-load",
        mixinStandardHelpOptions = true,
        description = "Closed- or open-loop HTTP load on one service; prints one line of what its clients got.")
public final class HttpLoadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--url", required = true, description = "the page to request (GET)")
    URI url;

    @Option(names = "--slow-url", description = "a slower page, mixed in at --slow-share of the requests")
    @Nullable
    URI slowUrl;

    @Option(names = "--slow-share", defaultValue = "0.1", description = "the share of requests to --slow-url")
    double slowShare;

    @Option(names = "--connections", defaultValue = "0", description = "closed loop: this many clients")
    int connections;

    @Option(names = "--rate", defaultValue = "0", description = "open loop: requests per second (Poisson)")
    double rate;

    @Option(names = "--duration", defaultValue = "20", description = "seconds measured, after the warm-up")
    double durationSeconds;

    @Option(names = "--warmup", defaultValue = "5", description = "seconds of load sent, not counted, before")
    double warmupSeconds;

    @Option(names = "--timeout-ms", defaultValue = "5000", description = "a client gives up on a request after this")
    long timeoutMs;

    @Option(names = "--in-time-ms", defaultValue = "1000", description = "a 200 counts as in time within this")
    long inTimeMs;

    @Option(names = "--label", defaultValue = "", description = "the line's first word")
    String label;

    /** What one page's requests got, in the measured window. */
    static final class Tally {
        final Recorder ok = new Recorder(3);
        final LongAdder inTime = new LongAdder();
        final LongAdder refused = new LongAdder();
        final LongAdder other = new LongAdder();
        final LongAdder timeouts = new LongAdder();
        final LongAdder failed = new LongAdder();

        void reset() {
            ok.reset();
            for (var a : List.of(inTime, refused, other, timeouts, failed)) {
                a.reset();
            }
        }

        String line(String page, double seconds) {
            var h = ok.getIntervalHistogram();
            long n = h.getTotalCount();
            return String.format(
                    Locale.ROOT,
                    "%s: ok/s=%.1f intime/s=%.1f refused/s=%.1f other=%d timeouts=%d failed=%d p50ms=%.1f p99ms=%.1f",
                    page,
                    n / seconds,
                    inTime.sum() / seconds,
                    refused.sum() / seconds,
                    other.sum(),
                    timeouts.sum(),
                    failed.sum(),
                    n == 0 ? Double.NaN : h.getValueAtPercentile(50) / 1e6,
                    n == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1e6);
        }
    }

    private final Tally fast = new Tally();
    private final Tally slow = new Tally();
    private volatile boolean counting;
    private volatile boolean stopping;

    @Override
    public Integer call() throws Exception {
        if ((connections > 0) == (rate > 0)) {
            throw new ParameterException(
                    spec.commandLine(), "give one of --connections (closed loop) or --rate (open loop)");
        }
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
                Http1 client = new Http1(url)) {
            long start = System.nanoTime();
            long measureFrom = start + (long) (warmupSeconds * 1e9);
            long end = measureFrom + (long) (durationSeconds * 1e9);
            if (connections > 0) {
                for (int i = 0; i < connections; i++) {
                    threads.execute(() -> {
                        while (!stopping) {
                            send(client);
                        }
                    });
                }
            } else {
                threads.execute(() -> arrivals(client, threads, end));
            }
            sleepUntil(measureFrom);
            fast.reset();
            slow.reset();
            counting = true;
            sleepUntil(end);
            counting = false;
            stopping = true;
            double seconds = durationSeconds;
            String mode =
                    connections > 0 ? "closed c=" + connections : String.format(Locale.ROOT, "open rate=%.0f", rate);
            PrintWriter out = spec.commandLine().getOut();
            out.println((label.isEmpty() ? "" : label + " ") + mode + " " + fast.line("page", seconds)
                    + (slowUrl == null ? "" : " | " + slow.line("slow", seconds)));
            out.flush();
            threads.shutdownNow();
            threads.awaitTermination(timeoutMs + 1_000, TimeUnit.MILLISECONDS);
        }
        return 0;
    }

    /** Poisson arrivals at {@link #rate} until {@code end}, each request on a thread of its own. */
    private void arrivals(Http1 client, ExecutorService threads, long end) {
        double meanGapNanos = 1e9 / rate;
        long next = System.nanoTime();
        while (!stopping && next < end) {
            next += (long) (-Math.log(1 - ThreadLocalRandom.current().nextDouble()) * meanGapNanos);
            sleepUntil(next);
            try {
                threads.execute(() -> send(client));
            } catch (RejectedExecutionException ended) {
                return; // the run ended while this arrival was due: the executor no longer takes any
            }
        }
    }

    private void send(Http1 client) {
        boolean toSlow = slowUrl != null && ThreadLocalRandom.current().nextDouble() < slowShare;
        Tally tally = toSlow ? slow : fast;
        URI target = toSlow && slowUrl != null ? slowUrl : url;
        long t0 = System.nanoTime();
        try {
            int status = client.get(target, (int) timeoutMs);
            long took = System.nanoTime() - t0;
            if (!counting) {
                return;
            }
            if (status == 200) {
                tally.ok.recordValue(took);
                if (took <= inTimeMs * 1_000_000) {
                    tally.inTime.increment();
                }
            } else if (status == 503 || status == 429) {
                tally.refused.increment();
            } else {
                tally.other.increment();
            }
        } catch (Http1.TimedOut e) {
            if (counting) {
                tally.timeouts.increment();
            }
        } catch (IOException | RuntimeException e) {
            if (counting) {
                tally.failed.increment();
            }
            LockSupport.parkNanos(1_000_000); // a refused connection: do not spin
        }
    }

    private static void sleepUntil(long nanoTime) {
        long left;
        while ((left = nanoTime - System.nanoTime()) > 0) {
            LockSupport.parkNanos(left);
        }
    }
}
