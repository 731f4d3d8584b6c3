/**
 * db-bulkhead: admission control in front of a JDBC connection pool.
 *
 * <p>Exports the API package only; {@code dev.dbbulkhead.internal} stays private.
 */
module dev.dbbulkhead {
    requires transitive java.sql;
    requires jdk.jfr;
    requires static com.google.errorprone.annotations; // @GuardedBy, for the compiler
    requires static transitive org.jspecify; // the API's @Nullable, for tools; optional, as in Guava

    exports dev.dbbulkhead;
}
