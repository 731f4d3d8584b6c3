/** Null is never passed or returned here unless a type says {@code @Nullable}: checked by NullAway. */
@NullMarked
package dev.dbbulkhead.internal;

import org.jspecify.annotations.NullMarked;
