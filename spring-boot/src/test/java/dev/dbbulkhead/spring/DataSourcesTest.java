package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.mchange.v2.c3p0.ComboPooledDataSource;
import com.p6spy.engine.spy.P6DataSource;
import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.testkit.TestDatabase;
import io.agroal.api.AgroalDataSource;
import io.agroal.api.configuration.supplier.AgroalPropertiesReader;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;
import javax.sql.DataSource;
import net.ttddyy.dsproxy.support.ProxyDataSourceBuilder;
import org.apache.commons.dbcp2.BasicDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.datasource.LazyConnectionDataSourceProxy;
import org.springframework.jdbc.datasource.lookup.AbstractRoutingDataSource;

/**
 * The starter starts with any DataSource a user may have, on PostgreSQL: pools from other libraries (c3p0's and
 * Agroal's are final classes), wrappers (datasource-proxy, p6spy, Spring's lazy and routing data sources), a JDK
 * dynamic proxy, a final class and a final {@code getConnection}; each starts with default settings, runs one
 * admitted transaction and, watched, counts a connection taken outside an admission. With two DataSources only the
 * one the barrier is built over (the {@code @Primary} one) is watched.
 */
class DataSourcesTest {
    static {
        // p6spy writes spy.log into the working directory unless told where to log.
        System.setProperty("p6spy.config.appender", "com.p6spy.engine.spy.appender.Slf4JLogger");
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurationTest.BOOT)
            .withPropertyValues(
                    "db-bulkhead.workloads.work.concurrent=2",
                    "db-bulkhead.workloads.work.extra-slots=4",
                    "db-bulkhead.workloads.work.queue-wait=5s");

    /** What each test opened (the pools under the wrappers), closed after it. */
    private static final List<AutoCloseable> OPENED = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeWhatWasOpened() throws Exception {
        for (AutoCloseable opened : OPENED) {
            opened.close();
        }
        OPENED.clear();
    }

    private static <T extends AutoCloseable> T opened(T closeable) {
        OPENED.add(closeable);
        return closeable;
    }

    static HikariDataSource hikari() {
        return opened(new HikariDataSource(TestDatabase.get().config(4, Duration.ofSeconds(5))));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "hikari",
                "c3p0",
                "agroal",
                "dbcp2",
                "datasource-proxy",
                "p6spy",
                "jdk-proxy",
                "final-class",
                "final-getConnection",
                "lazy",
                "routing"
            })
    void startsRunsAnAdmittedTransactionAndCountsAnUnadmittedConnection(String kind) {
        runner.withBean(DataSource.class, () -> dataSource(kind)).run(context -> {
            assertThat(context).hasNotFailed();
            DataSource bean = context.getBean(DataSource.class);
            assertThat(AopUtils.isAopProxy(bean)).as("%s is watched", kind).isTrue();
            Integer answer =
                    context.getBean(DbBulkhead.class).transaction(Duration.ofSeconds(10), c -> c.isValid(2) ? 42 : 0);
            assertThat(answer).isEqualTo(42);
            var unadmitted = context.getBean(UnadmittedConnections.class);
            assertThat(unadmitted.count())
                    .as("the barrier's own transaction is not counted")
                    .isZero();
            try (Connection c = bean.getConnection()) {
                assertThat(c.isValid(2)).isTrue();
            }
            assertThat(unadmitted.count())
                    .as("a connection taken outside an admission")
                    .isOne();
        });
    }

    @Test
    void aHikariPoolKeepsItsType() {
        runner.withBean(DataSource.class, DataSourcesTest::hikari)
                .run(context -> assertThat(context.getBean(DataSource.class)).isInstanceOf(HikariDataSource.class));
    }

    @Test
    void onlyThePrimaryOfTwoDataSourcesIsWatchedAndTheOtherIsUsableWhenRefusing() {
        runner.withUserConfiguration(TwoDataSources.class)
                .withPropertyValues("db-bulkhead.unadmitted-connections=refuse")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    DataSource primary = context.getBean("primary", DataSource.class);
                    DataSource reports = context.getBean("reports", DataSource.class);
                    assertThat(AopUtils.isAopProxy(primary)).isTrue();
                    assertThat(AopUtils.isAopProxy(reports))
                            .as("no barrier guards it")
                            .isFalse();
                    try (Connection c =
                            context.getBean(ReportsUser.class).reports().getConnection()) {
                        assertThat(c.isValid(2))
                                .as("the second database, outside any admission")
                                .isTrue();
                    }
                    assertThat(org.assertj.core.api.Assertions.catchThrowable(
                                    () -> primary.getConnection().close()))
                            .isInstanceOf(SQLException.class)
                            .hasMessageContaining("outside any db-bulkhead admission");
                    Boolean valid =
                            context.getBean(DbBulkhead.class).transaction(Duration.ofSeconds(10), c -> c.isValid(2));
                    assertThat(valid).isTrue();
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoDataSources {
        @Bean(destroyMethod = "")
        @Primary
        HikariDataSource primary() {
            return hikari();
        }

        @Bean(destroyMethod = "")
        @Qualifier("reports")
        HikariDataSource reports() {
            return hikari();
        }

        @Bean
        ReportsUser reportsUser(@Qualifier("reports") DataSource reports) {
            return new ReportsUser(reports);
        }
    }

    record ReportsUser(DataSource reports) {}

    private static DataSource dataSource(String kind) {
        return switch (kind) {
            case "hikari" -> hikari();
            case "c3p0" -> c3p0();
            case "agroal" -> agroal();
            case "dbcp2" -> dbcp2();
            case "datasource-proxy" ->
                ProxyDataSourceBuilder.create(hikari()).name("ds-proxy").build();
            case "p6spy" -> new P6DataSource(hikari());
            case "jdk-proxy" -> jdkProxy(hikari());
            case "final-class" -> new FinalDataSource(hikari());
            case "final-getConnection" -> new FinalGetConnection(hikari());
            case "lazy" -> new LazyConnectionDataSourceProxy(hikari());
            case "routing" -> routing(hikari());
            default -> throw new IllegalArgumentException(kind);
        };
    }

    private static DataSource c3p0() {
        var db = TestDatabase.get();
        var c3p0 = new ComboPooledDataSource();
        c3p0.setJdbcUrl(db.jdbcUrl());
        c3p0.setUser(db.user());
        c3p0.setPassword(db.password());
        c3p0.setMaxPoolSize(4);
        c3p0.setMinPoolSize(0);
        c3p0.setInitialPoolSize(0);
        return opened(c3p0);
    }

    private static DataSource agroal() {
        var db = TestDatabase.get();
        try {
            return opened(AgroalDataSource.from(new AgroalPropertiesReader()
                    .readProperties(Map.of(
                            AgroalPropertiesReader.JDBC_URL,
                            db.jdbcUrl(),
                            AgroalPropertiesReader.PRINCIPAL,
                            db.user(),
                            AgroalPropertiesReader.CREDENTIAL,
                            db.password(),
                            AgroalPropertiesReader.MAX_SIZE,
                            "4",
                            AgroalPropertiesReader.MIN_SIZE,
                            "0",
                            AgroalPropertiesReader.INITIAL_SIZE,
                            "0"))
                    .get()));
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static DataSource dbcp2() {
        var db = TestDatabase.get();
        var dbcp = new BasicDataSource();
        dbcp.setUrl(db.jdbcUrl());
        dbcp.setUsername(db.user());
        dbcp.setPassword(db.password());
        dbcp.setMaxTotal(4);
        return opened(dbcp);
    }

    private static DataSource jdkProxy(DataSource target) {
        return (DataSource) Proxy.newProxyInstance(
                DataSourcesTest.class.getClassLoader(), new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    try {
                        return method.invoke(target, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    private static DataSource routing(DataSource target) {
        var routing = new AbstractRoutingDataSource() {
            @Override
            protected Object determineCurrentLookupKey() {
                return "only";
            }
        };
        routing.setTargetDataSources(Map.of("only", target));
        routing.afterPropertiesSet();
        return routing;
    }

    /** A DataSource that cannot be subclassed, as c3p0's, Agroal's and any Kotlin class not marked open. */
    static final class FinalDataSource extends Delegating {
        FinalDataSource(DataSource target) {
            super(target);
        }
    }

    /** A DataSource whose getConnection cannot be overridden. */
    static class FinalGetConnection extends Delegating {
        FinalGetConnection(DataSource target) {
            super(target);
        }

        @Override
        public final Connection getConnection() throws SQLException {
            return super.getConnection();
        }
    }

    abstract static class Delegating implements DataSource, AutoCloseable {
        private final DataSource target;

        Delegating(DataSource target) {
            this.target = target;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return target.getConnection();
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return target.getConnection(user, password);
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return target.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            target.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            target.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return target.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getLogger("delegating");
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            return iface.isInstance(this) ? iface.cast(this) : target.unwrap(iface);
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) throws SQLException {
            return iface.isInstance(this) || target.isWrapperFor(iface);
        }

        @Override
        public void close() throws Exception {
            if (target instanceof AutoCloseable closeable) {
                closeable.close();
            }
        }
    }
}
