package dev.dbbulkhead.tools.overload;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/** How many operations of a run ended each way: one counter per constant of {@code E}, added to from any thread. */
final class Tally<E extends Enum<E>> {
    private final Map<E, LongAdder> counts;

    Tally(Class<E> ways) {
        counts = new EnumMap<>(ways);
        for (E way : ways.getEnumConstants()) {
            counts.put(way, new LongAdder());
        }
    }

    void add(E way) {
        adder(way).increment();
    }

    long count(E way) {
        return adder(way).sum();
    }

    long total() {
        return counts.values().stream().mapToLong(LongAdder::sum).sum();
    }

    private LongAdder adder(E way) {
        return Objects.requireNonNull(counts.get(way), "every constant has a counter");
    }
}
