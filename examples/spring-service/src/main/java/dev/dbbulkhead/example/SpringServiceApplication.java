package dev.dbbulkhead.example;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * A web service on virtual threads whose database access goes through db-bulkhead: {@code GET /products} in the
 * {@code interactive} workload, {@code POST /reports} in the {@code batch} one (application.properties). PostgreSQL:
 * {@code DB_URL}/{@code DB_USER}/{@code DB_PASSWORD} when set, otherwise an embedded server started with the app.
 */
@SpringBootApplication
public class SpringServiceApplication {
    public static void main(String[] args) {
        SpringApplication.run(SpringServiceApplication.class, args);
    }

    /** HikariCP on the server above, sized by {@code spring.datasource.hikari.*}. */
    @Bean
    @ConfigurationProperties("spring.datasource.hikari")
    HikariDataSource dataSource() {
        var pool = new HikariDataSource();
        TestDatabase.get().config(8, Duration.ofSeconds(1)).copyStateTo(pool);
        pool.setPoolName("spring-service");
        return pool;
    }

    /**
     * Opens every connection of the pool before the web server starts listening (singletons are all created before
     * it starts): the first burst after a start then finds the pool warm, instead of waiting for connections to be
     * opened one by one (a cold pool made the first burst's requests time out in the pool). The pool keeps them
     * ({@code minimum-idle} = {@code maximum-pool-size} in application.properties).
     */
    @Bean
    SmartInitializingSingleton warmPool(HikariDataSource pool) {
        return () -> {
            var held = new ArrayList<Connection>();
            try {
                for (int i = 0; i < pool.getMaximumPoolSize(); i++) {
                    held.add(pool.getConnection());
                }
            } catch (SQLException e) {
                throw new IllegalStateException(
                        "cannot open the pool's " + pool.getMaximumPoolSize() + " connections at start-up: "
                                + e.getMessage(),
                        e);
            } finally {
                for (Connection c : held) {
                    try {
                        c.close();
                    } catch (SQLException ignored) {
                        // back to the pool; a broken one is replaced by the pool itself
                    }
                }
            }
        };
    }
}
