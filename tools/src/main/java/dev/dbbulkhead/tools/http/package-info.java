/**
 * The {@code http-load} command: closed- and open-loop HTTP load on a running service (the flood benchmark,
 * {@code bin/flood}), counting what its clients got. Depends on the JDK's HTTP client only.
 */
@NullMarked
package dev.dbbulkhead.tools.http;

import org.jspecify.annotations.NullMarked;
