package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.micrometer.BulkheadMeterNames;
import dev.dbbulkhead.spring.web.DbBulkheadProblemResolver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.transaction.autoconfigure.TransactionManagerCustomizationAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.orm.jpa.support.OpenEntityManagerInViewInterceptor;

/**
 * The auto-configuration's conditions and checks. Needs no database: HikariCP connects on first use, and these
 * contexts never ask it for a connection.
 */
class AutoConfigurationTest {
    static final AutoConfigurations BOOT = AutoConfigurations.of(DataSourceAutoConfiguration.class,
            DataSourceTransactionManagerAutoConfiguration.class, TransactionManagerCustomizationAutoConfiguration.class,
            TransactionAutoConfiguration.class, DbBulkheadAutoConfiguration.class);

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(BOOT)
            .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:1/never",
                    "spring.datasource.hikari.maximum-pool-size=10");

    @Test
    void withoutWorkloadsOneDefaultWorkloadIsDerivedFromThePoolSize() {
        runner.withPropertyValues("spring.datasource.hikari.maximum-pool-size=7").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DbBulkhead.class)
                    .hasSingleBean(DbBulkheadAdmission.class).hasSingleBean(AdmittedTransactionTemplate.class)
                    .hasSingleBean(DbWorkloadBeanPostProcessor.class);
            var w = context.getBean(DbBulkhead.class).defaultWorkload();
            assertThat(w.name()).isEqualTo("default");
            assertThat(w.concurrent()).isEqualTo(7);
            assertThat(w.extraSlots()).isEqualTo(7);
            assertThat(context.getBean(DbBulkheadSettings.class).workload("default").queueWait())
                    .isEqualTo(Duration.ofMillis(100));
            assertThat(context.getBean(DbBulkhead.class).dataSource()).isSameAs(context.getBean(DataSource.class));
        });
    }

    @Test
    void declaredWorkloadsWithTheirWaitsAndTheNamedDefault() {
        runner.withPropertyValues("db-bulkhead.name=orders-db", "db-bulkhead.default-workload=interactive",
                "db-bulkhead.workloads.batch.concurrent=2", "db-bulkhead.workloads.interactive.concurrent=6",
                "db-bulkhead.workloads.interactive.extra-slots=12", "db-bulkhead.workloads.interactive.queue-wait=50ms",
                "db-bulkhead.workloads.interactive.deadline=2s",
                "db-bulkhead.workloads.interactive.predictive-rejection=true",
                "db-bulkhead.workloads.batch.adaptive-limit-min=1").run(context -> {
                    var db = context.getBean(DbBulkhead.class);
                    assertThat(db.name()).isEqualTo("orders-db");
                    assertThat(db.defaultWorkload().name()).isEqualTo("interactive");
                    assertThat(db.workload("interactive").extraSlots()).isEqualTo(12);
                    assertThat(db.workload("batch").concurrent()).isEqualTo(2);
                    assertThat(db.workload("batch").extraSlots()).isZero();
                    assertThat(db.workload("interactive").predictive()).isTrue();
                    assertThat(db.workload("batch").predictive()).isFalse();
                    assertThat(db.workload("batch").adaptive()).isTrue();
                    assertThat(db.workload("batch").limit()).as("starts at its minimum").isEqualTo(1);
                    assertThat(db.workload("interactive").adaptive()).isFalse();
                    var settings = context.getBean(DbBulkheadSettings.class);
                    assertThat(settings.workload("interactive").queueWait()).isEqualTo(Duration.ofMillis(50));
                    assertThat(settings.workload("interactive").deadline()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(settings.workload("batch").deadline()).isNull();
                });
    }

    @Test
    void backsOffWithoutADataSource() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DbBulkheadAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbBulkhead.class));
    }

    @Test
    void backsOffWithTwoDataSourcesAndNoPrimary() {
        new ApplicationContextRunner().withConfiguration(BOOT).withUserConfiguration(TwoDataSources.class)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbBulkhead.class)
                        .doesNotHaveBean(DbBulkheadAdmission.class));
    }

    @Test
    void backsOffWhenDisabled() {
        runner.withPropertyValues("db-bulkhead.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbBulkhead.class));
    }

    @Test
    void theApplicationsOwnBarrierWins() {
        runner.withUserConfiguration(OwnBarrier.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(DbBulkhead.class);
            assertThat(context.getBean(DbBulkhead.class).name()).isEqualTo("mine");
            assertThat(context.getBean(DbBulkheadAdmission.class).bulkhead()).isSameAs(context.getBean("mine"));
        });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
        "db-bulkhead.workloads.batch.concurrent|0|db-bulkhead.workloads.batch.concurrent must be >= 1, was 0",
        "db-bulkhead.workloads.batch.extra-slots|-1|db-bulkhead.workloads.batch.extra-slots must be >= 0, was -1",
        "db-bulkhead.workloads.batch.queue-wait|-5ms|db-bulkhead.workloads.batch.queue-wait must be >= 0, was PT-0.005S",
        "db-bulkhead.workloads.batch.deadline|0s|db-bulkhead.workloads.batch.deadline must be > 0",
        "db-bulkhead.workloads.batch.adaptive-limit-min|3|db-bulkhead.workloads.batch.adaptive-limit-min must be between 1 and concurrent 2",
        "db-bulkhead.workloads.batch.adaptive-limit-min|0|db-bulkhead.workloads.batch.adaptive-limit-min must be between 1 and concurrent 2",
        "db-bulkhead.default-workload|reports|db-bulkhead.default-workload is not a declared workload [batch], was reports",
        "db-bulkhead.name|' '|db-bulkhead.name must not be blank",
    })
    void eachBadPropertyFailsStartUpNamingIt(String property, String value, String message) {
        var settings = property.endsWith(".concurrent") ? new String[0]
                : new String[] {"db-bulkhead.workloads.batch.concurrent=2"};
        runner.withPropertyValues(settings).withPropertyValues(property + "=" + value).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(DbBulkheadConfigurationException.class)
                    .hasMessageContaining(message);
        });
    }

    @Test
    void aWorkloadWithoutConcurrentFailsNamingTheProperty() {
        runner.withPropertyValues("db-bulkhead.workloads.batch.extra-slots=2").run(context -> assertThat(context)
                .getFailure().rootCause().hasMessage("db-bulkhead.workloads.batch.concurrent is not set"));
    }

    @Test
    void twoWorkloadsNeedADefault() {
        runner.withPropertyValues("db-bulkhead.workloads.a.concurrent=1", "db-bulkhead.workloads.b.concurrent=1")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("db-bulkhead.default-workload is not set, and 2 workloads are declared"));
    }

    @Test
    void workloadsOverThePoolFailThroughTheFailureAnalyzerNamingWhatToChange() {
        runner.withPropertyValues("db-bulkhead.default-workload=a", "db-bulkhead.workloads.a.concurrent=8",
                "db-bulkhead.workloads.b.concurrent=4").run(context -> {
                    Throwable failure = context.getStartupFailure();
                    FailureAnalysis analysis = new DbBulkheadFailureAnalyzer().analyze(failure);
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).contains("add up to 12 (a=8, b=4)")
                            .contains("maximum size 10");
                    assertThat(analysis.getAction()).contains("db-bulkhead.workloads.a.concurrent")
                            .contains("db-bulkhead.workloads.b.concurrent")
                            .contains("spring.datasource.hikari.maximum-pool-size");
                });
    }

    @Test
    void openInViewFailsStartUpUnlessAllowed() {
        runner.withUserConfiguration(OpenInView.class).run(context -> assertThat(context).getFailure()
                .isInstanceOf(DbBulkheadConfigurationException.class).hasMessageContaining("open-in-view is on")
                .satisfies(e -> assertThat(((DbBulkheadConfigurationException) e).action())
                        .contains("spring.jpa.open-in-view=false").contains("db-bulkhead.allow-open-in-view=true")));
        runner.withUserConfiguration(OpenInView.class).withPropertyValues("db-bulkhead.allow-open-in-view=true")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(DbBulkhead.class));
    }

    @Test
    void metersAreBoundWhenAMeterRegistryExists() {
        runner.withUserConfiguration(Registry.class).run(context -> {
            var registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find(BulkheadMeterNames.PERMITS_MAX).tag(BulkheadMeterNames.WORKLOAD, "default")
                    .gauge()).isNotNull();
            assertThat(registry.find(BulkheadMeterNames.PERMITS_MAX).gauge().value()).isEqualTo(10);
        });
    }

    @Test
    void aWebApplicationGetsTheProblemResolverUnlessTurnedOff() {
        var web = new WebApplicationContextRunner().withConfiguration(BOOT)
                .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:1/never");
        web.run(context -> assertThat(context).hasSingleBean(DbBulkheadProblemResolver.class));
        web.withPropertyValues("db-bulkhead.web.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(DbBulkheadProblemResolver.class));
        runner.run(context -> assertThat(context).doesNotHaveBean(DbBulkheadProblemResolver.class));
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoDataSources {
        @Bean
        HikariDataSource first() {
            return new HikariDataSource();
        }

        @Bean
        HikariDataSource second() {
            return new HikariDataSource();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnBarrier {
        @Bean
        DbBulkhead mine(DataSource dataSource) {
            return DbBulkhead.builder(dataSource).name("mine").workload("default", 3, 0).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OpenInView {
        @Bean
        OpenEntityManagerInViewInterceptor openEntityManagerInViewInterceptor() {
            return new OpenEntityManagerInViewInterceptor() {
                @Override
                public void setBeanFactory(org.springframework.beans.factory.BeanFactory beanFactory) {
                    // As Boot's JpaWebConfiguration registers it, without the EntityManagerFactory it would look up.
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        MeterRegistry registry() {
            return new SimpleMeterRegistry();
        }
    }
}
