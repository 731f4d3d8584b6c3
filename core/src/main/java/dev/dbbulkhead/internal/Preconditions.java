package dev.dbbulkhead.internal;

import java.time.Duration;

/** Argument checks whose messages name the field and the bad value. */
public final class Preconditions {
    private Preconditions() {}

    public static <T> T notNull(T value, String field) {
        if (value == null) {
            throw new NullPointerException(field + " must not be null");
        }
        return value;
    }

    /** {@code value}, neither null nor blank. */
    public static String notBlank(String value, String field) {
        if (notNull(value, field).isBlank()) {
            throw new IllegalArgumentException(field + " must not be blank, was '" + value + "'");
        }
        return value;
    }

    /** The longest name a kind of operation may have: names are kept, up to 32 per workload. */
    public static final int KIND_NAME_MAX = 200;

    /** A kind's name: not blank, at most {@link #KIND_NAME_MAX} characters. */
    public static String kindName(String value, String field) {
        notBlank(value, field);
        if (value.length() > KIND_NAME_MAX) {
            throw new IllegalArgumentException(field + " must be at most " + KIND_NAME_MAX + " characters, was "
                    + value.length() + " characters ('" + value.substring(0, 40) + "...')");
        }
        return value;
    }

    public static int atLeast(int value, int min, String field) {
        if (value < min) {
            throw new IllegalArgumentException(field + " must be >= " + min + ", was " + value);
        }
        return value;
    }

    public static Duration notNegative(Duration value, String field) {
        notNull(value, field);
        if (value.isNegative()) {
            throw new IllegalArgumentException(field + " must not be negative, was " + value);
        }
        return value;
    }

    public static Duration positive(Duration value, String field) {
        notNull(value, field);
        if (!value.isPositive()) {
            throw new IllegalArgumentException(field + " must be > 0, was " + value);
        }
        return value;
    }

    /** {@code a + b}, or an {@link IllegalArgumentException} naming both fields when it overflows an int. */
    public static int sum(int a, String fieldA, int b, String fieldB) {
        long total = (long) a + b;
        if (total > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    fieldA + " + " + fieldB + " must fit in an int, was " + a + " + " + b + " = " + total);
        }
        return (int) total;
    }

    public static String name(String value, String field) {
        notNull(value, field);
        if (value.isBlank()) {
            throw new IllegalArgumentException(field + " must not be blank, was '" + value + "'");
        }
        return value;
    }
}
