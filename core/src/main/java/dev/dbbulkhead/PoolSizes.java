package dev.dbbulkhead;

import java.lang.reflect.Method;
import javax.sql.DataSource;

/** Reads a pool's maximum size without depending on the pool's library. */
final class PoolSizes {
    private PoolSizes() {}

    /**
     * The {@code maximumPoolSize} of a HikariCP {@code HikariDataSource} (or any data source with a public
     * {@code int getMaximumPoolSize()}), or -1 when it cannot be read.
     */
    static int maximumPoolSize(DataSource source) {
        try {
            Method getter = source.getClass().getMethod("getMaximumPoolSize");
            if (getter.getReturnType() == int.class) {
                return (int) getter.invoke(source);
            }
        } catch (ReflectiveOperationException | RuntimeException unknown) {
            // Not a pool we know how to read: the caller can give poolSize(...) explicitly.
        }
        return -1;
    }
}
