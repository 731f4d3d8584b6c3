package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Priority;
import dev.dbbulkhead.QueuePolicy;
import dev.dbbulkhead.WorkloadConfig;
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
    static final AutoConfigurations BOOT = AutoConfigurations.of(
            DataSourceAutoConfiguration.class,
            DataSourceTransactionManagerAutoConfiguration.class,
            TransactionManagerCustomizationAutoConfiguration.class,
            TransactionAutoConfiguration.class,
            DbBulkheadAutoConfiguration.class);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(BOOT)
            .withPropertyValues(
                    "spring.datasource.url=jdbc:postgresql://127.0.0.1:1/never",
                    "spring.datasource.hikari.maximum-pool-size=10");

    @Test
    void withoutWorkloadsOneDefaultWorkloadIsDerivedFromThePoolSize() {
        runner.withPropertyValues("spring.datasource.hikari.maximum-pool-size=7")
                .run(context -> {
                    assertThat(context)
                            .hasNotFailed()
                            .hasSingleBean(DbBulkhead.class)
                            .hasSingleBean(DbBulkheadAdmission.class)
                            .hasSingleBean(AdmittedTransactionTemplate.class)
                            .hasSingleBean(DbWorkloadBeanPostProcessor.class);
                    var w = context.getBean(DbBulkhead.class).defaultWorkload();
                    assertThat(w.name()).isEqualTo("default");
                    assertThat(w.concurrent()).isEqualTo(7);
                    assertThat(w.config())
                            .as("what the measurements recommend")
                            .isEqualTo(WorkloadConfig.recommended("default", 7));
                    assertThat(context.getBean(DbBulkheadSettings.class)
                                    .workload("default")
                                    .queueWait())
                            .isEqualTo(Duration.ofMillis(500));
                    assertThat(context.getBean(DbBulkhead.class).dataSource())
                            .as("the barrier is built over the pool itself")
                            .isSameAs(UnadmittedConnections.unwrapped(context.getBean(DataSource.class)))
                            .isNotSameAs(context.getBean(DataSource.class));
                });
    }

    @Test
    void declaredWorkloadsWithTheirWaitsAndTheNamedDefault() {
        runner.withPropertyValues(
                        "db-bulkhead.name=orders-db",
                        "db-bulkhead.default-workload=interactive",
                        "db-bulkhead.workloads.batch.concurrent=2",
                        "db-bulkhead.workloads.interactive.concurrent=6",
                        "db-bulkhead.workloads.interactive.extra-slots=12",
                        "db-bulkhead.workloads.interactive.queue-wait=50ms",
                        "db-bulkhead.workloads.interactive.deadline=2s",
                        "db-bulkhead.workloads.interactive.predictive-rejection=true",
                        "db-bulkhead.workloads.batch.adaptive-limit-min=1",
                        "db-bulkhead.workloads.batch.adaptive-latency-target=80ms",
                        "db-bulkhead.workloads.interactive.queue=deadline")
                .run(context -> {
                    var db = context.getBean(DbBulkhead.class);
                    assertThat(db.name()).isEqualTo("orders-db");
                    assertThat(db.defaultWorkload().name()).isEqualTo("interactive");
                    assertThat(db.workload("interactive").extraSlots()).isEqualTo(12);
                    assertThat(db.workload("batch").concurrent()).isEqualTo(2);
                    assertThat(db.workload("batch").extraSlots()).isZero();
                    assertThat(db.workload("interactive").predictive()).isTrue();
                    assertThat(db.workload("batch").predictive()).isFalse();
                    assertThat(db.workload("batch").adaptive()).isTrue();
                    assertThat(db.workload("batch").limit()).as("starts at B").isEqualTo(2);
                    assertThat(db.workload("interactive").adaptive()).isFalse();
                    assertThat(db.workload("interactive").config().queue()).isEqualTo(QueuePolicy.DEADLINE);
                    assertThat(db.workload("batch").config().queue()).isEqualTo(QueuePolicy.FIFO);
                    var settings = context.getBean(DbBulkheadSettings.class);
                    assertThat(settings.workload("interactive").queueWait()).isEqualTo(Duration.ofMillis(50));
                    assertThat(settings.workload("interactive").deadline()).isEqualTo(Duration.ofSeconds(2));
                    assertThat(settings.workload("batch").deadline()).isNull();
                    assertThat(settings.workload("batch").config().adaptiveLatencyTarget())
                            .contains(Duration.ofMillis(80));
                    assertThat(settings.workload("interactive").config().adaptiveLatencyTarget())
                            .isEmpty();
                });
    }

    @Test
    void anElasticWorkloadSharesTheLimitWithTheRegularOnes() {
        runner.withPropertyValues(
                        "db-bulkhead.default-workload=interactive",
                        "db-bulkhead.workloads.interactive.concurrent=6",
                        "db-bulkhead.workloads.batch.concurrent=4",
                        "db-bulkhead.workloads.batch.priority=elastic")
                .run(context -> {
                    var db = context.getBean(DbBulkhead.class);
                    assertThat(db.workload("batch").config().priority()).isEqualTo(Priority.ELASTIC);
                    assertThat(db.workload("batch").limit())
                            .as("elastic starts at its floor")
                            .isEqualTo(1);
                });
        runner.withPropertyValues(
                        "db-bulkhead.default-workload=interactive",
                        "db-bulkhead.shared-limit=6",
                        "db-bulkhead.workloads.interactive.concurrent=6",
                        "db-bulkhead.workloads.batch.concurrent=4",
                        "db-bulkhead.workloads.batch.priority=elastic")
                .run(context -> assertThat(configurationFailure(context.getStartupFailure()))
                        .hasMessageContaining("db-bulkhead.shared-limit of db-bulkhead "
                                + "'db' must be at least the regular workloads' concurrent added up and one for each elastic "
                                + "workload, 6 + 1"));
    }

    @Test
    void backsOffWithoutADataSource() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DbBulkheadAutoConfiguration.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DbBulkhead.class));
    }

    @Test
    void backsOffWithTwoDataSourcesAndNoPrimary() {
        new ApplicationContextRunner()
                .withConfiguration(BOOT)
                .withUserConfiguration(TwoDataSources.class)
                .run(context -> assertThat(context)
                        .hasNotFailed()
                        .doesNotHaveBean(DbBulkhead.class)
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
    @CsvSource(
            delimiter = '|',
            value = {
                "db-bulkhead.workloads.batch.concurrent|0|db-bulkhead.workloads.batch.concurrent must be >= 1, was 0",
                "db-bulkhead.workloads.batch.extra-slots|-1|db-bulkhead.workloads.batch.extra-slots must be >= 0, was -1",
                "db-bulkhead.workloads.batch.queue-wait|-5ms|db-bulkhead.workloads.batch.queue-wait must be >= 0, was PT-0.005S",
                "db-bulkhead.workloads.batch.deadline|0s|db-bulkhead.workloads.batch.deadline must be > 0",
                "db-bulkhead.workloads.batch.adaptive-limit-min|3|db-bulkhead.workloads.batch.adaptive-limit-min must be <= db-bulkhead.workloads.batch.concurrent 2, was 3",
                "db-bulkhead.workloads.batch.adaptive-limit-min|0|db-bulkhead.workloads.batch.adaptive-limit-min must be >= 1, was 0",
                "db-bulkhead.workloads.batch.adaptive-latency-target|50ms|db-bulkhead.workloads.batch.adaptive-latency-target needs db-bulkhead.workloads.batch.adaptive-limit-min",
                "db-bulkhead.default-workload|reports|db-bulkhead.default-workload is not a declared workload [batch], was reports",
                "db-bulkhead.name|' '|db-bulkhead.name must not be blank, was ''",
                "db-bulkhead.leak-detection-threshold|-1s|db-bulkhead.leak-detection-threshold must not be negative, was PT-1S",
                "db-bulkhead.web.retry-after|-1s|db-bulkhead.web.retry-after must be > 0 (it is sent in whole seconds, rounded up), was PT-1S",
                "db-bulkhead.web.retry-after|0s|db-bulkhead.web.retry-after must be > 0",
                "db-bulkhead.web.retry-after|400d|db-bulkhead.web.retry-after must be at most PT24H (a day), was PT9600H",
                "db-bulkhead.web.status|500|db-bulkhead.web.status must be 503 or 429, was 500",
                "db-bulkhead.web.refusal-delay|2s|db-bulkhead.web.refusal-delay must be >= 0 and at most web.retry-after PT1S, was PT2S",
            })
    void eachBadPropertyFailsStartUpNamingIt(String property, String value, String message) {
        var settings = property.endsWith(".concurrent")
                ? new String[0]
                : new String[] {"db-bulkhead.workloads.batch.concurrent=2"};
        runner.withPropertyValues(settings)
                .withPropertyValues(property + "=" + value)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(configurationFailure(context.getStartupFailure()))
                            .hasMessageContaining(message);
                });
    }

    @Test
    void aWorkloadWithoutConcurrentFailsNamingTheProperty() {
        runner.withPropertyValues("db-bulkhead.workloads.batch.extra-slots=2")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessage("db-bulkhead.workloads.batch.concurrent is not set"));
    }

    @Test
    void twoWorkloadsNeedADefault() {
        runner.withPropertyValues("db-bulkhead.workloads.a.concurrent=1", "db-bulkhead.workloads.b.concurrent=1")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining("db-bulkhead.default-workload is not set, and 2 workloads are declared"));
    }

    @Test
    void workloadsOverThePoolFailThroughTheFailureAnalyzerNamingWhatToChange() {
        runner.withPropertyValues(
                        "db-bulkhead.default-workload=a",
                        "db-bulkhead.workloads.a.concurrent=8",
                        "db-bulkhead.workloads.b.concurrent=4")
                .run(context -> {
                    Throwable failure = context.getStartupFailure();
                    FailureAnalysis analysis = new DbBulkheadFailureAnalyzer(null).analyze(failure);
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription())
                            .contains("add up to, 12 [a=8, b=4]")
                            .contains("spring.datasource.hikari.maximum-pool-size")
                            .contains("was 10");
                    assertThat(analysis.getAction())
                            .contains("db-bulkhead.workloads.a.concurrent")
                            .contains("db-bulkhead.workloads.b.concurrent")
                            .contains("spring.datasource.hikari.maximum-pool-size");
                });
    }

    @Test
    void openInViewFailsStartUpUnlessAllowed() {
        runner.withUserConfiguration(OpenInView.class)
                .run(context -> assertThat(context)
                        .getFailure()
                        .isInstanceOf(DbBulkheadConfigurationException.class)
                        .hasMessageContaining("open-in-view is on")
                        .satisfies(e -> assertThat(((DbBulkheadConfigurationException) e).action())
                                .contains("spring.jpa.open-in-view=false")
                                .contains("db-bulkhead.allow-open-in-view=true")));
        runner.withUserConfiguration(OpenInView.class)
                .withPropertyValues("db-bulkhead.allow-open-in-view=true")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(DbBulkhead.class));
    }

    @Test
    void metersAreBoundWhenAMeterRegistryExists() {
        runner.withUserConfiguration(Registry.class).run(context -> {
            var registry = context.getBean(MeterRegistry.class);
            assertThat(registry.find(BulkheadMeterNames.PERMITS_MAX)
                            .tag(BulkheadMeterNames.WORKLOAD, "default")
                            .gauge())
                    .isNotNull();
            assertThat(registry.find(BulkheadMeterNames.PERMITS_MAX).gauge().value())
                    .isEqualTo(10);
        });
    }

    @Test
    void aWebApplicationGetsTheProblemResolverUnlessTurnedOff() {
        var web = new WebApplicationContextRunner()
                .withConfiguration(BOOT)
                .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:1/never");
        web.run(context -> assertThat(context).hasSingleBean(DbBulkheadProblemResolver.class));
        web.withPropertyValues("db-bulkhead.web.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(DbBulkheadProblemResolver.class));
        runner.run(context -> assertThat(context).doesNotHaveBean(DbBulkheadProblemResolver.class));
    }

    /** The one message a refused setting gets, and where the property was set: a file and its line. */
    @Test
    void aRefusedPropertyIsReportedWithWhereItWasSet() throws Exception {
        var environment = new org.springframework.core.env.StandardEnvironment();
        for (var source : new org.springframework.boot.env.PropertiesPropertySourceLoader()
                .load("bad", new org.springframework.core.io.ClassPathResource("bad-workload.properties"))) {
            environment.getPropertySources().addFirst(source);
        }
        new ApplicationContextRunner()
                .withConfiguration(BOOT)
                .withInitializer(c -> c.getEnvironment()
                        .getPropertySources()
                        .addFirst(environment.getPropertySources().get("bad")))
                .withPropertyValues("spring.datasource.url=jdbc:postgresql://127.0.0.1:1/never")
                .run(context -> {
                    var analysis = new DbBulkheadFailureAnalyzer(environment).analyze(context.getStartupFailure());
                    assertThat(analysis.getDescription())
                            .startsWith("db-bulkhead.workloads.batch.extra-slots must be >= 0, was -3")
                            .contains("Origin: class path resource [bad-workload.properties] - 2:");
                    assertThat(analysis.getAction()).isEqualTo("Change db-bulkhead.workloads.batch.extra-slots.");
                });
    }

    @Test
    void theConfigurationMetadataDescribesEveryPropertyWithItsDefault() throws Exception {
        String json = new String(
                getClass()
                        .getResourceAsStream("/META-INF/spring-configuration-metadata.json")
                        .readAllBytes(),
                java.nio.charset.StandardCharsets.UTF_8);
        var ours = new java.util.TreeMap<String, java.util.Map<?, ?>>();
        for (Object p : (java.util.List<?>) org.springframework.boot.json.JsonParserFactory.getJsonParser()
                .parseMap(json)
                .get("properties")) {
            var property = (java.util.Map<?, ?>) p;
            if (String.valueOf(property.get("name")).startsWith("db-bulkhead.")) {
                ours.put(String.valueOf(property.get("name")), property);
            }
        }
        assertThat(ours.keySet())
                .containsExactly(
                        "db-bulkhead.allow-open-in-view",
                        "db-bulkhead.default-workload",
                        "db-bulkhead.enabled",
                        "db-bulkhead.leak-detection-threshold",
                        "db-bulkhead.name",
                        "db-bulkhead.shared-limit",
                        "db-bulkhead.unadmitted-connections",
                        "db-bulkhead.web.enabled",
                        "db-bulkhead.web.refusal-delay",
                        "db-bulkhead.web.retry-after",
                        "db-bulkhead.web.status",
                        "db-bulkhead.workloads");
        assertThat(ours.values())
                .allSatisfy(p -> assertThat(String.valueOf(p.get("description")))
                        .isNotBlank()
                        .isNotEqualTo("null"));
        assertThat(ours.get("db-bulkhead.enabled").get("defaultValue")).isEqualTo(true);
        assertThat(ours.get("db-bulkhead.name").get("defaultValue")).isEqualTo("db");
        assertThat(ours.get("db-bulkhead.web.retry-after").get("defaultValue")).isEqualTo("1s");
        assertThat(String.valueOf(ours.get("db-bulkhead.workloads").get("description")))
                .contains(
                        "concurrent",
                        "extra-slots",
                        "queue (fifo",
                        "priority (regular",
                        "queue-wait",
                        "deadline",
                        "predictive-rejection",
                        "adaptive-limit-min",
                        "allow-requires-new");
    }

    @Test
    void customizersShapeTheBarrierInTheirOrderAfterTheProperties() {
        runner.withPropertyValues("db-bulkhead.workloads.w.concurrent=2")
                .withUserConfiguration(Customizers.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(Customizers.class).applied).containsExactly("first", "second");
                    var w = context.getBean(DbBulkhead.class).workload("w");
                    assertThat(w.concurrent()).isEqualTo(2);
                    assertThat(context.getBean(DbBulkhead.class).name())
                            .as("the later customizer wins")
                            .isEqualTo("second");
                });
        runner.withPropertyValues("db-bulkhead.workloads.w.concurrent=2")
                .withUserConfiguration(BadCustomizer.class)
                .run(context -> assertThat(configurationFailure(context.getStartupFailure()))
                        .hasMessageContaining("sizingHintHoldTime must be > 0"));
    }

    /** The start-up failure's {@link DbBulkheadConfigurationException}, wherever it is in the cause chain. */
    static DbBulkheadConfigurationException configurationFailure(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof DbBulkheadConfigurationException e) {
                return e;
            }
        }
        throw new AssertionError("no DbBulkheadConfigurationException in " + failure, failure);
    }

    @Configuration(proxyBeanMethods = false)
    static class Customizers {
        final java.util.List<String> applied = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Bean
        @org.springframework.core.annotation.Order(2)
        DbBulkheadBuilderCustomizer second() {
            return b -> {
                applied.add("second");
                b.name("second");
            };
        }

        @Bean
        @org.springframework.core.annotation.Order(1)
        DbBulkheadBuilderCustomizer first() {
            return b -> {
                applied.add("first");
                b.name("first").rejectionStackTraces(true).nanoClock(System::nanoTime);
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BadCustomizer {
        @Bean
        DbBulkheadBuilderCustomizer bad() {
            return b -> b.sizingHint(Duration.ofMillis(50), Duration.ZERO);
        }
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
            return DbBulkhead.builder(dataSource)
                    .name("mine")
                    .workload("default", 3, 0)
                    .build();
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
