/**
 * db-bulkhead's public API: {@link dev.dbbulkhead.DbBulkhead} (the barrier and its builder), its
 * {@link dev.dbbulkhead.Workload}s, {@link dev.dbbulkhead.Lease}s, {@link dev.dbbulkhead.Deadline}s and
 * {@link dev.dbbulkhead.TransactionOptions}, the rejections ({@link dev.dbbulkhead.BulkheadRejectedException} and its
 * subclasses), {@link dev.dbbulkhead.CommitOutcomeUnknownException}, and the listener SPI
 * ({@link dev.dbbulkhead.BulkheadListener}). Everything else is in {@code dev.dbbulkhead.internal}, which the module
 * does not export.
 *
 * <p>"The article", in these docs and messages, is the reference design this library implements and keeps
 * source-compatible: "Threads virtuels et sémaphores DB : contrôler l'admission avant le pool de connexions" (in
 * French), a barrier of two semaphores in front of a JDBC pool: B execution permits, B + Q admission slots, a FIFO
 * wait bounded by a queue wait, and the JDBC transaction owned inside the barrier. Its semantics, in our words, are
 * in {@code docs/design.md} ("The model").
 */
@NullMarked
package dev.dbbulkhead;

import org.jspecify.annotations.NullMarked;
