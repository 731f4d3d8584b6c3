package dev.dbbulkhead.spring;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * The admitted methods of one repository: a JDK proxy whose {@link DbWorkload} sits on interfaces that its target
 * does not implement. A Spring Data repository is one: the annotation is on {@code OwnerRepository}, the target is
 * {@code SimpleJpaRepository} (or {@code SimpleJdbcRepository}), and derived and {@code @Query} methods are answered
 * by the proxy itself, so neither the target's class nor its methods say what to admit. Methods are matched by name
 * and parameter types, as the proxy dispatches them, whichever interface declares them ({@code CrudRepository}'s
 * inherited methods included). {@code T}: what a method asks for.
 */
final class RepositoryMethods<T> extends StaticMethodMatcherPointcut {
    private record Signature(String name, List<Class<?>> parameters) {
        static Signature of(Method m) {
            return new Signature(m.getName(), List.of(m.getParameterTypes()));
        }
    }

    private final Map<Signature, T> targets = new ConcurrentHashMap<>();

    /**
     * The interfaces of {@code bean} that carry {@link DbWorkload} (on the type or on a method) and that its target
     * class does not implement; empty for a bean that is not such a proxy, which is read as a class instead.
     */
    static List<Class<?>> annotatedInterfaces(Object bean) {
        if (!(bean instanceof Advised advised) || !AopUtils.isJdkDynamicProxy(bean)) {
            return List.of();
        }
        Class<?> target = AopUtils.getTargetClass(bean);
        var found = new ArrayList<Class<?>>();
        for (Class<?> type : advised.getProxiedInterfaces()) {
            if ((target == null || !type.isAssignableFrom(target)) && carries(type)) {
                found.add(type);
            }
        }
        return found;
    }

    /** Whether {@code type} or one of its methods carries {@link DbWorkload}. */
    static boolean carries(Class<?> type) {
        if (AnnotatedElementUtils.hasAnnotation(type, DbWorkload.class)) {
            return true;
        }
        for (Method m : type.getMethods()) {
            if (AnnotatedElementUtils.hasAnnotation(m, DbWorkload.class)) {
                return true;
            }
        }
        return false;
    }

    boolean has(Method method) {
        return targets.containsKey(Signature.of(method));
    }

    void put(Method method, T target) {
        targets.put(Signature.of(method), target);
    }

    boolean isEmpty() {
        return targets.isEmpty();
    }

    /** The target of a call through the proxy (only matched methods reach the interceptor). */
    T target(MethodInvocation invocation) {
        return Objects.requireNonNull(targets.get(Signature.of(invocation.getMethod())), "a matched method");
    }

    @Override
    public boolean matches(Method method, Class<?> targetClass) {
        return has(method);
    }
}
