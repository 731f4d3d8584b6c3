package dev.dbbulkhead.spring;

import dev.dbbulkhead.Deadline;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Spring's {@link TransactionTemplate} inside an admission: takes a permit of the workload, runs the transaction
 * (which commits, or rolls back, and gives its connection back), then releases the permit. {@code JdbcTemplate},
 * {@code JdbcClient} and JPA used inside the callback take part in the Spring transaction as usual.
 * <pre>{@code
 * long id = admitted.execute("interactive", status -> jdbc.sql("INSERT ... RETURNING id").query(Long.class).single());
 * }</pre>
 * Refusals and rules: {@link DbBulkheadAdmission}. When the workload has a {@code deadline}, the transaction's
 * timeout is set to the time it has left (whole seconds, rounded up, never looser than the template's own), which
 * Spring applies to the statements of {@code JdbcTemplate} and {@code JdbcClient}.
 *
 * <p>Thread-safe, like {@link TransactionTemplate}.
 */
public class AdmittedTransactionTemplate {
    private final DbBulkheadAdmission admission;
    private final TransactionTemplate template;

    public AdmittedTransactionTemplate(DbBulkheadAdmission admission, PlatformTransactionManager transactionManager) {
        this(admission, new TransactionTemplate(transactionManager));
    }

    /** With {@code template}'s propagation, isolation, read-only and timeout settings. */
    public AdmittedTransactionTemplate(DbBulkheadAdmission admission, TransactionTemplate template) {
        this.admission = admission;
        this.template = template;
    }

    /** Runs {@code action} in a transaction of the default workload. */
    public <T extends @Nullable Object> T execute(TransactionCallback<T> action) {
        return execute(null, action);
    }

    /** Runs {@code action} in a transaction admitted to {@code workload}. */
    public <T extends @Nullable Object> T execute(@Nullable String workload, TransactionCallback<T> action) {
        return admission.call(
                workload,
                null,
                "AdmittedTransactionTemplate.execute",
                () -> templateFor(admission.currentDeadline()).execute(action));
    }

    private TransactionTemplate templateFor(@Nullable Deadline deadline) {
        if (deadline == null) {
            return template;
        }
        long remaining = deadline.remainingNanos(System.nanoTime());
        int seconds = (int) Math.min(Integer.MAX_VALUE, Math.max(1, divideRoundingUp(remaining)));
        int own = template.getTimeout();
        if (own != TransactionDefinition.TIMEOUT_DEFAULT && own <= seconds) {
            return template;
        }
        var bounded = new TransactionTemplate(
                Objects.requireNonNull(template.getTransactionManager(), "the template's transaction manager"),
                template);
        bounded.setTimeout(seconds);
        return bounded;
    }

    private static long divideRoundingUp(long nanos) {
        long second = TimeUnit.SECONDS.toNanos(1);
        return nanos <= 0 ? 1 : nanos / second + (nanos % second == 0 ? 0 : 1);
    }
}
