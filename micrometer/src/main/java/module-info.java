/**
 * db-bulkhead's Micrometer meters: {@link dev.dbbulkhead.micrometer.DbBulkheadMetrics}.
 */
module dev.dbbulkhead.micrometer {
    requires transitive dev.dbbulkhead;
    requires transitive micrometer.core;

    exports dev.dbbulkhead.micrometer;
}
