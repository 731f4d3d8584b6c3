package dev.dbbulkhead.tools.support;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/** The tools' enums that the command line names by a label ("db-bulkhead-adaptive", "s2-locks"). */
public final class Labels {
    private Labels() {}

    /** The constant of {@code values} whose label is {@code label}, if any. */
    public static <E extends Enum<E>> Optional<E> find(E[] values, Function<E, String> labelOf, String label) {
        return Arrays.stream(values).filter(e -> labelOf.apply(e).equals(label)).findFirst();
    }

    /** As {@link #find}, or an {@link IllegalArgumentException} naming {@code what} and listing every label. */
    public static <E extends Enum<E>> E of(E[] values, Function<E, String> labelOf, String label, String what) {
        return find(values, labelOf, label)
                .orElseThrow(() -> new IllegalArgumentException(
                        "unknown " + what + " '" + label + "'; known: " + all(values, labelOf)));
    }

    /** Every label of {@code values}, in order. */
    public static <E extends Enum<E>> List<String> all(E[] values, Function<E, String> labelOf) {
        return Arrays.stream(values).map(labelOf).toList();
    }
}
