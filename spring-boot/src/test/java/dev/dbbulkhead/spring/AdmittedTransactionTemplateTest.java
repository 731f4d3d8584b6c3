package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.DbBulkhead;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/** {@link AdmittedTransactionTemplate} on the real PostgreSQL: admission, then Spring's transaction, then release. */
class AdmittedTransactionTemplateTest {
    private static final AtomicLong IDS = new AtomicLong(System.nanoTime() + 1_000_000_000L);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurationTest.BOOT)
            .withPropertyValues(Pg.datasource(3))
            .withPropertyValues(
                    "db-bulkhead.default-workload=interactive", "db-bulkhead.workloads.interactive.concurrent=1",
                    "db-bulkhead.workloads.interactive.queue-wait=0ms", "db-bulkhead.workloads.reports.concurrent=1",
                    "db-bulkhead.workloads.reports.deadline=1s", "db-bulkhead.workloads.reports.queue-wait=5s");

    @Test
    void jdbcClientInsideTakesPartInTheAdmittedTransactionWhichCommitsOrRollsBack() {
        runner.run(context -> {
            var admitted = context.getBean(AdmittedTransactionTemplate.class);
            var jdbc = JdbcClient.create(context.getBean(javax.sql.DataSource.class));
            var db = context.getBean(DbBulkhead.class);
            long committed = IDS.incrementAndGet();
            long returned = admitted.execute(status -> {
                assertThat(TransactionSynchronizationManager.isActualTransactionActive())
                        .isTrue();
                assertThat(db.workload("interactive").executing()).isEqualTo(1);
                jdbc.sql("INSERT INTO spring_items (id, note) VALUES (?, 'template')")
                        .param(committed)
                        .update();
                return committed;
            });
            assertThat(returned).isEqualTo(committed);
            assertThat(Pg.rows(committed)).isEqualTo(1);
            long rolledBack = IDS.incrementAndGet();
            admitted.execute("interactive", status -> {
                jdbc.sql("INSERT INTO spring_items (id, note) VALUES (?, 'template')")
                        .param(rolledBack)
                        .update();
                status.setRollbackOnly();
                return null;
            });
            assertThat(Pg.rows(rolledBack)).isZero();
            DbWorkloadTest.assertAllBack(context);
        });
    }

    @Test
    void aSaturatedWorkloadRejectsBeforeAnyTransactionBegins() {
        runner.run(context -> {
            var admitted = context.getBean(AdmittedTransactionTemplate.class);
            var hold = new CountDownLatch(1);
            var inside = new CountDownLatch(1);
            try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
                var holder = threads.submit(() -> admitted.execute(status -> {
                    inside.countDown();
                    try {
                        return hold.await(10, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                }));
                assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
                assertThatThrownBy(() -> admitted.execute(status -> {
                            throw new AssertionError("must not run");
                        }))
                        .isInstanceOf(AdmissionFullException.class)
                        .hasMessageContaining("workload 'interactive'");
                hold.countDown();
                assertThat(holder.get(10, TimeUnit.SECONDS)).isTrue();
            }
            DbWorkloadTest.assertAllBack(context);
        });
    }

    @Test
    void insideAnActiveTransactionItIsRefused() {
        runner.run(context -> {
            var outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            var admitted = context.getBean(AdmittedTransactionTemplate.class);
            assertThatThrownBy(() -> outer.execute(s -> admitted.execute(t -> 1)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(
                            "AdmittedTransactionTemplate.execute was called inside an active transaction");
            DbWorkloadTest.assertAllBack(context);
        });
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.SECONDS)
    void theWorkloadsDeadlineBecomesTheTransactionTimeoutOfItsStatements() {
        runner.run(context -> {
            var admitted = context.getBean(AdmittedTransactionTemplate.class);
            var jdbc = JdbcClient.create(context.getBean(javax.sql.DataSource.class));
            assertThatThrownBy(() -> admitted.execute(
                            "reports",
                            status -> jdbc.sql("SELECT pg_sleep(10)").query().singleValue()))
                    .isInstanceOf(QueryTimeoutException.class);
            DbWorkloadTest.assertAllBack(context);
        });
    }
}
