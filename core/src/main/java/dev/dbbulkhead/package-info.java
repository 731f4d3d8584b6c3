/**
 * db-bulkhead's public API: {@link dev.dbbulkhead.DbBulkhead} (the barrier and its builder), its
 * {@link dev.dbbulkhead.Workload}s, {@link dev.dbbulkhead.Lease}s, {@link dev.dbbulkhead.Deadline}s and
 * {@link dev.dbbulkhead.TransactionOptions}, the rejections ({@link dev.dbbulkhead.BulkheadRejectedException} and its
 * subclasses), {@link dev.dbbulkhead.CommitOutcomeUnknownException}, and the listener SPI
 * ({@link dev.dbbulkhead.BulkheadListener}). Everything else is in {@code dev.dbbulkhead.internal}, which the module
 * does not export.
 */
package dev.dbbulkhead;
