package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.DbBulkhead;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.SubmissionPublisher;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.EnableAsync;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link DbWorkload} where proxies make mistakes easy: the workload of the bean that was called (two beans behind one
 * interface, two type-level beans inheriting one method), placeholders resolved at start-up, start-up failures for
 * what cannot be admitted (a lazy bean's at its creation; a value read after return under {@code Object}: warned
 * once), {@code Object}'s methods never admitted, {@code @Async} admitted on the thread that runs
 * the body, a {@code CompletableFuture}'s permit held until it completes, and an observation around each admission.
 */
@ExtendWith(OutputCaptureExtension.class)
class DbWorkloadRulesTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurationTest.BOOT)
            .withPropertyValues(Pg.datasource(4))
            .withPropertyValues(
                    "db-bulkhead.default-workload=a",
                    "db-bulkhead.workloads.a.concurrent=1",
                    "db-bulkhead.workloads.a.queue-wait=0ms",
                    "db-bulkhead.workloads.b.concurrent=1",
                    "db-bulkhead.workloads.b.queue-wait=0ms",
                    "app.workload=b",
                    "app.wait=0ms");

    /** The workload the calling thread is admitted to, or null. */
    static String admittedTo(DbBulkheadAdmission admission) {
        var lease = admission.currentLease();
        return lease == null ? null : lease.workload().name();
    }

    interface Named {
        String workload();
    }

    @Test
    void twoBeansBehindOneInterfaceAreEachAdmittedToTheirOwnWorkload() {
        runner.withUserConfiguration(TwoImplementations.class)
                .withPropertyValues("spring.aop.proxy-target-class=false")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    var beans = context.getBeansOfType(Named.class);
                    assertThat(beans.get("inA").workload()).isEqualTo("a");
                    assertThat(beans.get("inB").workload()).isEqualTo("b");
                    assertThat(beans.get("inA").workload())
                            .as("after the cache is warm")
                            .isEqualTo("a");
                });
    }

    @Test
    void twoTypeLevelBeansInheritingOneMethodAreEachAdmittedToTheirOwnWorkload() {
        runner.withUserConfiguration(TwoTypes.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(TypeA.class).workload()).isEqualTo("a");
            assertThat(context.getBean(TypeB.class).workload()).isEqualTo("b");
            assertThat(context.getBean(TypeA.class).workload()).isEqualTo("a");
        });
    }

    @Test
    void placeholdersAreResolvedAtStartUp() {
        runner.withUserConfiguration(Placeholders.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(Placeholders.Service.class).workload()).isEqualTo("b");
        });
    }

    @Test
    void anUnknownWorkloadOrAMalformedQueueWaitFailsStartUpNamingTheMethod() {
        runner.withUserConfiguration(Unknown.class)
                .run(context -> assertThat(AutoConfigurationTest.configurationFailure(context.getStartupFailure()))
                        .hasMessageContaining(
                                "@DbWorkload method dev.dbbulkhead.spring.DbWorkloadRulesTest$Unknown$Service"
                                        + ".call names an unknown workload 'reports' of db-bulkhead 'db'; known: [a, b]")
                        .hasMessageContaining("Service.soon: queueWait 'soon' is not a duration"));
    }

    @Test
    void whatAProxyCannotAdmitFailsStartUpNamingTheMethod() {
        runner.withUserConfiguration(Unreachable.class)
                .run(context -> assertThat(AutoConfigurationTest.configurationFailure(context.getStartupFailure()))
                        .hasMessageContaining("Unreachable$Service.hidden is private: a proxy cannot intercept it")
                        .hasMessageContaining("Unreachable$Service.sealed is final")
                        .hasMessageContaining(
                                "Unreachable$Service.rows returns a java.util.stream.Stream, which is read "
                                        + "after the method has returned")
                        .hasMessageContaining(
                                "Unreachable$Service.later returns a java.util.concurrent.Future: its work goes "
                                        + "on after the method returned")
                        .hasMessageContaining(
                                "Unreachable$Service.events returns a java.util.concurrent.Flow$Publisher"));
    }

    @Test
    void aLazyBeanWithAMethodThatCannotBeAdmittedFailsWhenItIsCreated() {
        runner.withUserConfiguration(LazyUnreachable.class).run(context -> {
            assertThat(context)
                    .as("the start-up check cannot see a bean not yet created")
                    .hasNotFailed();
            assertThatThrownBy(() -> context.getBean(LazyUnreachable.Service.class))
                    .hasStackTraceContaining("LazyUnreachable$Service.rows returns a java.util.stream.Stream")
                    .hasStackTraceContaining("Created after start-up: Bean 'lazyService': ");
        });
    }

    @Test
    void aStreamReturnedUnderObjectIsAdmittedButWarnedAboutOnce(CapturedOutput output) {
        runner.withUserConfiguration(Widened.class).run(context -> {
            var service = context.getBean(Widened.Service.class);
            assertThat(service.rows()).isInstanceOf(Stream.class);
            assertThat(service.rows()).isInstanceOf(Stream.class);
            assertThat(context.getBean(DbBulkhead.class).workload("a").available())
                    .isEqualTo(1);
        });
        assertThat(output.getAll().split("Widened\\$Service.rows returned a java.util.stream", -1))
                .as("one warning for two calls")
                .hasSize(2);
    }

    @Test
    void objectsMethodsAreNeverAdmittedSoAnAdmittedBeanCanBeLoggedInsideATransaction() {
        runner.withUserConfiguration(TwoTypes.class).run(context -> {
            var bean = context.getBean(TypeA.class);
            var template = new TransactionTemplate(
                    context.getBean(org.springframework.transaction.PlatformTransactionManager.class));
            String logged = template.execute(status -> bean + " " + bean.hashCode() + " " + bean.equals(bean));
            assertThat(logged).contains("TypeA").endsWith(" true");
            assertThat(context.getBean(DbBulkhead.class).workload("a").available())
                    .isEqualTo(1);
        });
    }

    @Test
    void anAsyncMethodIsAdmittedOnTheThreadThatRunsItsBody() {
        runner.withUserConfiguration(Asynchronous.class).run(context -> {
            assertThat(context).hasNotFailed();
            var service = context.getBean(Asynchronous.Service.class);
            var release = new CountDownLatch(1);
            Future<String> first = service.hold(release);
            assertThat(service.entered().await(10, TimeUnit.SECONDS)).isTrue();
            // B = 1, Q = 0, and the first body holds the permit: the others are refused, on their own threads.
            List<Future<String>> others = List.of(service.hold(release), service.hold(release), service.hold(release));
            for (Future<String> other : others) {
                assertThatThrownBy(() -> other.get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(AdmissionFullException.class);
            }
            release.countDown();
            assertThat(first.get(10, TimeUnit.SECONDS))
                    .as("admitted on the executor's thread")
                    .startsWith("a on ")
                    .doesNotContain(Thread.currentThread().getName());
            assertThat(service.mostAtOnce()).isEqualTo(1);
        });
    }

    @Test
    void aCompletableFutureKeepsItsPermitUntilItCompletes() {
        runner.withUserConfiguration(Futures.class).run(context -> {
            var service = context.getBean(Futures.Service.class);
            var w = context.getBean(DbBulkhead.class).workload("a");
            var done = new CompletableFuture<Integer>();
            CompletableFuture<Integer> result = service.later(done);
            assertThat(w.available())
                    .as("the method returned, its work has not")
                    .isZero();
            assertThatThrownBy(() -> service.later(new CompletableFuture<>()))
                    .isInstanceOf(AdmissionFullException.class);
            done.complete(42);
            assertThat(result.get(10, TimeUnit.SECONDS)).isEqualTo(42);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> w.available() == 1);
        });
    }

    @Test
    void eachAdmissionIsObservedWithItsWorkloadAndOutcome() {
        runner.withUserConfiguration(TwoTypes.class, Observed.class).run(context -> {
            var registry = context.getBean(TestObservationRegistry.class);
            context.getBean(TypeA.class).workload();
            TestObservationRegistryAssert.assertThat(registry)
                    .hasObservationWithNameEqualTo(DbBulkheadAdmission.OBSERVATION)
                    .that()
                    .hasLowCardinalityKeyValue("workload", "a")
                    .hasLowCardinalityKeyValue("outcome", "admitted")
                    .hasLowCardinalityKeyValue("bulkhead", "db")
                    .hasBeenStarted()
                    .hasBeenStopped();
            var w = context.getBean(DbBulkhead.class).workload("a");
            try (var held = w.acquire(Duration.ZERO)) {
                var refused = new java.util.concurrent.atomic.AtomicReference<Throwable>();
                Thread t = Thread.ofVirtual().start(() -> {
                    try {
                        context.getBean(TypeA.class).workload();
                    } catch (Throwable e) {
                        refused.set(e);
                    }
                });
                t.join();
                assertThat(refused.get()).isInstanceOf(AdmissionFullException.class);
            }
            TestObservationRegistryAssert.assertThat(registry)
                    .hasNumberOfObservationsWithNameEqualTo(DbBulkheadAdmission.OBSERVATION, 2)
                    .hasAnObservation(o -> o.hasNameEqualTo(DbBulkheadAdmission.OBSERVATION)
                            .hasLowCardinalityKeyValue("outcome", "admission_full")
                            .hasError());
        });
    }

    static class InA implements Named {
        @DbWorkload("a")
        @Override
        public String workload() {
            return admittedTo(Holder.admission);
        }
    }

    static class InB implements Named {
        @DbWorkload("b")
        @Override
        public String workload() {
            return admittedTo(Holder.admission);
        }
    }

    /** The admission, for beans that must not depend on it (so that nothing else differs between them). */
    static final class Holder {
        static volatile DbBulkheadAdmission admission;
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoImplementations {
        @Bean
        InA inA(DbBulkheadAdmission admission) {
            Holder.admission = admission;
            return new InA();
        }

        @Bean
        InB inB() {
            return new InB();
        }
    }

    /** One public method, inherited by both type-level beans. */
    abstract static class Base {
        private final DbBulkheadAdmission admission;

        Base(DbBulkheadAdmission admission) {
            this.admission = admission;
        }

        public String workload() {
            return admittedTo(admission);
        }
    }

    @DbWorkload("a")
    static class TypeA extends Base {
        TypeA(DbBulkheadAdmission admission) {
            super(admission);
        }
    }

    @DbWorkload("b")
    static class TypeB extends Base {
        TypeB(DbBulkheadAdmission admission) {
            super(admission);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoTypes {
        @Bean
        TypeA typeA(DbBulkheadAdmission admission) {
            return new TypeA(admission);
        }

        @Bean
        TypeB typeB(DbBulkheadAdmission admission) {
            return new TypeB(admission);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Placeholders {
        static class Service extends Base {
            Service(DbBulkheadAdmission admission) {
                super(admission);
            }

            @DbWorkload(value = "${app.workload}", queueWait = "${app.wait}")
            @Override
            public String workload() {
                return super.workload();
            }
        }

        @Bean
        Service service(DbBulkheadAdmission admission) {
            return new Service(admission);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Unknown {
        static class Service {
            @DbWorkload("reports")
            public void call() {}

            @DbWorkload(value = "a", queueWait = "soon")
            public void soon() {}
        }

        @Bean
        Service service() {
            return new Service();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Unreachable {
        static class Service {
            @DbWorkload("a")
            private void hidden() {}

            @DbWorkload("a")
            public final void sealed() {}

            @DbWorkload("a")
            public Stream<String> rows() {
                return Stream.of("x");
            }

            @DbWorkload("a")
            public Future<String> later() {
                return new FutureTask<>(() -> "x");
            }

            @DbWorkload("a")
            public Flow.Publisher<String> events() {
                return new SubmissionPublisher<>();
            }

            void useHidden() {
                hidden();
            }
        }

        @Bean
        Service service() {
            return new Service();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LazyUnreachable {
        static class Service {
            @DbWorkload("a")
            public Stream<String> rows() {
                return Stream.of("x");
            }
        }

        @Bean
        @Lazy
        Service lazyService() {
            return new Service();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Widened {
        static class Service {
            @DbWorkload("a")
            public Object rows() {
                return Stream.of("x");
            }
        }

        @Bean
        Service service() {
            return new Service();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAsync
    static class Asynchronous {
        static class Service {
            final CountDownLatch entered = new CountDownLatch(1);
            final AtomicInteger inside = new AtomicInteger();
            final AtomicInteger mostAtOnce = new AtomicInteger();
            private final DbBulkheadAdmission admission;

            Service(DbBulkheadAdmission admission) {
                this.admission = admission;
            }

            /** Read through the proxy, which has no fields of its own. */
            public CountDownLatch entered() {
                return entered;
            }

            public int mostAtOnce() {
                return mostAtOnce.get();
            }

            @Async
            @DbWorkload("a")
            public Future<String> hold(CountDownLatch release) throws InterruptedException {
                int now = inside.incrementAndGet();
                mostAtOnce.accumulateAndGet(now, Math::max);
                try {
                    entered.countDown();
                    release.await(10, TimeUnit.SECONDS);
                    return CompletableFuture.completedFuture(admittedTo(admission) + " on "
                            + Thread.currentThread().getName());
                } finally {
                    inside.decrementAndGet();
                }
            }
        }

        @Bean
        Service service(DbBulkheadAdmission admission) {
            return new Service(admission);
        }

        @Bean
        SimpleAsyncTaskExecutor taskExecutor() {
            return new SimpleAsyncTaskExecutor("async-");
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Futures {
        static class Service {
            @DbWorkload("a")
            public CompletableFuture<Integer> later(CompletableFuture<Integer> work) {
                return work.thenApply(x -> x);
            }
        }

        @Bean
        Service service() {
            return new Service();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Observed {
        @Bean
        TestObservationRegistry observationRegistry() {
            return TestObservationRegistry.create();
        }
    }
}
