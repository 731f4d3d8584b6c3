package dev.dbbulkhead.spring;

import org.jspecify.annotations.Nullable;

/**
 * A {@code db-bulkhead.*} setting that cannot work: the message says what is wrong and names the property,
 * {@link #action()} what to change. {@link DbBulkheadFailureAnalyzer} turns it into Spring Boot's start-up report,
 * with where the property was set.
 */
public class DbBulkheadConfigurationException extends IllegalStateException {
    private final String action;
    private final @Nullable String property;

    public DbBulkheadConfigurationException(String description, String action) {
        this(description, action, null, null);
    }

    /**
     * @param property the property at fault, whose origin the start-up report shows; null when the fault is not one
     *     property's
     * @param cause what the barrier's builder refused, or null
     */
    public DbBulkheadConfigurationException(
            String description, String action, @Nullable String property, @Nullable Throwable cause) {
        super(description, cause);
        this.action = action;
        this.property = property;
    }

    /** What to change, naming the properties. */
    public String action() {
        return action;
    }

    /** The property at fault, or null. */
    public @Nullable String property() {
        return property;
    }
}
