package dev.dbbulkhead.internal;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.DeadlineExceededException.Stage;
import dev.dbbulkhead.Outcome;
import dev.dbbulkhead.RejectionReason;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import java.lang.System.Logger;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * The internals of one barrier, built once from what its builder checked: the telemetry, the per-thread frames and
 * the transaction runner its workloads share, one {@link Workload} per {@link WorkloadConfig}, and, when one of them is
 * elastic, the {@link Arbiter} that shares the barrier's limit between them, and the {@link BarrierClock} that runs
 * their periodic work. The only door from the API package into
 * this one.
 */
public final class Barrier {
    private Barrier() {}

    /** The barrier-wide settings, as its builder checked them. */
    public record Options(
            String name,
            DataSource source,
            List<BulkheadListener> listeners,
            LongSupplier clock,
            boolean statementTimeouts,
            boolean lockTimeouts,
            Duration leakThreshold,
            Rejections rejections,
            int sharedLimit) {}

    /** The workloads of a barrier, in the order of {@code configs}. */
    public static List<Workload> workloads(Options options, List<WorkloadConfig> configs, Logger log) {
        // Initialise here the classes a rejection or an outcome needs: a class whose initialisation fails (say, on
        // a caller at its stack limit) stays unusable for the JVM's lifetime, so it must not happen in a call.
        initialised(
                RejectionReason.values(), Outcome.values(), Stage.values(), Permits.Entry.values(), Snapshot.millis(0));
        var telemetry = new Telemetry(options.listeners(), options.clock(), log);
        var runner =
                new TransactionRunner(options.source(), telemetry, options.statementTimeouts(), options.lockTimeouts());
        long leakThreshold = Nanos.of(options.leakThreshold());
        var shared = new Admission.Shared(
                options.name(),
                new Frames(leakThreshold, options.clock()),
                telemetry,
                options.rejections(),
                new Leaks(leakThreshold, telemetry),
                options.sharedLimit());
        var workloads = new ArrayList<WorkloadImpl>(configs.size());
        for (WorkloadConfig config : configs) {
            workloads.add(new WorkloadImpl(config, shared, runner));
        }
        var ticking = workloads.stream()
                .map(WorkloadImpl::controls)
                .filter(Controls::ticks)
                .toList();
        if (!ticking.isEmpty()) {
            var members = ticking.stream()
                    .map(Controls::member)
                    .filter(Objects::nonNull)
                    .toList();
            var arbiter = members.isEmpty() ? null : new Arbiter(options.sharedLimit(), members, telemetry.now());
            BarrierClock.start(new BarrierClock(options.name(), ticking, arbiter, telemetry.clock(), log));
        }
        return List.copyOf(workloads);
    }

    /**
     * What the barrier of {@code workload} cannot keep on its database, logged once, or empty: read from one
     * connection unless a transaction has already.
     */
    public static Optional<String> unkept(Workload workload) throws SQLException {
        return Optional.ofNullable(((WorkloadImpl) workload).unkept());
    }

    @SuppressWarnings("UnusedVariable") // evaluating the arguments is the point
    private static void initialised(Object... classes) {
        // Nothing to do: evaluating the arguments initialised them.
    }
}
