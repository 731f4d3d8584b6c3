package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfigurationPackages;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jdbc.health.DataSourceHealthIndicator;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.samples.petclinic.OwnerQueries;

/**
 * {@link UnadmittedConnections} on PostgreSQL: exactly the connections taken outside an admission are counted (on
 * many virtual threads at once, beside admitted ones), admitted ones and the barrier's own never; the DataSource
 * keeps its type; with {@code refuse}, such a connection is refused naming the caller, and none is taken.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnadmittedConnectionsTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurationTest.BOOT)
            .withUserConfiguration(Registry.class)
            .withPropertyValues(Pg.datasource(8))
            .withPropertyValues(
                    "db-bulkhead.workloads.work.concurrent=4",
                    "db-bulkhead.workloads.work.extra-slots=64",
                    "db-bulkhead.workloads.work.queue-wait=10s");

    @Test
    void exactlyTheConnectionsTakenOutsideAdmissionsAreCounted() {
        runner.run(context -> {
            DataSource dataSource = context.getBean(DataSource.class);
            assertThat(dataSource).as("the DataSource keeps its type").isInstanceOf(HikariDataSource.class);
            var unadmitted = context.getBean(UnadmittedConnections.class);
            assertThat(unadmitted.count()).as("start-up is not counted").isZero();

            int rounds = 20;
            var start = new CyclicBarrier(2 * rounds);
            var calls = new ArrayList<Future<?>>();
            try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
                for (int i = 0; i < rounds; i++) {
                    calls.add(threads.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return outside(dataSource);
                    }));
                    calls.add(threads.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return admitted(context);
                    }));
                }
                for (var call : calls) {
                    call.get(30, TimeUnit.SECONDS);
                }
            }
            context.getBean(DbBulkhead.class).transaction(Duration.ofSeconds(5), c -> c.isValid(1)); // its own
            assertThat(unadmitted.count()).isEqualTo(rounds);
            assertThat(context.getBean(MeterRegistry.class)
                            .get(DbBulkheadAutoConfiguration.UNADMITTED)
                            .tag("bulkhead", "db")
                            .functionCounter()
                            .count())
                    .isEqualTo(rounds);
            DbWorkloadTest.assertAllBack(context);
        });
    }

    @Test
    void refuseRefusesThemNamingTheCallerAndTakesNoConnection() {
        runner.withPropertyValues("db-bulkhead.unadmitted-connections=refuse").run(context -> {
            DataSource dataSource = context.getBean(DataSource.class);
            assertThatThrownBy(() -> outside(dataSource))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining(UnadmittedConnectionsTest.class.getName() + ".outside")
                    .hasMessageContaining("db-bulkhead.unadmitted-connections=refuse");
            assertThat(admitted(context)).isTrue();
            assertThat(context.getBean(HikariDataSource.class)
                            .getHikariPoolMXBean()
                            .getActiveConnections())
                    .isZero();
            assertThat(context.getBean(UnadmittedConnections.class).count()).isZero();
            DbWorkloadTest.assertAllBack(context);
        });
    }

    /**
     * Spring Boot's health check takes a connection outside any admission; with {@code refuse} it is still served
     * (a refusal would take /actuator/health DOWN and a liveness probe would restart the app), counted, and named.
     */
    @Test
    void theHealthIndicatorIsNeverRefusedAndIsNamed(CapturedOutput output) {
        runner.withPropertyValues("db-bulkhead.unadmitted-connections=refuse").run(context -> {
            var health = new DataSourceHealthIndicator(context.getBean(DataSource.class), "SELECT 1");
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            assertThat(context.getBean(UnadmittedConnections.class).count())
                    .as("its connections (the product's name, then the query), counted")
                    .isPositive();
            assertThat(output).contains("DataSourceHealthIndicator").doesNotContain("(no application frame)");
            DbWorkloadTest.assertAllBack(context);
        });
    }

    /** The caller is found by the application's own packages, even where they sit under a framework's prefix. */
    @Test
    void theCallerIsTheApplicationsOwnFrameFoundByItsPackages() {
        runner.withPropertyValues("db-bulkhead.unadmitted-connections=refuse")
                .withInitializer(context -> AutoConfigurationPackages.register(
                        (BeanDefinitionRegistry) context.getBeanFactory(), "org.springframework.samples.petclinic"))
                .run(context -> assertThatThrownBy(() -> OwnerQueries.find(context.getBean(DataSource.class)))
                        .isInstanceOf(SQLException.class)
                        .hasMessageContaining("by org.springframework.samples.petclinic.OwnerQueries.find("));
    }

    @Test
    void offLeavesTheDataSourceAsItIs() {
        runner.withPropertyValues("db-bulkhead.unadmitted-connections=off").run(context -> {
            DataSource dataSource = context.getBean(DataSource.class);
            assertThat(org.springframework.aop.support.AopUtils.isAopProxy(dataSource))
                    .isFalse();
            assertThat(outside(dataSource)).isTrue();
            assertThat(context.getBean(UnadmittedConnections.class).count()).isZero();
        });
    }

    private static boolean outside(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return c.isValid(1);
        }
    }

    private static boolean admitted(ApplicationContext context) {
        DataSource dataSource = context.getBean(DataSource.class);
        return context.getBean(AdmittedTransactionTemplate.class).execute(status -> {
            Connection c = DataSourceUtils.getConnection(dataSource);
            try {
                return c.isValid(1);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            } finally {
                DataSourceUtils.releaseConnection(c, dataSource);
            }
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }
}
