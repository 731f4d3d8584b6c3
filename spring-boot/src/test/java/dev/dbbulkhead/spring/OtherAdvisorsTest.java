package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.Workload;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.annotation.Transactional;

/**
 * {@link DbWorkload} on beans that another library's post-processor already wraps in a proxy of its own (a custom
 * advice, beside {@code @Transactional}), injected by their interface and as a class: the context starts, each call
 * is admitted once, and the other advice still runs.
 */
class OtherAdvisorsTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurationTest.BOOT)
            .withPropertyValues(Pg.datasource(4))
            .withPropertyValues("db-bulkhead.workloads.w.concurrent=2")
            .withUserConfiguration(Wrapped.class);

    @Test
    void beansAnotherLibraryWrapsAreAdmittedAndItsAdviceRuns() {
        runner.run(context -> {
            assertThat(context).hasNotFailed();
            var probe = context.getBean(Probe.class);
            Greeter viaInterface = context.getBean(Greeter.class);
            assertThat(AopUtils.isAopProxy(viaInterface)).isTrue();
            assertThat(viaInterface.greet()).isEqualTo("hello");
            PlainService plain = context.getBean(PlainService.class);
            assertThat(AopUtils.isAopProxy(plain)).isTrue();
            assertThat(plain.answer()).isEqualTo(42);
            assertThat(probe.admitted).containsExactly("w", "w");
            assertThat(Wrapped.CALLS)
                    .as("the other library's advice ran on each call")
                    .hasValue(2);
            DbWorkloadTest.assertAllBack(context);
        });
    }

    public interface Greeter {
        String greet();
    }

    @DbWorkload("w")
    public static class GreeterImpl implements Greeter {
        @Override
        @Transactional
        public String greet() {
            return "hello";
        }
    }

    @DbWorkload("w")
    public static class PlainService {
        @Transactional
        public int answer() {
            return 42;
        }
    }

    static final class Probe implements BulkheadListener {
        final ConcurrentLinkedQueue<String> admitted = new ConcurrentLinkedQueue<>();

        @Override
        public void onPermitAcquired(Workload workload, long waitNanos) {
            admitted.add(workload.name());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Wrapped {
        static final AtomicInteger CALLS = new AtomicInteger();

        @Bean
        Probe probe() {
            return new Probe();
        }

        /** Another library's wrapper: a proxy of its own around each of these beans, counting calls. */
        @Bean
        static BeanPostProcessor otherLibrary() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessAfterInitialization(Object bean, String name) {
                    if (!(bean instanceof Greeter) && !(bean instanceof PlainService)) {
                        return bean;
                    }
                    var factory = new ProxyFactory(bean);
                    factory.setProxyTargetClass(bean instanceof PlainService);
                    factory.addAdvice((org.aopalliance.intercept.MethodInterceptor) invocation -> {
                        CALLS.incrementAndGet();
                        return invocation.proceed();
                    });
                    return factory.getProxy();
                }
            };
        }

        @Bean
        Greeter greeter() {
            return new GreeterImpl();
        }

        @Bean
        PlainService plainService() {
            return new PlainService();
        }
    }
}
