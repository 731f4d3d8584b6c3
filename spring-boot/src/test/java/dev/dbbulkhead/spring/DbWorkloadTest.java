package dev.dbbulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.IMetricsTracker;
import dev.dbbulkhead.AdmissionFullException;
import dev.dbbulkhead.BulkheadListener;
import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.Workload;
import java.util.ArrayList;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * {@link DbWorkload} with {@code @Transactional} on the real PostgreSQL: admission before the transaction in every
 * annotation order, release after commit, the rules for active transactions, nesting and REQUIRES_NEW, and no
 * permit or connection left behind.
 */
class DbWorkloadTest {
    private static final AtomicLong IDS = new AtomicLong(System.nanoTime());

    private final ApplicationContextRunner base = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurationTest.BOOT)
            .withUserConfiguration(Services.class);
    private final ApplicationContextRunner runner = base.withPropertyValues(Pg.datasource(4))
            .withPropertyValues(
                    "db-bulkhead.default-workload=interactive",
                    "db-bulkhead.workloads.interactive.concurrent=2",
                    "db-bulkhead.workloads.interactive.queue-wait=0ms",
                    "db-bulkhead.workloads.batch.concurrent=1");

    @Test
    void admissionComesBeforeTheTransactionAndTheReleaseAfterItsCommitInEveryAnnotationOrder() {
        runner.run(context -> {
            var probe = context.getBean(Probe.class);
            var calls = new ArrayList<java.util.function.LongUnaryOperator>();
            calls.add(context.getBean(Items.class)::admissionFirst);
            calls.add(context.getBean(Items.class)::transactionalFirst);
            calls.add(context.getBean(TypeAdmissionFirst.class)::insert);
            calls.add(context.getBean(TypeTransactionalFirst.class)::insert);
            for (var call : calls) {
                probe.reset();
                long id = IDS.incrementAndGet();
                assertThat(call.applyAsLong(id)).isEqualTo(id);
                assertThat(probe.transactionAtAdmission)
                        .as("a transaction was active at admission")
                        .containsOnly(false);
                assertThat(probe.executingInWork.get())
                        .as("permits held while the method ran")
                        .isEqualTo(1);
                assertThat(probe.executingAtCompletion.get())
                        .as("permits held when the transaction completed")
                        .isEqualTo(1);
                assertThat(Pg.rows(id)).as("committed").isEqualTo(1);
                assertAllBack(context);
            }
        });
    }

    /** With kinds learned, each method is a kind of its own, named after it unless the annotation names one. */
    @Test
    void eachMethodIsAKindOfOperationAndTheActuatorListsThem() {
        runner.withPropertyValues("db-bulkhead.workloads.interactive.kinds=true")
                .run(context -> {
                    var items = context.getBean(Items.class);
                    items.admissionFirst(IDS.incrementAndGet());
                    items.transactionalFirst(IDS.incrementAndGet());
                    items.named(IDS.incrementAndGet());
                    items.named(IDS.incrementAndGet());
                    Workload w = context.getBean(DbBulkhead.class).workload("interactive");
                    assertThat(w.config().kinds()).isTrue();
                    assertThat(w.kinds())
                            .extracting(dev.dbbulkhead.KindStats::name)
                            .containsExactlyInAnyOrder("Items.admissionFirst", "Items.transactionalFirst", "report");
                    var view = new dev.dbbulkhead.spring.actuate.DbBulkheadEndpoint(
                                    context.getBean(DbBulkheadAdmission.class))
                            .bulkhead();
                    assertThat(view.workloads().stream()
                                    .filter(x -> x.name().equals("interactive"))
                                    .findFirst()
                                    .orElseThrow()
                                    .kinds())
                            .hasSize(3)
                            .allSatisfy(k -> assertThat(k.inside()).isZero());
                    assertAllBack(context);
                });
    }

    @Test
    void aRejectedCallOpensNoConnection() {
        runner.run(context -> {
            var items = context.getBean(Items.class);
            var hold = new CountDownLatch(1);
            var inside = new CountDownLatch(2);
            try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
                var holders = new ArrayList<Future<Long>>();
                for (int i = 0; i < 2; i++) {
                    holders.add(threads.submit(() -> items.holding(IDS.incrementAndGet(), inside, hold)));
                }
                assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
                int acquiredBefore = Services.ACQUIRED.get();
                assertThatThrownBy(() -> items.admissionFirst(IDS.incrementAndGet()))
                        .isInstanceOf(AdmissionFullException.class);
                assertThat(Services.ACQUIRED.get())
                        .as("connections taken from HikariCP by the rejected call")
                        .isEqualTo(acquiredBefore);
                hold.countDown();
                for (var h : holders) {
                    h.get(10, TimeUnit.SECONDS);
                }
            }
            assertAllBack(context);
        });
    }

    @Test
    void calledInsideAnActiveTransactionItIsRefusedAtOnceAndNothingIsWritten() {
        runner.run(context -> {
            var template = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
            long id = IDS.incrementAndGet();
            assertThatThrownBy(() ->
                            template.execute(s -> context.getBean(Items.class).admissionFirst(id)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("inside an active transaction")
                    .hasMessageContaining("Items.admissionFirst");
            assertThat(Pg.rows(id)).isZero();
            assertAllBack(context);
        });
    }

    @Test
    void nestedCallsOfTheSameWorkloadJoinWithoutASecondPermitAndOfAnotherAreRefused() {
        runner.run(context -> {
            var outer = context.getBean(Outer.class);
            var probe = context.getBean(Probe.class);
            probe.reset();
            long id = IDS.incrementAndGet();
            assertThat(outer.sameWorkload(id)).isEqualTo(id);
            assertThat(probe.transactionAtAdmission).as("one admission only").hasSize(1);
            assertThat(probe.executingInWork.get()).isEqualTo(1);
            assertThat(Pg.rows(id)).isEqualTo(1);
            long other = IDS.incrementAndGet();
            assertThatThrownBy(() -> outer.otherWorkload(other))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("needs workload 'interactive'")
                    .hasMessageContaining("already admitted to workload 'batch'");
            assertThat(Pg.rows(other)).isZero();
            assertAllBack(context);
        });
    }

    @Test
    @Timeout(value = 20, unit = TimeUnit.SECONDS) // unguarded, both callers would wait 30 s for a second connection
    void requiresNewWhileAdmittedWithThePoolEqualToBIsRefusedInsteadOfHanging() {
        // Pool 3, one connection held outside the barrier: 2 left, as many as interactive's B (batch is declared
        // because
        // Outer has a method of it, which start-up checks).
        base.withPropertyValues(Pg.datasource(3))
                .withPropertyValues(
                        "spring.datasource.hikari.connection-timeout=30000",
                        "db-bulkhead.default-workload=interactive",
                        "db-bulkhead.workloads.interactive.concurrent=2",
                        "db-bulkhead.workloads.batch.concurrent=1")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    @SuppressWarnings("unused")
                    var outside = context.getBean(DataSource.class).getConnection();
                    var outer = context.getBean(Outer.class);
                    var bothInside = new CyclicBarrier(2);
                    try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
                        var calls = new ArrayList<Future<Long>>();
                        for (int i = 0; i < 2; i++) {
                            long id = IDS.incrementAndGet();
                            calls.add(threads.submit(() -> outer.withRequiresNew(id, bothInside)));
                        }
                        for (var call : calls) {
                            assertThatThrownBy(() -> call.get(15, TimeUnit.SECONDS))
                                    .cause()
                                    .isInstanceOf(IllegalStateException.class)
                                    .hasMessageContaining("REQUIRES_NEW")
                                    .hasMessageContaining("db-bulkhead.workloads.interactive.allow-requires-new");
                        }
                    }
                    outside.close();
                    assertAllBack(context);
                });
    }

    @Test
    void requiresNewWorksWhereTheWorkloadOptsIn() {
        runner.withPropertyValues("db-bulkhead.workloads.interactive.allow-requires-new=true")
                .run(context -> {
                    long id = IDS.incrementAndGet();
                    assertThat(context.getBean(Outer.class).withRequiresNew(id, null))
                            .isEqualTo(id);
                    assertThat(Pg.rows(id)).isEqualTo(1);
                    assertThat(Pg.rows(-id))
                            .as("the REQUIRES_NEW transaction's row")
                            .isEqualTo(1);
                    assertAllBack(context);
                });
    }

    @Test
    void manyVirtualThreadsNeverHaveMoreThanBInsideAndEveryCallCommits() {
        runner.withPropertyValues(
                        "db-bulkhead.workloads.interactive.extra-slots=400",
                        "db-bulkhead.workloads.interactive.queue-wait=20s")
                .run(context -> {
                    var items = context.getBean(Items.class);
                    var probe = context.getBean(Probe.class);
                    probe.reset();
                    var ids = new ConcurrentLinkedQueue<Long>();
                    try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
                        var start = new CountDownLatch(1);
                        for (int i = 0; i < 300; i++) {
                            threads.submit(() -> {
                                start.await();
                                long id = IDS.incrementAndGet();
                                ids.add(items.admissionFirst(id));
                                return null;
                            });
                        }
                        start.countDown();
                    }
                    assertThat(ids).hasSize(300);
                    assertThat(probe.maxInside.get())
                            .as("most calls inside at once")
                            .isBetween(1, 2);
                    for (long id : ids) {
                        assertThat(Pg.rows(id)).isEqualTo(1);
                    }
                    assertAllBack(context);
                });
    }

    static void assertAllBack(ApplicationContext context) {
        for (Workload w : context.getBean(DbBulkhead.class).workloads()) {
            assertThat(w.available()).as("free permits of %s", w).isEqualTo(w.concurrent());
            assertThat(w.availableSlots()).as("free slots of %s", w).isEqualTo(w.concurrent() + w.extraSlots());
        }
        var pool = context.getBean(HikariDataSource.class);
        org.awaitility.Awaitility.await()
                .atMost(java.time.Duration.ofSeconds(5))
                .until(() -> pool.getHikariPoolMXBean() == null
                        || pool.getHikariPoolMXBean().getActiveConnections() == 0);
    }

    /** What the admitted code saw: whether a transaction was active at admission, and the permits held. */
    static final class Probe implements BulkheadListener {
        final ConcurrentLinkedQueue<Boolean> transactionAtAdmission = new ConcurrentLinkedQueue<>();
        final AtomicInteger executingInWork = new AtomicInteger();
        final AtomicInteger executingAtCompletion = new AtomicInteger();
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger maxInside = new AtomicInteger();

        void reset() {
            transactionAtAdmission.clear();
            executingInWork.set(-1);
            executingAtCompletion.set(-1);
            maxInside.set(0);
        }

        @Override
        public void onPermitAcquired(Workload workload, long waitNanos) {
            transactionAtAdmission.add(TransactionSynchronizationManager.isActualTransactionActive());
        }
    }

    /** Inserts a row inside the transaction, noting what the probe needs. */
    static long insert(JdbcClient jdbc, DbBulkhead db, Probe probe, long id) {
        assertThat(TransactionSynchronizationManager.isActualTransactionActive())
                .as("transaction in work")
                .isTrue();
        Workload w = db.workload("interactive");
        int now = probe.inside.incrementAndGet();
        probe.maxInside.accumulateAndGet(now, Math::max);
        try {
            probe.executingInWork.set(w.executing());
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    probe.executingAtCompletion.set(w.executing());
                }
            });
            jdbc.sql("INSERT INTO spring_items (id, note) VALUES (?, 'spring')")
                    .param(id)
                    .update();
            return id;
        } finally {
            probe.inside.decrementAndGet();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Services {
        static final AtomicInteger ACQUIRED = new AtomicInteger();

        @Bean
        Probe probe() {
            return new Probe();
        }

        @Bean
        JdbcClient jdbcClient(DataSource dataSource) {
            return JdbcClient.create(dataSource);
        }

        @Bean
        Items items(JdbcClient jdbc, DbBulkhead db, Probe probe) {
            return new Items(jdbc, db, probe);
        }

        @Bean
        TypeAdmissionFirst typeAdmissionFirst(JdbcClient jdbc, DbBulkhead db, Probe probe) {
            return new TypeAdmissionFirst(jdbc, db, probe);
        }

        @Bean
        TypeTransactionalFirst typeTransactionalFirst(JdbcClient jdbc, DbBulkhead db, Probe probe) {
            return new TypeTransactionalFirst(jdbc, db, probe);
        }

        @Bean
        Inner inner(JdbcClient jdbc) {
            return new Inner(jdbc);
        }

        @Bean
        Outer outer(Items items, Inner inner, JdbcClient jdbc) {
            return new Outer(items, inner, jdbc);
        }

        /** Counts HikariCP's connection hand-outs (a test-only tracker; the starter leaves Hikari's slot alone). */
        @Bean
        static BeanPostProcessor countAcquisitions() {
            return new BeanPostProcessor() {
                @Override
                public Object postProcessBeforeInitialization(Object bean, String name) {
                    if (bean instanceof HikariDataSource hikari) {
                        hikari.setMetricsTrackerFactory((pool, stats) -> new IMetricsTracker() {
                            @Override
                            public void recordConnectionAcquiredNanos(long nanos) {
                                ACQUIRED.incrementAndGet();
                            }
                        });
                    }
                    return bean;
                }
            };
        }
    }

    static class Items {
        private final JdbcClient jdbc;
        private final DbBulkhead db;
        private final Probe probe;

        Items(JdbcClient jdbc, DbBulkhead db, Probe probe) {
            this.jdbc = jdbc;
            this.db = db;
            this.probe = probe;
        }

        @DbWorkload("interactive")
        @Transactional
        public long admissionFirst(long id) {
            return insert(jdbc, db, probe, id);
        }

        @Transactional
        @DbWorkload("interactive")
        public long transactionalFirst(long id) {
            return insert(jdbc, db, probe, id);
        }

        @DbWorkload(value = "interactive", kind = "report")
        @Transactional
        public long named(long id) {
            return insert(jdbc, db, probe, id);
        }

        @DbWorkload
        @Transactional
        public long holding(long id, CountDownLatch inside, CountDownLatch hold) throws InterruptedException {
            insert(jdbc, db, probe, id);
            inside.countDown();
            hold.await();
            return id;
        }
    }

    /**
     * The body both annotation orders share; the subclasses differ only in the order of their annotations, and
     * declare {@code insert} themselves: Spring applies a type's {@code @Transactional} to the methods the type
     * declares, not to those it inherits.
     */
    abstract static class TypeInserts {
        private final JdbcClient jdbc;
        private final DbBulkhead db;
        private final Probe probe;

        TypeInserts(JdbcClient jdbc, DbBulkhead db, Probe probe) {
            this.jdbc = jdbc;
            this.db = db;
            this.probe = probe;
        }

        long inserted(long id) {
            return DbWorkloadTest.insert(jdbc, db, probe, id);
        }
    }

    @DbWorkload("interactive")
    @Transactional
    static class TypeAdmissionFirst extends TypeInserts {
        TypeAdmissionFirst(JdbcClient jdbc, DbBulkhead db, Probe probe) {
            super(jdbc, db, probe);
        }

        public long insert(long id) {
            return inserted(id);
        }
    }

    @Transactional
    @DbWorkload("interactive")
    static class TypeTransactionalFirst extends TypeInserts {
        TypeTransactionalFirst(JdbcClient jdbc, DbBulkhead db, Probe probe) {
            super(jdbc, db, probe);
        }

        public long insert(long id) {
            return inserted(id);
        }
    }

    static class Inner {
        private final JdbcClient jdbc;

        Inner(JdbcClient jdbc) {
            this.jdbc = jdbc;
        }

        @Transactional(propagation = Propagation.REQUIRES_NEW)
        public void audit(long id) {
            jdbc.sql("INSERT INTO spring_items (id, note) VALUES (?, 'audit')")
                    .param(-id)
                    .update();
        }
    }

    static class Outer {
        private final Items items;
        private final Inner inner;
        private final JdbcClient jdbc;

        Outer(Items items, Inner inner, JdbcClient jdbc) {
            this.items = items;
            this.inner = inner;
            this.jdbc = jdbc;
        }

        @DbWorkload("interactive")
        public long sameWorkload(long id) {
            return items.admissionFirst(id);
        }

        @DbWorkload("batch")
        public long otherWorkload(long id) {
            return items.admissionFirst(id);
        }

        @DbWorkload("interactive")
        @Transactional
        public long withRequiresNew(long id, CyclicBarrier bothInside) throws Exception {
            jdbc.sql("INSERT INTO spring_items (id, note) VALUES (?, 'outer')")
                    .param(id)
                    .update();
            if (bothInside != null) {
                bothInside.await(10, TimeUnit.SECONDS); // both callers hold their one connection
            }
            inner.audit(id);
            return id;
        }
    }
}
