package dev.dbbulkhead.internal;

import java.lang.reflect.Method;
import java.sql.SQLException;
import java.sql.Wrapper;
import javax.sql.DataSource;

/** Reads a pool's maximum size without depending on the pool's library. */
public final class PoolSizes {
    /** What HikariCP's {@code HikariDataSource} implements; a wrapper around one is looked through with it. */
    private static final String HIKARI_CONFIG = "com.zaxxer.hikari.HikariConfigMXBean";

    private PoolSizes() {}

    /**
     * The {@code maximumPoolSize} of a HikariCP {@code HikariDataSource} (or any data source with a public
     * {@code int getMaximumPoolSize()}), also behind a wrapper that unwraps to one ({@link Wrapper#unwrap}), or -1
     * when it cannot be known.
     */
    public static int maximumPoolSize(DataSource source) {
        int direct = getter(source);
        if (direct > 0) {
            return direct;
        }
        try {
            Class<?> hikari =
                    Class.forName(HIKARI_CONFIG, false, source.getClass().getClassLoader());
            if (source.isWrapperFor(hikari)) {
                return getter(source.unwrap(hikari));
            }
        } catch (ClassNotFoundException | SQLException | RuntimeException | LinkageError unknown) {
            // No HikariCP visible from this data source, or a wrapper that will not say.
        }
        return -1;
    }

    private static int getter(Object source) {
        try {
            Method getter = source.getClass().getMethod("getMaximumPoolSize");
            if (getter.getReturnType() == int.class) {
                return (int) getter.invoke(source);
            }
        } catch (ReflectiveOperationException | RuntimeException unknown) {
            // Not a pool we know how to read.
        }
        return -1;
    }
}
