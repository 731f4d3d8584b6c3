package dev.dbbulkhead.internal;

import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.Priority;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Controls} of a workload that predicts, adapts or shares a limit under priorities: each part present only
 * when its setting asks for it, chosen once here. Thread-safe: callers' threads ask and tell; {@link #tick} and
 * {@link #apply} run on the barrier's clock, one at a time.
 */
final class ConfiguredControls implements Controls {
    private final Workload workload;
    private final Permits permits;
    /** How the permits come back: when the workload predicts or adapts. */
    private final @Nullable Drain drain;
    /** When the workload predicts. */
    private final @Nullable Door door;
    /** The fraction of predicted refusals admitted anyway, to measure false refusals; 0: none. */
    private final double audit;
    /** When the workload's limit adapts. */
    private final @Nullable AdaptiveLimit adaptive;
    /** When the workload learns its kinds of operation. */
    private final @Nullable Kinds kinds;
    /** When the barrier shares its limit between priorities. */
    private final Arbiter.@Nullable Member member;
    /** The barrier's clock, which its scheduled task holds weakly: alive as long as one of its workloads is. */
    @SuppressWarnings({"unused", "FieldCanBeLocal"})
    private @Nullable Object clock;

    /** The controls {@code config} asks for; {@code arbitrated}: the barrier shares a limit between priorities. */
    static Controls of(
            Workload workload, WorkloadConfig config, Permits permits, Telemetry telemetry, boolean arbitrated) {
        if (!config.predictiveRejection() && !config.adaptive() && !config.kinds() && !arbitrated) {
            return NONE;
        }
        return new ConfiguredControls(workload, config, permits, telemetry, arbitrated);
    }

    private ConfiguredControls(
            Workload workload, WorkloadConfig config, Permits permits, Telemetry telemetry, boolean arbitrated) {
        this.workload = workload;
        this.permits = permits;
        this.audit = config.predictiveRejection() ? PredictionAudit.share() : 0; // a measuring hook, see there
        this.kinds = config.kinds() ? new Kinds(permits, telemetry.now()) : null;
        this.member = arbitrated
                ? Arbiter.Member.of(
                        permits,
                        config.priority() == Priority.ELASTIC,
                        config.latencyObjective().orElse(Duration.ZERO),
                        config.borrowing())
                : null;
        this.adaptive = !config.adaptive()
                ? null
                : new AdaptiveLimit(
                        permits,
                        config.adaptiveLimitMin(),
                        config.concurrent(),
                        config.adaptiveLatencyTarget().map(Nanos::of).orElse(0L),
                        telemetry.now(),
                        ThreadLocalRandom.current().nextLong(),
                        (from, to, cause, latency) -> telemetry.limitChanged(workload, from, to, cause, latency));
        this.drain = config.predictiveRejection() || adaptive != null ? new Drain() : null;
        this.door = config.predictiveRejection() && drain != null ? new Door(drain, permits, config.queue()) : null;
    }

    @Override
    public boolean active() {
        return true;
    }

    @Override
    public Kinds.@Nullable Kind kind(Object key) {
        return kinds == null ? null : kinds.of(key);
    }

    @Override
    public Verdict admit(Verdict.Admit wait, Kinds.@Nullable Kind kind, long now) {
        Verdict verdict = predict(wait, now);
        if (member != null && !(verdict instanceof Verdict.Admit)) {
            member.refused();
        }
        if (kind == null || kinds == null) {
            return verdict;
        }
        if (!(verdict instanceof Verdict.Admit admitted)) {
            kinds.refused(kind);
            return verdict;
        }
        return switch (kinds.enter(kind)) {
            case FREE -> admitted;
            case COUNTED -> admitted.counted();
            case CAPPED -> new Verdict.Capped(kind.cap(), admitted.waitNanos());
        };
    }

    @Override
    public Kinds.Kind refine(Kinds.Kind site, String sql, boolean mysql) {
        return kinds == null ? site : kinds.refine(site, sql, mysql);
    }

    @Override
    public Kinds.Decision move(Kinds.Kind from, boolean counted, Kinds.Kind to) {
        return kinds == null ? Kinds.Decision.FREE : kinds.move(from, counted, to);
    }

    @Override
    public void left(Kinds.Kind kind, boolean counted, long heldNanos) {
        Kinds.left(kind, counted, heldNanos);
    }

    @Override
    public List<KindStats> kinds() {
        return kinds == null ? List.of() : kinds.stats();
    }

    /** The door's verdict, and the adaptive limit's budget. */
    private Verdict predict(Verdict.Admit wait, long now) {
        if (adaptive != null && wait.deadlineBinds()) {
            adaptive.budget(wait.waitNanos());
        }
        if (door == null) {
            return wait;
        }
        int limit = predictionLimit();
        long expected = door.expectedWaitNanos(limit, now);
        if (expected == 0) {
            return wait; // a permit is free
        }
        Verdict.Admit allowed = wait.atMost(door.waitNanos(wait.waitNanos(), wait.deadlineBinds()));
        if (expected > allowed.waitNanos() && door.unlikelyToStart(limit, allowed.waitNanos(), now)) {
            if (audit > 0 && ThreadLocalRandom.current().nextDouble() < audit) {
                return allowed.overruled();
            }
            door.refused(now);
            return new Verdict.WouldTimeOut(expected, allowed.waitNanos());
        }
        if (door.overloaded(now) && expected > allowed.waitNanos()) {
            door.refused(now);
            return new Verdict.Shed(expected, allowed.waitNanos());
        }
        return allowed;
    }

    @Override
    public void granted(long now) {
        if (drain != null) {
            drain.granted(now);
        }
    }

    @Override
    public void refused(long now) {
        if (member != null) {
            member.refused();
        }
        if (door != null) {
            door.refused(now);
        }
    }

    @Override
    public void released(long heldNanos, long callNanos, boolean inTime, boolean overloaded, long now) {
        if (member != null) {
            member.released(heldNanos, callNanos);
        }
        if (drain != null) {
            drain.record(heldNanos, now);
        }
        if (adaptive != null) {
            adaptive.sample(heldNanos, callNanos, inTime, overloaded);
        }
    }

    @Override
    public long expectedWaitNanos(long now) {
        return door == null ? 0 : door.expectedWaitNanos(predictionLimit(), now);
    }

    @Override
    public long recentHoldNanos() {
        return drain == null ? 0 : drain.meanNanos();
    }

    private int predictionLimit() {
        return adaptive == null ? permits.limit() : adaptive.predictionLimit();
    }

    @Override
    public Arbiter.@Nullable Member member() {
        return member;
    }

    @Override
    public boolean ticks() {
        return adaptive != null || member != null || kinds != null;
    }

    @Override
    public void tick(long now) {
        if (adaptive != null) {
            adaptive.tick(now);
        }
        if (kinds != null) {
            kinds.tick(now);
        }
    }

    /** The limit in force: the adaptive limit's (or B), at most what the barrier's arbiter allows. */
    @Override
    public void apply() {
        int level = adaptive == null ? permits.capacity() : adaptive.wanted();
        int limit = member == null ? level : Math.min(level, member.cap);
        if (limit != permits.limit()) {
            permits.limit(limit);
        }
    }

    @Override
    public void keep(Object clock) {
        this.clock = clock;
    }

    @Override
    public String toString() {
        return "the controls of workload '" + workload.name() + "'";
    }
}
