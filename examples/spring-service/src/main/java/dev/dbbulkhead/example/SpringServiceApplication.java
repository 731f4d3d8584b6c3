package dev.dbbulkhead.example;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import java.time.Duration;
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
}
