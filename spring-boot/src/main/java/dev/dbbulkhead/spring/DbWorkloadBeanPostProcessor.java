package dev.dbbulkhead.spring;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * Applies {@link DbWorkload}. As Spring's own {@code @ConcurrencyLimit} post-processor does, it adds its advisor
 * <em>before</em> the advisors a bean already has (its {@code @Transactional} proxy, made earlier by the auto-proxy
 * creator), so admission wraps the transaction whatever the annotations' order; no AspectJ needed.
 */
public class DbWorkloadBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
    public DbWorkloadBeanPostProcessor(ObjectProvider<DbBulkheadAdmission> admission) {
        setBeforeExistingAdvisors(true);
        Pointcut onType = new AnnotationMatchingPointcut(DbWorkload.class, true);
        Pointcut onMethod = new AnnotationMatchingPointcut(null, DbWorkload.class, true);
        this.advisor = new DefaultPointcutAdvisor(new ComposablePointcut(onType).union(onMethod),
                new Interceptor(admission));
    }

    /** What one annotated method asks for, read once. */
    private record Target(String workload, Duration queueWait, String caller) {}

    private static final class Interceptor implements MethodInterceptor {
        private final ObjectProvider<DbBulkheadAdmission> admission;
        private final Map<Method, Target> targets = new ConcurrentHashMap<>();

        Interceptor(ObjectProvider<DbBulkheadAdmission> admission) {
            this.admission = admission;
        }

        @Override
        public Object invoke(MethodInvocation invocation) throws Throwable {
            Object self = invocation.getThis();
            Class<?> type = self != null ? AopUtils.getTargetClass(self) : invocation.getMethod().getDeclaringClass();
            Target target = targets.computeIfAbsent(invocation.getMethod(), m -> target(m, type));
            return admission.getObject().call(target.workload(), target.queueWait(), target.caller(),
                    invocation::proceed);
        }

        private static Target target(Method method, Class<?> type) {
            Method specific = AopUtils.getMostSpecificMethod(method, type);
            DbWorkload annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DbWorkload.class);
            if (annotation == null) {
                annotation = AnnotatedElementUtils.findMergedAnnotation(type, DbWorkload.class);
            }
            String caller = "@DbWorkload method " + ClassUtils.getQualifiedMethodName(specific, type);
            if (annotation == null) {
                throw new IllegalStateException("no @DbWorkload found for " + caller);
            }
            Duration queueWait = null;
            if (!annotation.queueWait().isEmpty()) {
                try {
                    queueWait = DurationStyle.detectAndParse(annotation.queueWait());
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException(caller + ": queueWait '" + annotation.queueWait()
                            + "' is not a duration (e.g. 50ms, 1s, PT0.05S)", e);
                }
                if (queueWait.isNegative()) {
                    throw new IllegalStateException(caller + ": queueWait must be >= 0, was " + queueWait);
                }
            }
            return new Target(annotation.value(), queueWait, caller);
        }
    }
}
