/**
 * db-bulkhead's Micrometer meters: {@link dev.dbbulkhead.micrometer.DbBulkheadMetrics}.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"
}) // Micrometer has no module descriptor; users of ours need its API
module dev.dbbulkhead.micrometer {
    requires transitive dev.dbbulkhead;
    requires static org.jspecify;
    requires transitive micrometer.core;

    exports dev.dbbulkhead.micrometer;
}
