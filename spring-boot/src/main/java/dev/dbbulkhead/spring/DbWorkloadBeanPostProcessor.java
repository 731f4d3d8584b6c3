package dev.dbbulkhead.spring;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Advisor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.Advised;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcher;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.FactoryBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Async;
import org.springframework.scheduling.annotation.AsyncAnnotationAdvisor;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Applies {@link DbWorkload}. As Spring's own {@code @ConcurrencyLimit} post-processor does, it adds its advisor
 * <em>before</em> the advisors a bean already has (its {@code @Transactional} proxy, made earlier by the auto-proxy
 * creator), so admission wraps the transaction whatever the annotations' order; an {@code @Async} hand-off stays
 * outside it, so that the body is admitted on the thread that runs it. No AspectJ needed.
 *
 * <p>Every annotated method is read when its bean is created, not at its first call: the workload and the queue
 * wait resolve {@code ${...}} placeholders then, and start-up fails, naming the method, for an unknown workload, a
 * malformed queue wait, a method a proxy cannot intercept (private, static or final: it would run unadmitted) and a
 * method whose declared result is read after it returns ({@code Stream}, {@code Iterator}, {@code Spliterator},
 * {@code ResultSet}, {@code Statement}, {@code Connection}, a reactive {@code Publisher}: the permit would be gone
 * by then). A call from the bean to itself bypasses the proxy, and so the admission, as it bypasses any Spring
 * advice; no proxy can tell. {@code Object}'s methods ({@code equals}, {@code hashCode}, {@code toString}) are never
 * admitted.
 *
 * <p>On a Spring Data repository (JPA, JDBC) the annotation sits on the repository interface or its methods, which
 * the repository's target ({@code SimpleJpaRepository}) does not implement: such a proxy gets an admission of its
 * own ({@link RepositoryMethods}) before the repository's transaction, covering derived, {@code @Query} and inherited
 * methods; its factory's product is created at start-up so that the same checks run for it.
 */
public class DbWorkloadBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor
        implements SmartInitializingSingleton {
    private final ObjectProvider<DbBulkheadAdmission> admission;
    /** What each annotated method of each bean class asks for, read once, when its bean is created. */
    private final Map<MethodClassKey, Target> targets = new ConcurrentHashMap<>();
    /** Each bean class scanned, with the problems its annotated methods have (empty: none). */
    private final Map<Class<?>, List<String>> scanned = new ConcurrentHashMap<>();

    private final List<String> problems = new ArrayList<>();
    /** Set once the start-up check has run: a bean created later (lazy, prototype) fails its own creation. */
    private volatile boolean started;

    @SuppressWarnings("this-escape") // classTarget runs on calls, long after construction
    public DbWorkloadBeanPostProcessor(ObjectProvider<DbBulkheadAdmission> admission) {
        this.admission = admission;
        setBeforeExistingAdvisors(true);
        Pointcut onType = new AnnotationMatchingPointcut(DbWorkload.class, true);
        Pointcut onMethod = new AnnotationMatchingPointcut(null, DbWorkload.class, true);
        Pointcut admitted = new ComposablePointcut(onType).union(onMethod).intersection(NOT_OBJECT_METHODS);
        this.advisor = new DefaultPointcutAdvisor(admitted, new Interceptor(this::classTarget));
    }

    /** {@code equals}, {@code hashCode}, {@code toString} and {@code Object}'s own are never admitted. */
    private static final StaticMethodMatcher NOT_OBJECT_METHODS = new StaticMethodMatcher() {
        @Override
        public boolean matches(Method method, Class<?> targetClass) {
            return !isObjectMethod(method);
        }
    };

    private static boolean isObjectMethod(Method m) {
        return ReflectionUtils.isObjectMethod(m)
                || ReflectionUtils.isEqualsMethod(m)
                || ReflectionUtils.isHashCodeMethod(m)
                || ReflectionUtils.isToStringMethod(m);
    }

    /**
     * What one annotated method asks for: its workload (resolved), its queue wait (null: the workload's), its kind of
     * operation (the annotation's, or the method's: {@code OrderService.place}).
     */
    record Target(String workload, @Nullable Duration queueWait, String caller, String kind) {}

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        // A repository that other advisors (caching, security, retry...) already wrap is a proxy around the
        // repository's
        // own proxy: the admission goes on the repository's, before its transaction, as without them.
        for (Object proxy = bean; proxy instanceof Advised advised; proxy = wrapped(advised)) {
            List<Class<?>> declaredOn = RepositoryMethods.annotatedInterfaces(proxy);
            if (!declaredOn.isEmpty()) {
                adviseRepository(advised, declaredOn, beanName);
                return bean;
            }
        }
        failIfCreatedLate(
                scanned.computeIfAbsent(AopProxyUtils.ultimateTargetClass(bean), type -> scan(type, beanName)));
        Object result = super.postProcessAfterInitialization(bean, beanName);
        if (result instanceof Advised advised) {
            keepAsyncOutside(advised);
        }
        return result;
    }

    /** The object a proxy with a fixed target wraps, or null: none, or not a fixed one. */
    private static @Nullable Object wrapped(Advised proxy) {
        var source = proxy.getTargetSource();
        if (!source.isStatic()) {
            return null;
        }
        try {
            return source.getTarget();
        } catch (Exception e) {
            return null; // a target that cannot be had is read as a class, as any other
        }
    }

    /**
     * A bean created after start-up (@Lazy, a prototype) with problems: the start-up check has run, so this creation
     * fails, and so does every later one of the same class.
     */
    private void failIfCreatedLate(List<String> found) {
        if (started && !found.isEmpty()) {
            throw new DbBulkheadConfigurationException(
                    "Created after start-up: " + String.join("\n", found),
                    "Fix the annotation as said; a method that cannot be admitted must not carry @DbWorkload.");
        }
    }

    /**
     * When {@code @Async}'s advisor was added before ours ({@code @EnableAsync}'s post-processor ran first), ours is
     * moved just inside it: the hand-off to the executor comes first, the admission on the thread that runs the body.
     */
    private void keepAsyncOutside(Advised advised) {
        Advisor[] advisors = advised.getAdvisors();
        int mine = -1;
        int async = -1;
        for (int i = 0; i < advisors.length; i++) {
            if (advisors[i] == this.advisor) {
                mine = i;
            } else if (advisors[i] instanceof AsyncAnnotationAdvisor) {
                async = i;
            }
        }
        Advisor ours = this.advisor;
        if (ours != null && mine >= 0 && async > mine && !advised.isFrozen()) {
            advised.removeAdvisor(mine);
            advised.addAdvisor(async, ours); // right after the async advisor, now one place earlier
        }
    }

    /**
     * Reads the annotated methods of {@code type}, bean {@code beanName}'s class; returns their problems (also kept for
     * the start-up report, naming the bean). A JDK proxy's class (a proxy whose target is not fixed) is read through
     * the interfaces it implements, never its own final methods.
     */
    private List<String> scan(Class<?> type, String beanName) {
        var found = new ArrayList<String>();
        for (Class<?> read : Proxy.isProxyClass(type) ? userInterfaces(type) : List.<Class<?>>of(type)) {
            DbWorkload onType = AnnotatedElementUtils.findMergedAnnotation(read, DbWorkload.class);
            ReflectionUtils.doWithMethods(read, method -> {
                Target target = read(method, read, onType, found);
                if (target != null) {
                    targets.put(new MethodClassKey(method, type), target);
                }
            });
        }
        var named = found.stream().map(p -> "Bean '" + beanName + "': " + p).toList();
        named.forEach(this::problem);
        return named;
    }

    /** The interfaces a JDK proxy class implements for its users, not Spring's own (Advised, SpringProxy...). */
    private static List<Class<?>> userInterfaces(Class<?> proxyClass) {
        var user = new ArrayList<Class<?>>();
        for (Class<?> i : proxyClass.getInterfaces()) {
            if (!i.getName().startsWith("org.springframework.aop.")
                    && !i.getName().startsWith("org.springframework.core.DecoratingProxy")) {
                user.add(i);
            }
        }
        return user;
    }

    /**
     * What {@code method}, seen on {@code type} (annotated {@code onType}, or null), asks for: null when it carries no
     * annotation, or when it cannot be admitted (the problem, naming the method, added to {@code found}).
     */
    private @Nullable Target read(Method method, Class<?> type, @Nullable DbWorkload onType, List<String> found) {
        DbWorkload onMethod = AnnotatedElementUtils.findMergedAnnotation(method, DbWorkload.class);
        int modifiers = method.getModifiers();
        boolean fromType = onMethod == null
                && onType != null
                && Modifier.isPublic(modifiers)
                && !Modifier.isStatic(modifiers) // a type's annotation is about its instances' methods
                && !isObjectMethod(method)
                && method.getDeclaringClass() != Object.class
                && !method.isBridge()
                && !method.isSynthetic();
        if (onMethod == null && !fromType) {
            return null;
        }
        String caller = "@DbWorkload method " + ClassUtils.getQualifiedMethodName(method, type);
        String unreachable = Modifier.isPrivate(modifiers)
                ? "private"
                : Modifier.isStatic(modifiers) ? "static" : Modifier.isFinal(modifiers) ? "final" : null;
        if (unreachable != null) {
            found.add(caller + " is " + unreachable + ": a proxy cannot intercept it, so it would run without "
                    + "admission. Make it public (or protected) and not final, or move the annotation.");
            return null;
        }
        String afterReturn = async(method, type) ? null : ReadAfterReturn.why(method.getReturnType());
        if (afterReturn != null) {
            found.add(caller + " " + afterReturn);
            return null;
        }
        return target(
                onMethod != null ? onMethod : Objects.requireNonNull(onType, "fromType"),
                caller,
                type.getSimpleName() + "." + method.getName(),
                found);
    }

    /**
     * A repository (a JDK proxy whose {@code @DbWorkload} interfaces its target does not implement): every annotated
     * method of those interfaces, inherited ones included, is read now and admitted by an advisor of this proxy's
     * own, placed before the repository's transaction.
     */
    private Object adviseRepository(Advised repository, List<Class<?>> interfaces, String beanName) {
        var found = new ArrayList<String>();
        var own = new RepositoryMethods<Target>();
        for (Class<?> type : interfaces) {
            DbWorkload onType = AnnotatedElementUtils.findMergedAnnotation(type, DbWorkload.class);
            for (Method method : type.getMethods()) {
                Target target = own.has(method) ? null : read(method, type, onType, found);
                if (target != null) {
                    own.put(method, target);
                    targets.put(new MethodClassKey(method, type), target); // checked with the others at start-up
                }
            }
        }
        var named = found.stream().map(p -> "Bean '" + beanName + "': " + p).toList();
        named.forEach(this::problem);
        failIfCreatedLate(named);
        if (!own.isEmpty()) {
            if (repository.isFrozen()) {
                throw new DbBulkheadConfigurationException(
                        "Bean '" + beanName + "' carries @DbWorkload on " + interfaces
                                + ", but its proxy is frozen: no admission can be added to it.",
                        "Move the annotation to the service method that calls the repository.");
            }
            repository.addAdvisor(0, new DefaultPointcutAdvisor(own, new Interceptor(own::target)));
        }
        return repository;
    }

    /** An {@code @Async} method is admitted on the thread that runs its body: the future it returns is Spring's. */
    private static boolean async(Method method, Class<?> type) {
        return AnnotatedElementUtils.hasAnnotation(method, Async.class)
                || AnnotatedElementUtils.hasAnnotation(type, Async.class);
    }

    /** The annotation's attributes, placeholders resolved; null (and a problem noted) when malformed. */
    private @Nullable Target target(DbWorkload annotation, String caller, String method, List<String> found) {
        String workload = resolve(annotation.value());
        String kind = resolve(annotation.kind());
        String wait = resolve(annotation.queueWait());
        Duration queueWait = null;
        if (!wait.isEmpty()) {
            try {
                queueWait = DurationStyle.detectAndParse(wait);
            } catch (IllegalArgumentException e) {
                found.add(caller + ": queueWait '" + wait + "' is not a duration (e.g. 50ms, 1s, PT0.05S)");
                return null;
            }
            if (queueWait.isNegative()) {
                found.add(caller + ": queueWait must be >= 0, was " + wait);
                return null;
            }
        }
        return new Target(workload, queueWait, caller, kind.isBlank() ? method : kind);
    }

    private String resolve(String value) {
        if (value.isEmpty() || !(getBeanFactory() instanceof ConfigurableBeanFactory beans)) {
            return value;
        }
        String resolved = beans.resolveEmbeddedValue(value);
        return resolved == null ? "" : resolved;
    }

    @SuppressWarnings("NullAway.Init") // set by Spring (BeanFactoryAware) before any bean is post-processed
    private BeanFactory beans;

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        this.beans = beanFactory;
    }

    private BeanFactory getBeanFactory() {
        return beans;
    }

    private void problem(String problem) {
        synchronized (problems) {
            problems.add(problem);
        }
    }

    /**
     * A factory's product is created when first asked for, and a repository nobody injects might never be: those
     * whose interface carries {@code @DbWorkload} are created now, so that the start-up check covers them.
     */
    private void createRepositories() {
        if (!(getBeanFactory() instanceof ListableBeanFactory beans)) {
            return;
        }
        for (String name : beans.getBeanNamesForType(FactoryBean.class, false, false)) {
            if (beans.getBean(name) instanceof FactoryBean<?> factory
                    && factory.getObjectType() != null
                    && factory.getObjectType().isInterface()
                    && RepositoryMethods.carries(factory.getObjectType())) {
                beans.getBean(BeanFactoryUtils.transformedBeanName(name));
            }
        }
    }

    /** Once every singleton exists: every annotated method must be admissible, to a workload that exists. */
    @Override
    public void afterSingletonsInstantiated() {
        createRepositories();
        started = true;
        DbBulkheadAdmission available = admission.getIfAvailable();
        var found = new ArrayList<String>();
        synchronized (problems) {
            found.addAll(problems);
        }
        if (available != null) {
            for (Target t : targets.values()) {
                try {
                    available.settings().named(t.workload(), t.caller());
                } catch (IllegalArgumentException unknown) {
                    found.add(unknown.getMessage());
                }
            }
        }
        if (!found.isEmpty()) {
            throw new DbBulkheadConfigurationException(
                    String.join("\n", found.stream().distinct().toList()),
                    "Declare the workload (db-bulkhead.workloads.<name>.concurrent) or fix the annotation as said; "
                            + "a method that cannot be admitted must not carry @DbWorkload.");
        }
    }

    /** The target of an invocation on a bean scanned as a class: by its method and target class. */
    private Target classTarget(MethodInvocation invocation) {
        Method method = invocation.getMethod();
        Object self = invocation.getThis();
        Class<?> type = self != null ? AopProxyUtils.ultimateTargetClass(self) : method.getDeclaringClass();
        Target target = targets.get(new MethodClassKey(method, type));
        if (target == null) { // an interface's method, or a class not seen at start-up
            target = targets.computeIfAbsent(new MethodClassKey(method, type), key -> lookUp(method, type));
        }
        return target;
    }

    private Target lookUp(Method method, Class<?> type) {
        scan(type, "(created after start-up)");
        Method specific = AopUtils.getMostSpecificMethod(method, type);
        Target found = targets.get(new MethodClassKey(specific, type));
        if (found == null) {
            throw new IllegalStateException("no admissible @DbWorkload for "
                    + ClassUtils.getQualifiedMethodName(specific, type) + " (see the start-up report)");
        }
        return found;
    }

    /** Admits each call to the workload its target says, then proceeds. */
    private final class Interceptor implements MethodInterceptor {
        private final Function<MethodInvocation, Target> targetOf;

        Interceptor(Function<MethodInvocation, Target> targetOf) {
            this.targetOf = targetOf;
        }

        @Override
        public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
            Target target = targetOf.apply(invocation);
            return admission
                    .getObject()
                    .<@Nullable Object, Throwable>call(
                            target.workload(), target.queueWait(), target.caller(), target.kind(), invocation::proceed);
        }
    }
}
