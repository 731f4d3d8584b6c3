package dev.dbbulkhead.spring;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Iterator;
import java.util.List;
import java.util.Spliterator;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.stream.BaseStream;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/**
 * The results an admitted method must not return, because their work happens after it returned, when its permit is
 * gone: values read lazily ({@code Stream}, {@code Iterator}, {@code Spliterator}, {@code ResultSet},
 * {@code Statement}, {@code Connection}, a reactive {@code Publisher}), and a {@code Future} that is not a
 * {@link CompletionStage} (a {@code CompletionStage} keeps the permits until it completes; a plain {@code Future}
 * cannot be followed to its end). The one list the start-up check and the call-time warning share.
 */
final class ReadAfterReturn {
    private static final List<String> LAZY = List.of(
            BaseStream.class.getName(),
            Iterator.class.getName(),
            Spliterator.class.getName(),
            ResultSet.class.getName(),
            Statement.class.getName(),
            Connection.class.getName(),
            Flow.Publisher.class.getName(),
            "org.reactivestreams.Publisher");

    private ReadAfterReturn() {}

    /** Why a method declared to return {@code type} cannot be admitted, or null when it can. */
    static @Nullable String why(Class<?> type) {
        for (String name : LAZY) {
            if (ClassUtils.isPresent(name, type.getClassLoader())
                    && ClassUtils.resolveClassName(name, type.getClassLoader()).isAssignableFrom(type)) {
                return "returns a " + type.getName() + ", which is read after the method has returned, when its "
                        + "permit (and its transaction) are gone, holding a connection nothing bounds. Return a "
                        + "materialised value (e.g. a List), or consume it inside.";
            }
        }
        if (Future.class.isAssignableFrom(type) && !CompletionStage.class.isAssignableFrom(type)) {
            return "returns a " + type.getName() + ": its work goes on after the method returned, outside the "
                    + "admission (its permit is released at once). Return a CompletableFuture (its permits are "
                    + "held until it completes), or do the work inside the method.";
        }
        return null;
    }

    /** Whether a value returned under a wider declared type (say, {@code Object}) is one of them. */
    static boolean is(Object value) {
        return value != null && why(value.getClass()) != null;
    }
}
