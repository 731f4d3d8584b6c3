package dev.dbbulkhead.internal;

import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.Sharing;
import dev.dbbulkhead.SqlWork;
import dev.dbbulkhead.TransactionOptions;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The one implementation of {@link Workload}: checks the caller's arguments, takes a lease from its {@link Admission},
 * runs the transaction inside it with the barrier's {@link TransactionRunner}, and releases it. Thread-safe.
 */
final class WorkloadImpl implements Workload {
    private final WorkloadConfig config;
    private final String bulkhead;
    private final Admission admission;
    private final Permits permits;
    private final TransactionRunner runner;

    WorkloadImpl(WorkloadConfig config, Admission.Shared shared, TransactionRunner runner) {
        this.config = config;
        this.bulkhead = shared.bulkhead();
        this.runner = runner;
        this.admission = new Admission(this, config, shared);
        this.permits = admission.permits();
    }

    @Override
    public <T extends @Nullable Object> T transaction(Duration queueWait, SqlWork<T> work)
            throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNegative(queueWait, "queueWait");
        return run(queueWait, null, null, work);
    }

    @Override
    public <T extends @Nullable Object> T transaction(Deadline deadline, SqlWork<T> work)
            throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNull(deadline, "deadline");
        return run(null, deadline, null, work);
    }

    @Override
    public <T extends @Nullable Object> T transaction(TransactionOptions options, SqlWork<T> work)
            throws SQLException, InterruptedException {
        Preconditions.notNull(work, "work");
        Preconditions.notNull(options, "options");
        return run(options.queueWait(), options.deadline(), options, work);
    }

    /** One transaction inside one lease; a deadline passed inside becomes the public rejection, once released. */
    private <T extends @Nullable Object> T run(
            @Nullable Duration queueWait,
            @Nullable Deadline deadline,
            @Nullable TransactionOptions options,
            SqlWork<T> work)
            throws SQLException, InterruptedException {
        String named = options == null ? null : options.kind();
        PermitLease lease = admission.admit(queueWait, deadline, false, named != null ? named : work);
        try {
            try {
                return runner.run(lease, options, work);
            } finally {
                lease.release();
            }
        } catch (DeadlinePassed passed) {
            throw admission.deadlineExceeded(lease, passed);
        }
    }

    @Override
    public Lease acquire(Duration queueWait) throws InterruptedException {
        Preconditions.notNegative(queueWait, "queueWait");
        return admission.admit(queueWait, null, true, null);
    }

    @Override
    public Lease acquire(Deadline deadline) throws InterruptedException {
        Preconditions.notNull(deadline, "deadline");
        return admission.admit(null, deadline, true, null);
    }

    @Override
    public Lease acquire(Duration queueWait, String kind) throws InterruptedException {
        Preconditions.notNegative(queueWait, "queueWait");
        return admission.admit(queueWait, null, true, Preconditions.kindName(kind, "kind"));
    }

    @Override
    public Lease acquire(Deadline deadline, String kind) throws InterruptedException {
        Preconditions.notNull(deadline, "deadline");
        return admission.admit(null, deadline, true, Preconditions.kindName(kind, "kind"));
    }

    /** What the barrier cannot keep on its database (logged once), or null: {@link TransactionRunner#unkept}. */
    @Nullable
    String unkept() throws SQLException {
        return runner.unkept();
    }

    /** What this workload predicts, learns and is allowed. */
    Controls controls() {
        return admission.controls();
    }

    @Override
    public Optional<Sharing> sharing() {
        Arbiter.Member member = controls().member();
        return member == null ? Optional.empty() : Optional.of(member.sharing());
    }

    @Override
    public List<KindStats> kinds() {
        return admission.kinds();
    }

    @Override
    public WorkloadConfig config() {
        return config;
    }

    @Override
    public String bulkheadName() {
        return bulkhead;
    }

    @Override
    public int available() {
        return permits.available();
    }

    @Override
    public int availableSlots() {
        return permits.availableSlots();
    }

    @Override
    public int inside() {
        return permits.admitted();
    }

    @Override
    public int executing() {
        return permits.executing();
    }

    @Override
    public int waiting() {
        return permits.waiting();
    }

    @Override
    public int limit() {
        return permits.limit();
    }

    @Override
    public Duration recentHoldTime() {
        return Duration.ofNanos(admission.recentHoldNanos());
    }

    @Override
    public Duration expectedWait() {
        return Duration.ofNanos(admission.expectedWaitNanos());
    }

    @Override
    public long reclaimed() {
        return admission.reclaimed();
    }

    @Override
    public String toString() {
        return "Workload[" + bulkhead + "/" + name() + ": concurrent=" + concurrent() + ", extraSlots="
                + extraSlots() + (adaptive() ? ", limit=" + limit() : "") + ", executing=" + executing()
                + ", inside=" + inside() + "]";
    }
}
