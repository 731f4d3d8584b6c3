package dev.dbbulkhead;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Where a workload stands under its barrier's priorities ({@link Priority}), and why: a snapshot, for observation only
 * ({@link Workload#sharing()}). For a regular workload, its latency objective and whether its recent operations met
 * it; for an elastic one, its allowance and what set it.
 *
 * @param priority the workload's priority
 * @param cap the most it may have holding a connection now, as the share-out set it
 * @param allowance elastic: the permits its latency control allows it, before the share-out; regular: its B
 * @param state why: for an elastic workload, what set its allowance at the last window; for a regular one, how its
 *     last window went against its objective
 * @param objective regular: the p99 latency (permit wait plus hold) elastic work must leave it, set
 *     ({@link WorkloadConfig.Builder#latencyObjective}) or learned; null while it is being learned, and for an elastic
 *     workload
 * @param objectiveLearned regular: whether the objective was learned rather than set
 * @param recentP99 regular: the 99th percentile latency of its operations in the last window with enough of them
 *     (within 19 %); null before one
 * @param headroom elastic: the permits kept back for the regular workloads' peak demand over one elastic hold; 0 for a
 *     regular workload
 */
public record Sharing(
        Priority priority,
        int cap,
        int allowance,
        State state,
        @Nullable Duration objective,
        boolean objectiveLearned,
        @Nullable Duration recentP99,
        int headroom) {

    /** Why an elastic allowance is what it is, or how a regular workload's last window went. */
    public enum State {
        /**
         * No regular operation in the last window: an elastic workload gets all the room the headroom leaves at once.
         */
        IDLE,
        /**
         * No objective yet (none set, none learned in the last minute): elastic work stays at its floor of one permit
         * for a window while the regular workloads' latency is measured.
         */
        LEARNING,
        /**
         * Every regular workload met its objective: an elastic workload that used all it had gets one more permit when
         * each p99 was at most two thirds of its objective, and stays where it is otherwise.
         */
        OBJECTIVE_MET,
        /**
         * A regular workload missed its objective: the elastic allowance halved (to its floor when more than one
         * operation in ten missed).
         */
        OBJECTIVE_MISSED,
        /**
         * The objective is met, but the last try at one more permit missed it: the elastic allowance waits before it
         * tries again (2, 4, … 64 windows).
         */
        BACKING_OFF,
        /** The objective is met, but one more permit would leave the regular workloads less than their headroom. */
        NO_ROOM
    }
}
