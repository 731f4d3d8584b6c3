package dev.dbbulkhead.spring;

import java.lang.StackWalker.StackFrame;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.NameMatchMethodPointcutAdvisor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;

/**
 * Counts the connections the application takes from its {@link DataSource} outside any admission: an unannotated
 * controller or {@code @ModelAttribute} method, a scheduled job, a health check. The barrier bounds only what it
 * admits; this count says how much of the database load it does not see ({@code db.bulkhead.connections.unadmitted}).
 * Each call site (the first frame outside Spring, HikariCP, Hibernate, the JDK and the driver) is logged once.
 * With {@link Mode#REFUSE}, such a {@code getConnection} fails with an {@link SQLException} naming the caller,
 * before any connection is taken. Both start once the context has been refreshed: start-up work (Hibernate's, a
 * schema script's) is neither counted nor refused; an {@code ApplicationRunner} that uses the database runs after,
 * and is.
 *
 * <p>The {@code DataSource} bean is wrapped in a class-based proxy, so that it keeps its type ({@code
 * HikariDataSource} stays injectable as such); the barrier itself is built over the bean's target, so that its own
 * transactions are not counted. Connections taken under a lease from {@code DbBulkhead.acquire} or inside
 * {@code DbBulkhead.transaction} on the target are not seen here; inside an admission of {@link DbWorkload} or
 * {@link AdmittedTransactionTemplate} they are admitted. Thread-safe.
 */
public class UnadmittedConnections implements BeanPostProcessor, ApplicationListener<ContextRefreshedEvent> {
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
    private static final List<String> NOT_THE_CALLER = List.of("java.", "javax.", "jdk.", "sun.", "com.sun.",
            "jakarta.", "org.springframework.", "com.zaxxer.", "org.hibernate.", "org.postgresql.", "io.micrometer.",
            "org.apache.", "org.slf4j.");
    private static final StackWalker STACK = StackWalker.getInstance();

    private final Mode mode;
    private final ObjectProvider<DbBulkheadAdmission> admissions;
    private final LongAdder count = new LongAdder();
    private final Set<String> logged = ConcurrentHashMap.newKeySet();
    /** Set once the context has been refreshed (read then, so that no bean is created from getConnection). */
    private volatile DbBulkheadAdmission admission;

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
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (mode == Mode.OFF || !(bean instanceof DataSource) || AopUtils.isAopProxy(bean)) {
            return bean;
        }
        var getConnection = new NameMatchMethodPointcutAdvisor((MethodInterceptor) this::getConnection);
        getConnection.setMappedName("getConnection");
        var proxy = new ProxyFactory(bean);
        proxy.setProxyTargetClass(true);
        proxy.addAdvisor(getConnection);
        return proxy.getProxy(bean.getClass().getClassLoader());
    }

    @Override
    public void onApplicationEvent(ContextRefreshedEvent event) {
        if (admission == null) {
            admission = admissions.getIfAvailable();
        }
    }

    private Object getConnection(MethodInvocation invocation) throws Throwable {
        DbBulkheadAdmission started = admission;
        if (started == null || started.currentLease() != null) {
            return invocation.proceed(); // before start-up, or admitted
        }
        String caller = caller();
        if (mode == Mode.REFUSE) {
            throw new SQLException("a connection was asked for outside any db-bulkhead admission by " + caller
                    + ", and db-bulkhead.unadmitted-connections=refuse: put @DbWorkload on the method that starts "
                    + "the work (or on the repository), or run it in AdmittedTransactionTemplate", "08004");
        }
        count.increment();
        if (logged.add(caller)) {
            LOG.warn("{} took a connection outside any db-bulkhead admission: this load is not bounded by the "
                    + "barrier (counted in db.bulkhead.connections.unadmitted; logged once per call site). Put "
                    + "@DbWorkload on the method that starts the work, or run it in AdmittedTransactionTemplate.",
                    caller);
        }
        return invocation.proceed();
    }

    /** The first frame of the application's own code, as {@code class.method(File:line)}. */
    static String caller() {
        return STACK.walk(frames -> frames.filter(UnadmittedConnections::applications).findFirst()
                .map(f -> f.getClassName() + "." + f.getMethodName() + "(" + f.getFileName() + ":"
                        + f.getLineNumber() + ")")
                .orElse("(no application frame)"));
    }

    private static boolean applications(StackFrame frame) {
        String name = frame.getClassName();
        return !name.contains("$$") && !name.equals(UnadmittedConnections.class.getName())
                && NOT_THE_CALLER.stream().noneMatch(name::startsWith);
    }
}
