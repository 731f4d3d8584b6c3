/** Null is never passed or returned here unless a type says {@code @Nullable}: checked by NullAway. */
@NullMarked
package dev.dbbulkhead.spring;

import org.jspecify.annotations.NullMarked;
