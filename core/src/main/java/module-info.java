/**
 * db-bulkhead: admission control in front of a JDBC connection pool.
 *
 * <p>Exports the API package only; {@code dev.dbbulkhead.internal} stays private.
 */
module dev.dbbulkhead {
    requires transitive java.sql;
    requires jdk.jfr;
    requires static org.jspecify;

    exports dev.dbbulkhead;
}
