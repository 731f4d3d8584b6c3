package dev.dbbulkhead.spring;

/**
 * A {@code db-bulkhead.*} setting that cannot work: the message says what is wrong and names the property,
 * {@link #action()} what to change. {@link DbBulkheadFailureAnalyzer} turns it into Spring Boot's start-up report.
 */
public class DbBulkheadConfigurationException extends IllegalStateException {
    private final String action;

    public DbBulkheadConfigurationException(String description, String action) {
        super(description);
        this.action = action;
    }

    /** What to change, naming the properties. */
    public String action() {
        return action;
    }
}
