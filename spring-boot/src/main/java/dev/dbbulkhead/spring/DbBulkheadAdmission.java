package dev.dbbulkhead.spring;

import dev.dbbulkhead.BulkheadRejectedException;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Deadline;
import dev.dbbulkhead.Lease;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.spring.DbBulkheadSettings.WorkloadSettings;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Admission to a workload around a piece of Spring code that runs its own transaction: what {@link DbWorkload} and
 * {@link AdmittedTransactionTemplate} share. The rules, each checked on the calling thread:
 * <ol>
 * <li><b>Admission before the transaction.</b> Called while a Spring transaction is active, it fails at once with
 * {@link IllegalStateException}: waiting for a permit while holding a connection can exhaust the pool.</li>
 * <li><b>Release after commit and cleanup.</b> The lease is closed when the admitted code has returned, i.e. after
 * the transactional proxy or template inside it has committed (or rolled back) and given its connection back.</li>
 * <li><b>Nesting.</b> Admitted code that calls admitted code of the <em>same</em> workload joins the outer admission
 * (no second permit, no wait); of another workload, it fails at once with {@link IllegalStateException} (a second
 * permit taken while holding one is how a barrier deadlocks).</li>
 * <li><b>One connection per admission.</b> A new physical transaction begun while an admitted one is suspended on the
 * thread ({@code REQUIRES_NEW}) needs a second connection; with every admitted thread doing so, the pool runs dry and
 * they all wait for each other. It is refused with {@link IllegalStateException}, unless the workload sets
 * {@code allow-requires-new}. (This check is a {@link TransactionExecutionListener}: Spring Boot attaches it to the
 * transaction managers it configures; attach it to your own with {@code setTransactionExecutionListeners}.)</li>
 * </ol>
 * Rejections are the core's {@link dev.dbbulkhead.BulkheadRejectedException}s. An interrupt while waiting for a
 * permit becomes a {@link CancellationException}, with the thread's interrupt flag set again. Code that returns a
 * {@link CompletionStage} keeps its permits until the stage completes ({@link Lease#closeWhenComplete}). Code that
 * returns a value whose work goes on after it returned (a {@code Stream}, an {@code Iterator}, a {@code ResultSet}, a
 * reactive {@code Publisher}, a plain {@code Future}: {@link ReadAfterReturn}) is refused at start-up when its
 * declared type says so ({@link DbWorkloadBeanPostProcessor}), and logged once otherwise.
 *
 * <p>Thread-safe.
 */
public class DbBulkheadAdmission implements TransactionExecutionListener {
    /** Code run inside an admission ({@link #currentLease()} and {@link #currentDeadline()} tell its lease). */
    @FunctionalInterface
    public interface AdmittedCall<T extends @Nullable Object, E extends Throwable> {
        T call() throws E;
    }

    /** One thread's admission: its lease, and the physical transactions it has open. */
    private static final class Scope {
        final WorkloadSettings workload;
        final @Nullable Deadline deadline;

        @Nullable
        Lease lease;

        final Set<TransactionExecution> transactions = Collections.newSetFromMap(new IdentityHashMap<>());

        Scope(WorkloadSettings workload, @Nullable Deadline deadline) {
            this.workload = workload;
            this.deadline = deadline;
        }
    }

    /** The observation around each admission. */
    public static final String OBSERVATION = "db.bulkhead.admission";

    private static final Logger LOG = LoggerFactory.getLogger(DbBulkheadAdmission.class);

    private final DbBulkhead bulkhead;
    private final DbBulkheadSettings settings;
    private final ObservationRegistry observations;

    @SuppressWarnings("ThreadLocalUsage") // one per admission bean, that is per barrier: deliberately not static
    private final ThreadLocal<Scope> scope = new ThreadLocal<>();

    public DbBulkheadAdmission(DbBulkhead bulkhead, DbBulkheadSettings settings) {
        this(bulkhead, settings, ObservationRegistry.NOOP);
    }

    /** With admissions observed in {@code observations} (Spring Boot passes the application's registry). */
    public DbBulkheadAdmission(DbBulkhead bulkhead, DbBulkheadSettings settings, ObservationRegistry observations) {
        this.bulkhead = bulkhead;
        this.settings = settings;
        this.observations = observations;
        for (WorkloadSettings w : settings.workloads()) {
            bulkhead.workload(w.name()); // fails now, naming the known ones, if the barrier lacks it
        }
    }

    /** The barrier. */
    public DbBulkhead bulkhead() {
        return bulkhead;
    }

    /** The settings: workloads, their waits, the default one. */
    public DbBulkheadSettings settings() {
        return settings;
    }

    /**
     * Runs {@code call} admitted to {@code workload} (null or empty: the default one), waiting at most
     * {@code queueWait} (null: the workload's own) for an execution permit, or its deadline if that is sooner.
     * {@code caller} names the code in error messages.
     *
     * @throws dev.dbbulkhead.BulkheadRejectedException when refused (nothing ran)
     * @throws IllegalStateException when a rule above is broken (nothing ran)
     * @throws CancellationException when interrupted while waiting (nothing ran; the interrupt flag is set)
     */
    public <T extends @Nullable Object, E extends Throwable> T call(
            @Nullable String workload, @Nullable Duration queueWait, String caller, AdmittedCall<T, E> call) throws E {
        return call(workload, queueWait, caller, null, call);
    }

    /**
     * {@link #call(String, Duration, String, AdmittedCall)} for an operation of the kind named {@code kind} (null:
     * none), for a workload that learns kinds of operation.
     */
    public <T extends @Nullable Object, E extends Throwable> T call(
            @Nullable String workload,
            @Nullable Duration queueWait,
            String caller,
            @Nullable String kind,
            AdmittedCall<T, E> call)
            throws E {
        WorkloadSettings target = settings.named(workload, caller);
        Scope outer = scope.get();
        if (outer != null) {
            if (outer.workload.name().equals(target.name())) {
                return call.call(); // joins: same budget, no second permit
            }
            throw new IllegalStateException(caller + " needs workload '" + target.name() + "' while this thread is "
                    + "already admitted to workload '" + outer.workload.name() + "' of db-bulkhead '"
                    + bulkhead.name() + "': holding one permit while waiting for another can deadlock the barrier. "
                    + "Call it after the outer admitted call has returned, or use the same workload.");
        }
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException(caller + " was called inside an active transaction ("
                    + TransactionSynchronizationManager.getCurrentTransactionName() + "): admission to db-bulkhead '"
                    + bulkhead.name() + "' must come before the transaction starts, never inside it, since waiting "
                    + "for a permit while holding a connection can exhaust the pool. Start the transaction inside "
                    + "the admitted method (@DbWorkload on the outermost service method, or "
                    + "AdmittedTransactionTemplate), not around it.");
        }
        // The deadline starts at admission, before the wait.
        var admitted = new Scope(target, target.deadline() == null ? null : Deadline.in(target.deadline()));
        Lease lease = acquire(admitted, queueWait, caller, kind);
        admitted.lease = lease;
        scope.set(admitted);
        try (lease) {
            T result = call.call();
            if (result instanceof CompletionStage<?> stage) {
                lease.closeWhenComplete(stage); // the permits go back when the work the future stands for is done
            } else if (ReadAfterReturn.is(result)) {
                warnLazyOnce(caller, result);
            }
            return result;
        } catch (Throwable failure) {
            lease.transactionFailed(failure); // an adaptive workload learns from the database's overload errors
            throw failure;
        } finally {
            scope.remove();
        }
    }

    private final Set<String> warnedLazy = ConcurrentHashMap.newKeySet();

    private void warnLazyOnce(String caller, Object result) {
        if (warnedLazy.add(caller)) {
            LOG.warn(
                    "{} returned a {}, whose work goes on after its permit was released (and its transaction "
                            + "ended): whatever connection it uses is no longer bounded by db-bulkhead '{}'. Return a "
                            + "materialised value (e.g. a List) or a CompletableFuture, or do the work inside the "
                            + "method.",
                    caller,
                    result.getClass().getName(),
                    bulkhead.name());
        }
    }

    /**
     * The admission, inside an {@link Observation} {@code db.bulkhead.admission} (low-cardinality {@code bulkhead},
     * {@code workload} and {@code outcome}: {@code admitted}, or the rejection's reason in lower case, or
     * {@code interrupted}), so that the wait for a permit shows as its own span in a trace.
     */
    private Lease acquire(Scope admitted, @Nullable Duration queueWait, String caller, @Nullable String kind) {
        WorkloadSettings target = admitted.workload;
        Observation observation = Observation.createNotStarted(OBSERVATION, observations)
                .contextualName("db-bulkhead admission")
                .lowCardinalityKeyValue("bulkhead", bulkhead.name())
                .lowCardinalityKeyValue("workload", target.name())
                .start();
        String outcome = "admitted";
        try {
            return acquireNow(admitted, queueWait, caller, kind);
        } catch (BulkheadRejectedException rejected) {
            outcome = rejected.reason().name().toLowerCase(Locale.ROOT);
            observation.error(rejected);
            throw rejected;
        } catch (CancellationException interrupted) {
            outcome = "interrupted";
            observation.error(interrupted);
            throw interrupted;
        } finally {
            observation.lowCardinalityKeyValue("outcome", outcome).stop();
        }
    }

    private Lease acquireNow(Scope admitted, @Nullable Duration queueWait, String caller, @Nullable String kind) {
        WorkloadSettings target = admitted.workload;
        Workload w = bulkhead.workload(target.name());
        Duration wait = queueWait != null ? queueWait : target.queueWait();
        try {
            Deadline started = admitted.deadline;
            Duration deadline = target.deadline();
            if (started != null && deadline != null && deadline.compareTo(wait) <= 0) {
                return kind == null ? w.acquire(started) : w.acquire(started, kind);
            }
            return kind == null ? w.acquire(wait) : w.acquire(wait, kind);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            var cancelled = new CancellationException(caller + " was interrupted while waiting for admission to "
                    + "workload '" + target.name() + "' of db-bulkhead '" + bulkhead.name() + "'");
            cancelled.initCause(interrupted);
            throw cancelled;
        }
    }

    /** The lease of this thread's admission, or null when it is not admitted. */
    public @Nullable Lease currentLease() {
        Scope s = scope.get();
        return s == null ? null : s.lease;
    }

    /** The deadline of this thread's admission (its workload's {@code deadline}, started at admission), or null. */
    public @Nullable Deadline currentDeadline() {
        Scope s = scope.get();
        return s == null ? null : s.deadline;
    }

    private static boolean physical(TransactionExecution transaction) {
        return transaction.isNewTransaction() && !transaction.isNested();
    }

    @Override
    public void beforeBegin(TransactionExecution transaction) {
        Scope s = scope.get();
        if (s == null || !physical(transaction) || s.transactions.isEmpty() || s.workload.allowRequiresNew()) {
            return;
        }
        throw new IllegalStateException("transaction '" + transaction.getTransactionName() + "' would begin a "
                + "second physical transaction (REQUIRES_NEW) while the admitted one is suspended on this thread, in "
                + "workload '" + s.workload.name() + "' of db-bulkhead '" + bulkhead.name() + "': it needs a second "
                + "connection, and with every admitted thread doing the same the pool runs dry and they wait for "
                + "each other. Use REQUIRED (or NESTED, a savepoint), run it after the admitted transaction, or set "
                + s.workload.property("allow-requires-new") + "=true and size the pool for 2 connections per permit.");
    }

    @Override
    public void afterBegin(TransactionExecution transaction, @Nullable Throwable beginFailure) {
        Scope s = scope.get();
        if (s != null && beginFailure == null && physical(transaction)) {
            s.transactions.add(transaction);
        }
    }

    @Override
    public void afterCommit(TransactionExecution transaction, @Nullable Throwable commitFailure) {
        ended(transaction);
    }

    @Override
    public void afterRollback(TransactionExecution transaction, @Nullable Throwable rollbackFailure) {
        ended(transaction);
    }

    private void ended(TransactionExecution transaction) {
        Scope s = scope.get();
        if (s != null) {
            s.transactions.remove(transaction);
        }
    }
}
