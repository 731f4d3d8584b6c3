/**
 * The implementation behind the API package, not exported by the module and not part of the API: the permits and
 * their queue ({@code Permits}), the lease ({@code PermitLease}), the transaction lifecycle ({@code TransactionRunner}),
 * the guarded JDBC objects, the telemetry (listeners, flight-recorder events, clock) and argument checks. Anything
 * here may change in any release.
 */
package dev.dbbulkhead.internal;
