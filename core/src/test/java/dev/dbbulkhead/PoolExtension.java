package dev.dbbulkhead;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** A HikariCP pool over the real PostgreSQL for one test class: {@code @RegisterExtension static}. */
final class PoolExtension implements BeforeAllCallback, AfterAllCallback {
    private final int size;
    private HikariDataSource pool;

    PoolExtension(int size) {
        this.size = size;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        pool = Db.pool(size);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        pool.close();
    }

    HikariDataSource get() {
        return pool;
    }
}
