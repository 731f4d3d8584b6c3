package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DbBulkhead;
import dev.dbbulkhead.testkit.NoopDataSource;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Two barriers over one pool whose B add up past it are told when the second is built; one per pool is not. */
class PoolSharesTest {
    @Test
    void theBarrierThatCrossesThePoolSizeIsToldWithEveryBarriersShare() {
        var pool = new NoopDataSource();
        Object first = new Object();
        Object second = new Object();
        assertThat(PoolShares.claim(pool, first, "orders", 16, 20)).isNull();
        assertThat(PoolShares.claim(pool, second, "catalog", 16, 20))
                .isEqualTo("2 barriers over one pool of 20 "
                        + "connections admit 32 operations at once ('catalog' 16, 'orders' 16): the 12 beyond the pool wait "
                        + "inside it, where no barrier sees them. Share one barrier per pool (with a workload for each "
                        + "budget), or lower concurrent so that they add up to at most 20");
        assertThat(PoolShares.claim(new NoopDataSource(), second, "catalog", 16, 20))
                .as("another pool")
                .isNull();
    }

    @Test
    void barriersThatFitTogetherOrAnUnknownPoolSizeAreNotTold() {
        var pool = new NoopDataSource();
        assertThat(PoolShares.claim(pool, new Object(), "a", 8, 20)).isNull();
        assertThat(PoolShares.claim(pool, new Object(), "b", 12, 20)).isNull();
        var unknown = new NoopDataSource();
        assertThat(PoolShares.claim(unknown, new Object(), "a", 80, -1)).isNull();
        assertThat(PoolShares.claim(unknown, new Object(), "b", 80, -1)).isNull();
    }

    @Test
    void aPoolIsComparedByIdentityNeverByItsOwnEqualsOrHashCode() {
        var pool = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                getClass().getClassLoader(), new Class<?>[] {javax.sql.DataSource.class}, (proxy, method, args) -> {
                    throw new AssertionError(method.getName() + " called");
                });
        assertThat(PoolShares.claim(pool, new Object(), "a", 10, 12)).isNull();
        assertThat(PoolShares.claim(pool, new Object(), "b", 10, 12)).contains("admit 20 operations at once");
    }

    @Test
    void aBarrierThatAloneExceedsThePoolIsLeftToItsOwnCheck() {
        var pool = new NoopDataSource();
        assertThat(PoolShares.claim(pool, new Object(), "a", 4, 8)).isNull();
        assertThat(PoolShares.claim(pool, new Object(), "b", 16, 8)).isNull();
    }

    @Test
    void everyBarrierBuiltClaimsItsShareOfItsPool() {
        var pool = new NoopDataSource();
        var orders = DbBulkhead.builder(pool)
                .name("orders")
                .poolSize(20)
                .workload("w", 16, 0)
                .build();
        var catalog = DbBulkhead.builder(pool)
                .name("catalog")
                .poolSize(20)
                .workload("a", 2, 0)
                .workload("b", 1, 0)
                .build();
        assertThat(PoolShares.claim(pool, new Object(), "probe", 2, 20))
                .as("what the two barriers claimed")
                .contains("admit 21 operations at once ('catalog' 3, 'orders' 16, 'probe' 2)");
        assertThat(List.of(orders, catalog)).hasSize(2); // both still reachable while claimed
    }
}
