/** Null is never passed or returned here unless a type says {@code @Nullable}: checked by NullAway. */
@NullMarked
package dev.dbbulkhead.tools.overload;

import org.jspecify.annotations.NullMarked;
