package dev.dbbulkhead.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Objects;

/**
 * Copies of one class, each defined by a class loader of its own: as many distinct classes as a test needs (call sites,
 * to the barrier), from one source. A copy's loader is collectable once nothing holds the copy.
 */
public final class ClassCopies {
    private final Class<?> type;
    private final byte[] bytes;

    /** Copies of {@code type}, a top-level or static nested class with nothing but its own bytes to load. */
    public ClassCopies(Class<?> type) {
        this.type = type;
        String file = type.getName().substring(type.getName().lastIndexOf('.') + 1) + ".class";
        try (InputStream in = type.getResourceAsStream(file)) {
            this.bytes = Objects.requireNonNull(in, file).readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A new copy, in a new loader whose parent is the original's. */
    public Class<?> copy() {
        return new Loader(type.getClassLoader()).define(type.getName(), bytes);
    }

    /** One copy's loader. */
    private static final class Loader extends ClassLoader {
        Loader(ClassLoader parent) {
            super(parent);
        }

        Class<?> define(String name, byte[] bytes) {
            return defineClass(name, bytes, 0, bytes.length);
        }
    }
}
