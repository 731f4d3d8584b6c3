package dev.dbbulkhead.spring;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.micrometer.BulkheadMeterNames;
import dev.dbbulkhead.micrometer.DbBulkheadMetrics;
import dev.dbbulkhead.spring.actuate.DbBulkheadEndpoint;
import dev.dbbulkhead.spring.web.DbBulkheadProblemResolver;
import dev.dbbulkhead.spring.web.RefusalPacer;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.metadata.CompositeDataSourcePoolMetadataProvider;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadata;
import org.springframework.boot.jdbc.metadata.DataSourcePoolMetadataProvider;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.orm.jpa.support.OpenEntityManagerInViewFilter;
import org.springframework.orm.jpa.support.OpenEntityManagerInViewInterceptor;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * One {@link DbBulkhead} over the application's {@link DataSource}, from the {@code db-bulkhead.*} properties
 * ({@link DbBulkheadProperties}), with {@link DbWorkload}, {@link AdmittedTransactionTemplate}, HTTP 503 for
 * rejections, an actuator endpoint and Micrometer meters. Backs off without exactly one {@code DataSource} candidate,
 * with {@code db-bulkhead.enabled=false}, and bean by bean where the application declares its own.
 */
@AutoConfiguration(
        after = {DataSourceAutoConfiguration.class, TransactionAutoConfiguration.class},
        afterName = {
            "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
            "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple."
                    + "SimpleMetricsExportAutoConfiguration"
        })
@ConditionalOnClass(DbBulkhead.class)
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBooleanProperty(name = "db-bulkhead.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DbBulkheadProperties.class)
public final class DbBulkheadAutoConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(DbBulkheadAutoConfiguration.class);
    /** The counter of connections taken outside any admission. */
    public static final String UNADMITTED = "db.bulkhead.connections.unadmitted";

    @Bean
    @ConditionalOnMissingBean
    DbBulkheadSettings dbBulkheadSettings(
            DbBulkheadProperties properties,
            DataSource dataSource,
            ObjectProvider<DataSourcePoolMetadataProvider> poolMetadata) {
        return DbBulkheadSettings.of(properties, poolSize(dataSource, poolMetadata));
    }

    /** The pool's maximum size, as Spring Boot's pool metadata reads it (HikariCP, DBCP2, Tomcat, ...), or -1. */
    private static int poolSize(DataSource dataSource, ObjectProvider<DataSourcePoolMetadataProvider> providers) {
        DataSourcePoolMetadata metadata = new CompositeDataSourcePoolMetadataProvider(
                        providers.orderedStream().toList())
                .getDataSourcePoolMetadata(dataSource);
        Integer max = metadata == null ? null : metadata.getMax();
        return max == null || max <= 0 ? -1 : max;
    }

    @Bean
    @ConditionalOnMissingBean
    DbBulkhead dbBulkhead(
            DataSource dataSource,
            DbBulkheadSettings settings,
            ObjectProvider<BulkheadListener> listeners,
            ObjectProvider<DbBulkheadBuilderCustomizer> customizers) {
        return settings.build(
                UnadmittedConnections.unwrapped(dataSource),
                listeners.orderedStream().toList(),
                customizers.orderedStream().toList());
    }

    /** Counts (or refuses) connections taken outside any admission: {@code db-bulkhead.unadmitted-connections}. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static UnadmittedConnections dbBulkheadUnadmittedConnections(
            Environment environment, ObjectProvider<DbBulkheadAdmission> admission) {
        var mode = Binder.get(environment)
                .bind("db-bulkhead.unadmitted-connections", UnadmittedConnections.Mode.class)
                .orElse(UnadmittedConnections.Mode.COUNT);
        return new UnadmittedConnections(mode, admission);
    }

    /**
     * Once the application is ready, what the barrier cannot keep on this database (MySQL, MariaDB, an unknown one) is
     * logged, as a barrier's first transaction does: admitted Spring code runs its own transactions, so it would not be
     * otherwise. A failure to read it is logged, never fatal.
     */
    @Bean
    ApplicationListener<ApplicationReadyEvent> dbBulkheadDatabaseLimits(DbBulkhead bulkhead) {
        return ready -> {
            try {
                bulkhead.databaseLimits();
            } catch (SQLException | RuntimeException e) {
                LOG.debug("db-bulkhead could not read what it keeps on its database at start-up", e);
            }
        };
    }

    @Bean
    @ConditionalOnMissingBean
    DbBulkheadAdmission dbBulkheadAdmission(
            DbBulkhead bulkhead, DbBulkheadSettings settings, ObjectProvider<ObservationRegistry> observations) {
        return new DbBulkheadAdmission(bulkhead, settings, observations.getIfAvailable(() -> ObservationRegistry.NOOP));
    }

    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean
    static DbWorkloadBeanPostProcessor dbWorkloadBeanPostProcessor(ObjectProvider<DbBulkheadAdmission> admission) {
        return new DbWorkloadBeanPostProcessor(admission);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(PlatformTransactionManager.class)
    AdmittedTransactionTemplate admittedTransactionTemplate(
            DbBulkheadAdmission admission, PlatformTransactionManager transactionManager) {
        return new AdmittedTransactionTemplate(admission, transactionManager);
    }

    /** Refuses to start with JPA's open-in-view on: its connection would outlive the permit. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(OpenEntityManagerInViewInterceptor.class)
    static class OpenInViewCheck {
        @Bean
        SmartInitializingSingleton dbBulkheadOpenInViewCheck(
                ConfigurableListableBeanFactory beans, DbBulkheadProperties properties) {
            return () -> {
                if (properties.isAllowOpenInView()) {
                    return;
                }
                var found = new ArrayList<String>();
                found.addAll(List.of(beans.getBeanNamesForType(OpenEntityManagerInViewInterceptor.class, true, false)));
                found.addAll(List.of(beans.getBeanNamesForType(OpenEntityManagerInViewFilter.class, true, false)));
                if (!found.isEmpty()) {
                    throw new DbBulkheadConfigurationException(
                            "JPA's open-in-view is on (beans " + found + "): the "
                                    + "EntityManager, and with it the database connection, stays open until the web "
                                    + "request has been rendered, long after a @DbWorkload method returned and "
                                    + "released its permit, so more connections are in use than db-bulkhead admits.",
                            "Set spring.jpa.open-in-view=false (and load what the view needs inside the admitted "
                                    + "method), or set db-bulkhead.allow-open-in-view=true to accept it.");
                }
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({MeterRegistry.class, DbBulkheadMetrics.class})
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean
        DbBulkheadMetrics dbBulkheadMetrics(MeterRegistry registry) {
            return new DbBulkheadMetrics(registry);
        }

        /** The gauges, once the barrier exists; HikariCP's own meters are left as they are. */
        @Bean
        SmartInitializingSingleton dbBulkheadGauges(
                DbBulkheadMetrics metrics,
                ObjectProvider<DbBulkhead> bulkhead,
                ObjectProvider<UnadmittedConnections> unadmitted,
                MeterRegistry registry) {
            return () -> bulkhead.ifAvailable(b -> {
                metrics.bind(b);
                unadmitted.ifAvailable(u -> FunctionCounter.builder(UNADMITTED, u, UnadmittedConnections::count)
                        .description("Connections taken from the DataSource outside any admission")
                        .baseUnit("connections")
                        .tag(BulkheadMeterNames.BULKHEAD, b.name())
                        .register(registry));
            });
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(DispatcherServlet.class)
    @ConditionalOnBooleanProperty(name = "db-bulkhead.web.enabled", matchIfMissing = true)
    static class Web {
        /** Paces the refusals answered over HTTP; a listener of the barrier, to learn each workload's completions. */
        @Bean
        @ConditionalOnMissingBean
        RefusalPacer dbBulkheadRefusalPacer(DbBulkheadProperties properties) {
            return new RefusalPacer(
                    DbBulkheadSettings.retryAfter(properties.getWeb().getRetryAfter()));
        }

        @Bean
        @ConditionalOnMissingBean
        DbBulkheadProblemResolver dbBulkheadProblemResolver(DbBulkheadProperties properties, RefusalPacer pacer) {
            var web = properties.getWeb();
            Duration retryAfter = DbBulkheadSettings.retryAfter(web.getRetryAfter());
            var status = DbBulkheadSettings.status(web.getStatus());
            Duration delay = DbBulkheadSettings.refusalDelay(web);
            return delay == null
                    ? new DbBulkheadProblemResolver(retryAfter, status, pacer)
                    : new DbBulkheadProblemResolver(retryAfter, status, delay);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(Endpoint.class)
    @ConditionalOnAvailableEndpoint(DbBulkheadEndpoint.class)
    static class Actuator {
        @Bean
        @ConditionalOnMissingBean
        DbBulkheadEndpoint dbBulkheadEndpoint(DbBulkheadAdmission admission) {
            return new DbBulkheadEndpoint(admission);
        }
    }
}
