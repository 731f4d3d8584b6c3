package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.spring.repositories.cached.CachedPeople;
import dev.dbbulkhead.spring.repositories.jdbc.PersonRow;
import dev.dbbulkhead.spring.repositories.jdbc.PersonRows;
import dev.dbbulkhead.spring.repositories.jpa.AuditRepository;
import dev.dbbulkhead.spring.repositories.jpa.Person;
import dev.dbbulkhead.spring.repositories.jpa.PersonRepository;
import dev.dbbulkhead.spring.repositories.refused.StreamingPeople;
import dev.dbbulkhead.testkit.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfigurationPackage;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.jdbc.autoconfigure.DataJdbcRepositoriesAutoConfiguration;
import org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.concurrent.ConcurrentMapCacheManager;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.data.jpa.repository.config.EnableJpaRepositories;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@link DbWorkload} on Spring Data repositories (JPA with Hibernate, and JDBC), in a real Boot context on
 * PostgreSQL: on the interface and on one method; derived, {@code @Query} and inherited methods; admission before the
 * repository's own transaction, which begins while the permit is held; no connection taken outside an admission
 * ({@link UnadmittedConnections} counts none, and exactly the one an unannotated method takes); every permit and
 * connection back; and what cannot be admitted refused at start-up, naming the method.
 */
class RepositoriesTest {
    private static final AutoConfigurations JPA = AutoConfigurations.of(HibernateJpaAutoConfiguration.class);
    private static final AutoConfigurations JDBC =
            AutoConfigurations.of(JdbcTemplateAutoConfiguration.class, DataJdbcRepositoriesAutoConfiguration.class);

    private final ApplicationContextRunner base = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurationTest.BOOT)
            .withPropertyValues(Pg.datasource(4))
            .withPropertyValues(
                    "spring.jpa.hibernate.ddl-auto=none",
                    "spring.jpa.open-in-view=false",
                    "db-bulkhead.default-workload=interactive",
                    "db-bulkhead.workloads.interactive.concurrent=1",
                    "db-bulkhead.workloads.interactive.queue-wait=0ms",
                    "db-bulkhead.workloads.batch.concurrent=1",
                    "db-bulkhead.workloads.batch.queue-wait=0ms")
            .withUserConfiguration(Probe.class);

    @BeforeAll
    static void table() throws SQLException {
        try (Connection c = TestDatabase.get().connect();
                var s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS spring_people (id bigserial PRIMARY KEY, name text)");
        }
    }

    @Test
    void jpaRepositoryMethodsAreAdmittedBeforeTheirTransaction() {
        base.withConfiguration(JPA).withUserConfiguration(JpaRepositories.class).run(context -> {
            assertThat(context).hasNotFailed();
            var people = context.getBean(PersonRepository.class);
            String name = "jpa-" + System.nanoTime();
            Probe probe = context.getBean(Probe.class);

            call(context, "interactive", () -> people.save(new Person(name))); // inherited (CrudRepository)
            call(
                    context,
                    "interactive",
                    () -> assertThat(people.findByNameStartingWith(name)).hasSize(1)); // derived
            call(context, "interactive", () -> assertThat(people.named(name)).hasSize(1)); // @Query
            call(
                    context,
                    "batch",
                    () -> assertThat(people.countByNameStartingWith(name)).isOne()); // the method's own
            call(context, "interactive", () -> assertThat(people.findAll()).isNotEmpty()); // inherited (ListCrud)

            var audit = context.getBean(AuditRepository.class);
            call(context, "batch", () -> assertThat(audit.findByName(name)).hasSize(1));
            probe.reset();
            assertThat(audit.count()).isPositive(); // not annotated: not admitted, and counted
            assertThat(probe.admitted).isEmpty();
            assertThat(probe.began).containsExactly("none held");
            assertThat(context.getBean(UnadmittedConnections.class).count()).isOne();
            DbWorkloadTest.assertAllBack(context);
        });
    }

    @Test
    void aRepositoryThatCachingAlreadyWrapsIsAdmittedBeforeItsTransaction() {
        base.withConfiguration(JPA)
                .withUserConfiguration(CachedRepositories.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    var people = context.getBean(CachedPeople.class);
                    assertThat(AopUtils.isAopProxy(people)).isTrue();
                    String name = "cached-" + System.nanoTime();
                    Probe probe = context.getBean(Probe.class);

                    call(context, "interactive", () -> people.save(new Person(name))); // inherited
                    call(
                            context,
                            "interactive",
                            () -> assertThat(people.findByName(name)).hasSize(1)); // a cache miss
                    probe.reset();
                    assertThat(people.findByName(name)).hasSize(1); // a cache hit: nothing sent, nothing to admit
                    assertThat(probe.admitted).as("a cache hit takes no permit").isEmpty();
                    assertThat(context.getBean(UnadmittedConnections.class).count())
                            .isZero();
                    DbWorkloadTest.assertAllBack(context);
                });
    }

    @Test
    void jdbcRepositoryMethodsAreAdmittedBeforeTheirTransaction() {
        base.withConfiguration(JDBC)
                .withUserConfiguration(JdbcRepositories.class)
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    var rows = context.getBean(PersonRows.class);
                    String name = "jdbc-" + System.nanoTime();

                    call(context, "interactive", () -> rows.save(new PersonRow(null, name))); // inherited
                    call(
                            context,
                            "interactive",
                            () -> assertThat(rows.findByName(name)).hasSize(1)); // derived
                    call(
                            context,
                            "batch",
                            () -> assertThat(rows.startingWith(name)).hasSize(1)); // @Query, the method's own
                    call(context, "interactive", () -> assertThat(rows.count()).isPositive()); // inherited
                    DbWorkloadTest.assertAllBack(context);
                });
    }

    @Test
    void aRepositoryCallRefusedForWantOfAPermitOpensNoConnectionAndRunsNothing() {
        base.withConfiguration(JPA).withUserConfiguration(JpaRepositories.class).run(context -> {
            var people = context.getBean(PersonRepository.class);
            var admission = context.getBean(DbBulkheadAdmission.class);
            var holding = new CountDownLatch(1);
            var release = new CountDownLatch(1);
            try (var other = Executors.newVirtualThreadPerTaskExecutor()) {
                var holder = other.submit(() -> admission.call("interactive", null, "holder", () -> {
                    holding.countDown();
                    return release.await(10, TimeUnit.SECONDS);
                }));
                assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
                int before = context.getBean(Probe.class).began.size();
                assertThatThrownBy(() -> people.findByNameStartingWith("x")).isInstanceOf(AdmissionFullException.class);
                assertThat(context.getBean(Probe.class).began)
                        .as("no transaction began")
                        .hasSize(before);
                release.countDown();
                assertThat(holder.get(10, TimeUnit.SECONDS)).isTrue();
            }
            DbWorkloadTest.assertAllBack(context);
        });
    }

    @Test
    void repositoryMethodsThatCannotBeAdmittedFailTheStartUpNamingThem() {
        base.withConfiguration(JPA)
                .withUserConfiguration(RefusedRepositories.class)
                .run(context -> {
                    assertThat(context).hasFailed();
                    String message = rootMessage(context.getStartupFailure());
                    assertThat(message)
                            .contains("StreamingPeople.streamByName")
                            .contains("Stream")
                            .contains("StreamingPeople.countByName")
                            .contains("reports");
                });
    }

    private static String rootMessage(Throwable failure) {
        var all = new StringBuilder();
        for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
        }
        return all.toString();
    }

    /**
     * Runs {@code call}; checks that exactly one admission to {@code workload} came first, with no transaction active
     * then, and that the repository's transaction began while that workload's permit was held.
     */
    private static void call(ApplicationContext context, String workload, Runnable call) {
        Probe probe = context.getBean(Probe.class);
        probe.reset();
        call.run();
        assertThat(probe.admitted).as("admissions").containsExactly(workload + ", no transaction");
        assertThat(probe.began)
                .as("transactions begun (derived and @Query methods run without one), with the " + "permits held then")
                .allSatisfy(held -> assertThat(held).isEqualTo(workload + " holds 1"));
        assertThat(context.getBean(UnadmittedConnections.class).count())
                .as("connections taken outside admissions")
                .isZero();
    }

    /** Records each admission and, at each transaction's beginning, the permits held then. */
    @Configuration(proxyBeanMethods = false)
    static class Probe implements BulkheadListener, TransactionExecutionListener {
        final ConcurrentLinkedQueue<String> admitted = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> began = new ConcurrentLinkedQueue<>();
        private final ObjectProvider<DbBulkhead> bulkhead;

        Probe(ObjectProvider<DbBulkhead> bulkhead) {
            this.bulkhead = bulkhead;
        }

        void reset() {
            admitted.clear();
            began.clear();
        }

        @Override
        public void onPermitAcquired(Workload workload, long waitNanos) {
            admitted.add(workload.name()
                    + (TransactionSynchronizationManager.isActualTransactionActive()
                            ? ", in a transaction"
                            : ", no transaction"));
        }

        @Override
        public void afterBegin(TransactionExecution transaction, Throwable beginFailure) {
            String held = bulkhead.getObject().workloads().stream()
                    .filter(w -> w.executing() > 0)
                    .map(w -> w.name() + " holds " + w.executing())
                    .collect(Collectors.joining(", "));
            began.add(held.isEmpty() ? "none held" : held);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @AutoConfigurationPackage(basePackageClasses = Person.class)
    @EnableJpaRepositories(basePackageClasses = PersonRepository.class)
    static class JpaRepositories {}

    @Configuration(proxyBeanMethods = false)
    @AutoConfigurationPackage(basePackageClasses = Person.class)
    @EnableJpaRepositories(basePackageClasses = CachedPeople.class)
    @EnableCaching
    static class CachedRepositories {
        @Bean
        CacheManager cacheManager() {
            return new ConcurrentMapCacheManager("people");
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableJdbcRepositories(basePackageClasses = PersonRows.class)
    static class JdbcRepositories {}

    @Configuration(proxyBeanMethods = false)
    @AutoConfigurationPackage(basePackageClasses = Person.class)
    @EnableJpaRepositories(basePackageClasses = StreamingPeople.class)
    static class RefusedRepositories {}
}
