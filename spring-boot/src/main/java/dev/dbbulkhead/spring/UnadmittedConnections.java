package dev.dbbulkhead.spring;

import java.lang.StackWalker.StackFrame;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.NameMatchMethodPointcutAdvisor;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurationPackages;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.util.ClassUtils;

/**
 * Counts the connections the application takes from its {@link DataSource} outside any admission: an unannotated
 * controller or {@code @ModelAttribute} method, a scheduled job, a health check. The barrier bounds only what it
 * admits; this count says how much of the database load it does not see ({@code db.bulkhead.connections.unadmitted}).
 * Each call site (the first frame in the application's own packages, those of its {@code @SpringBootApplication}
 * class; without them, the first frame outside Spring, HikariCP, Hibernate, the JDK and the driver) is logged once.
 * With {@link Mode#REFUSE}, such a {@code getConnection} fails with an {@link SQLException} naming the caller,
 * before any connection is taken. Both start once the context has been refreshed: start-up work (Hibernate's, a
 * schema script's) is neither counted nor refused; an {@code ApplicationRunner} that uses the database runs after,
 * and is.
 *
 * <p>Only the {@code DataSource} the barrier is built over is watched: the only one, or the {@code @Primary} one of
 * several (a second database, which no barrier guards, is left alone). It is wrapped in a class-based proxy, so that
 * it keeps its type ({@code HikariDataSource} stays injectable as such); where its class cannot be subclassed (a
 * final class, as c3p0's and Agroal's are, or a final {@code getConnection}), in an interface proxy, said once at
 * INFO; should neither work, it is left unwrapped with one WARN: watching is optional, start-up never fails for it.
 * The barrier itself is built over the bean's target, so that its own transactions are not counted. Connections taken
 * under a lease from {@code DbBulkhead.acquire} or inside {@code DbBulkhead.transaction} on the target are not seen
 * here; inside an admission of {@link DbWorkload} or {@link AdmittedTransactionTemplate} they are admitted.
 * Thread-safe.
 */
public class UnadmittedConnections
        implements BeanPostProcessor, BeanFactoryAware, ApplicationListener<ContextRefreshedEvent> {
    /** What to do with a connection taken outside any admission. */
    public enum Mode {
        /** Count it, and log each call site once (the default). */
        COUNT,
        /** Refuse it once the application has started: {@code getConnection} throws, naming the caller. */
        REFUSE,
        /** Neither: the {@code DataSource} is left unwrapped. */
        OFF
    }

    private static final Logger LOG = LoggerFactory.getLogger(UnadmittedConnections.class);
    /** Frames that are not the application's own: the call site is the first frame below none of these. */
    private static final List<String> NOT_THE_CALLER = List.of(
            "java.",
            "javax.",
            "jdk.",
            "sun.",
            "com.sun.",
            "jakarta.",
            "org.springframework.",
            "com.zaxxer.",
            "org.hibernate.",
            "org.postgresql.",
            "io.micrometer.",
            "org.apache.",
            "org.slf4j.");

    private static final StackWalker STACK = StackWalker.getInstance();

    private final Mode mode;
    private final ObjectProvider<DbBulkheadAdmission> admissions;
    private final LongAdder count = new LongAdder();
    private final Set<String> logged = ConcurrentHashMap.newKeySet();
    /** Set once the context has been refreshed (read then, so that no bean is created from getConnection). */
    private volatile @Nullable DbBulkheadAdmission admission;
    /** The application's own packages (its {@code @SpringBootApplication} class's), once known; else empty. */
    private volatile List<String> applicationPackages = List.of();

    private @Nullable ConfigurableListableBeanFactory beanFactory;

    public UnadmittedConnections(Mode mode, ObjectProvider<DbBulkheadAdmission> admissions) {
        this.mode = mode;
        this.admissions = admissions;
    }

    /** Connections taken outside any admission since the application started. */
    public long count() {
        return count.sum();
    }

    /** The mode this instance applies. */
    public Mode mode() {
        return mode;
    }

    /** The {@code DataSource} under the proxy this class put around it (itself for any other). */
    public static DataSource unwrapped(DataSource dataSource) {
        if (AopUtils.isAopProxy(dataSource) && AopProxyUtils.getSingletonTarget(dataSource) instanceof DataSource t) {
            return t;
        }
        return dataSource;
    }

    @Override
    public void setBeanFactory(BeanFactory factory) {
        if (factory instanceof ConfigurableListableBeanFactory listable) {
            beanFactory = listable;
        }
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (mode == Mode.OFF || !(bean instanceof DataSource) || AopUtils.isAopProxy(bean) || !guarded(beanName)) {
            return bean;
        }
        try {
            return watched(bean, beanName);
        } catch (RuntimeException | LinkageError e) {
            LOG.warn(
                    "db-bulkhead cannot watch the DataSource bean '{}' ({}) for connections taken outside an "
                            + "admission, and leaves it as it is: {}. Set db-bulkhead.unadmitted-connections=off to "
                            + "say so.",
                    beanName,
                    bean.getClass().getName(),
                    e.toString());
            return bean;
        }
    }

    /**
     * Whether {@code beanName} is the DataSource the barrier is built over: the only one, or the {@code @Primary} one
     * (the auto-configuration's single candidate).
     */
    private boolean guarded(String beanName) {
        if (beanFactory == null) {
            return true;
        }
        String[] names = beanFactory.getBeanNamesForType(DataSource.class, true, false);
        if (names.length <= 1) {
            return true;
        }
        for (String name : names) {
            if (beanFactory.containsBeanDefinition(name)
                    && beanFactory.getBeanDefinition(name).isPrimary()) {
                return name.equals(beanName);
            }
        }
        return false; // several and none primary: no barrier is built, nothing to watch for
    }

    private Object watched(Object bean, String beanName) {
        var getConnection = new NameMatchMethodPointcutAdvisor((MethodInterceptor) this::getConnection);
        getConnection.setMappedName("getConnection");
        var proxy = new ProxyFactory(bean);
        proxy.addAdvisor(getConnection);
        ClassLoader loader = bean.getClass().getClassLoader();
        String why = notSubclassable(bean.getClass());
        if (why == null) {
            proxy.setProxyTargetClass(true);
            try {
                return proxy.getProxy(loader);
            } catch (RuntimeException | LinkageError e) {
                why = "cannot be subclassed (" + e.getClass().getSimpleName() + ")";
            }
        }
        proxy.setProxyTargetClass(false);
        proxy.setInterfaces(ClassUtils.getAllInterfacesForClass(bean.getClass(), loader));
        Object wrapped = proxy.getProxy(loader);
        LOG.info(
                "db-bulkhead watches the DataSource bean '{}' through an interface proxy, since {} {}: it is "
                        + "injectable as DataSource (and its other interfaces), not as {}. Set "
                        + "db-bulkhead.unadmitted-connections=off to keep its type.",
                beanName,
                bean.getClass().getName(),
                why,
                bean.getClass().getSimpleName());
        return wrapped;
    }

    /** Why a class-based proxy cannot stand for {@code type} (a final class, a final getConnection), or null. */
    private static @Nullable String notSubclassable(Class<?> type) {
        if (Modifier.isFinal(type.getModifiers())) {
            return "is a final class";
        }
        for (Method m : type.getMethods()) {
            if (m.getName().equals("getConnection") && Modifier.isFinal(m.getModifiers())) {
                return "has a final " + m.getName() + "(" + m.getParameterCount() + " parameters)";
            }
        }
        return null;
    }

    @Override
    public void onApplicationEvent(ContextRefreshedEvent event) {
        if (admission == null) {
            admission = admissions.getIfAvailable();
        }
        if (beanFactory != null && AutoConfigurationPackages.has(beanFactory)) {
            applicationPackages = AutoConfigurationPackages.get(beanFactory).stream()
                    .map(p -> p + ".")
                    .toList();
        }
    }

    private @Nullable Object getConnection(MethodInvocation invocation) throws Throwable {
        DbBulkheadAdmission started = admission;
        if (started == null || started.currentLease() != null) {
            return invocation.proceed(); // before start-up, or admitted
        }
        // A health indicator's probe (Spring Boot's DataSourceHealthIndicator, or the application's own) is never
        // refused: a refusal would take /actuator/health DOWN, and a liveness probe would restart a saturated app.
        String health = caller(UnadmittedConnections::healthIndicator);
        String caller = health != null ? health : caller(applicationPackages);
        caller = caller != null ? caller : "(no application frame)";
        if (mode == Mode.REFUSE && health == null) {
            throw new SQLException(
                    "a connection was asked for outside any db-bulkhead admission by " + caller
                            + ", and db-bulkhead.unadmitted-connections=refuse: put @DbWorkload on the method that "
                            + "starts the work (or on the repository), or run it in AdmittedTransactionTemplate",
                    "08004");
        }
        count.increment();
        if (logged.add(caller)) {
            LOG.warn(
                    "{} took a connection outside any db-bulkhead admission: this load is not bounded by the "
                            + "barrier (counted in db.bulkhead.connections.unadmitted; logged once per call site). Put "
                            + "@DbWorkload on the method that starts the work, or run it in "
                            + "AdmittedTransactionTemplate.",
                    caller);
        }
        return invocation.proceed();
    }

    /**
     * The first frame of the application's own code, as {@code class.method(File:line)}: in one of
     * {@code packages} (the application's), or, without them, outside the frameworks and libraries.
     */
    static String caller(List<String> packages) {
        String own = packages.isEmpty() ? null : caller(f -> applications(f, packages));
        return own != null ? own : caller(f -> applications(f, List.of()));
    }

    private static String caller(Predicate<StackFrame> application) {
        return STACK.walk(frames -> frames.filter(application)
                .findFirst()
                .map(f -> f.getClassName() + "." + f.getMethodName() + "(" + f.getFileName() + ":" + f.getLineNumber()
                        + ")")
                .orElse(null));
    }

    /** A frame of a health indicator (a class whose name ends in {@code HealthIndicator}). */
    private static boolean healthIndicator(StackFrame frame) {
        String name = frame.getClassName();
        return !name.contains("$$") && name.endsWith("HealthIndicator");
    }

    private static boolean applications(StackFrame frame, List<String> packages) {
        String name = frame.getClassName();
        if (name.contains("$$") || name.equals(UnadmittedConnections.class.getName())) {
            return false;
        }
        return packages.isEmpty()
                ? NOT_THE_CALLER.stream().noneMatch(name::startsWith)
                : packages.stream().anyMatch(name::startsWith);
    }
}
