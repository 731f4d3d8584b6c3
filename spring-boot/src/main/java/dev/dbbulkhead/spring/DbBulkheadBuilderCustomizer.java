package dev.dbbulkhead.spring;

import dev.dbbulkhead.DbBulkhead;

/**
 * Customizes the {@link DbBulkhead.Builder} of the starter's barrier after the {@code db-bulkhead.*} properties have
 * been applied and before it is built, as Spring Boot's own {@code *BuilderCustomizer}s do: for what has no property
 * (rejection stack traces, statement and lock timeouts from deadlines, a sizing hint, the nano clock, more
 * listeners). Every {@code DbBulkheadBuilderCustomizer} bean is applied, in {@code @Order} / {@code Ordered} order.
 * <pre>{@code
 * @Bean
 * DbBulkheadBuilderCustomizer lockTimeouts() {
 *     return builder -> builder.lockTimeoutFromDeadline(true).rejectionStackTraces(true);
 * }
 * }</pre>
 * The barrier checks the result as a whole when it is built; a setting it refuses fails start-up naming it.
 */
@FunctionalInterface
public interface DbBulkheadBuilderCustomizer {
    void customize(DbBulkhead.Builder builder);
}
