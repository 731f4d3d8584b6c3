package dev.dbbulkhead.example.jpa;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.TestDatabase;
import java.time.Duration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Data JPA application on virtual threads whose controllers call repositories directly, admitted by
 * {@code @DbWorkload} on the repository (application.properties: the workloads, open-in-view off). PostgreSQL:
 * {@code DB_URL}/{@code DB_USER}/{@code DB_PASSWORD} when set, otherwise an embedded server started with the app.
 */
@SpringBootApplication
public class OwnersApplication {
    public static void main(String[] args) {
        SpringApplication.run(OwnersApplication.class, args);
    }

    /** HikariCP on the server above, sized by {@code spring.datasource.hikari.*}. */
    @Bean
    @ConfigurationProperties("spring.datasource.hikari")
    HikariDataSource dataSource() {
        var pool = new HikariDataSource();
        TestDatabase.get().config(8, Duration.ofSeconds(1)).copyStateTo(pool);
        pool.setPoolName("spring-jpa");
        return pool;
    }
}
