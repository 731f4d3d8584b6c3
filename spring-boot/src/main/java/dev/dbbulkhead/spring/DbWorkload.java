package dev.dbbulkhead.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.core.annotation.AliasFor;

/**
 * Runs the method admitted to a db-bulkhead workload: a permit is taken before the method starts, and released after
 * it returns or throws. The advice is applied outside the bean's other advice, {@code @Transactional} included,
 * whatever their order: the transaction begins after admission and has committed, cleaned up and given its
 * connection back before the permit is released. On a type, it applies to every public method; on a method, it wins
 * over the type's.
 * <pre>{@code
 * @DbWorkload("interactive")
 * @Transactional
 * public Order place(NewOrder order) { ... }
 * }</pre>
 * Refusals ({@link dev.dbbulkhead.BulkheadRejectedException}, HTTP 503 in a controller) and the rules (never inside
 * an active transaction, nesting, {@code REQUIRES_NEW}): {@link DbBulkheadAdmission}.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface DbWorkload {
    /** The workload; empty: the default one ({@code db-bulkhead.default-workload}). */
    @AliasFor("workload")
    String value() default "";

    /** The workload; empty: the default one. */
    @AliasFor("value")
    String workload() default "";

    /**
     * The longest wait for an execution permit, e.g. {@code "50ms"}, overriding the workload's {@code queue-wait};
     * empty: the workload's.
     */
    String queueWait() default "";

    /**
     * The kind of operation this method is, for a workload that learns kinds ({@code
     * db-bulkhead.workloads.<name>.kinds}); empty: the method itself ({@code OrderService.place}). Methods that should
     * share a budget share a kind.
     */
    String kind() default "";
}
