package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.dbbulkhead.testkit.FaultyDataSource;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Article point 1 and 6: every bad argument gets its own clear exception and acquires nothing. */
class ArgumentsContractTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(2);

    private static HikariDataSource pool() {
        return POOL.get();
    }

    @Test
    void nullSourceIsANullPointerExceptionNamingTheSource() {
        assertThatThrownBy(() -> new DbBulkhead(null, 1, 0))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("source");
    }

    /** Kinds' names are kept (up to 32 a workload): one of ten million characters is refused, naming its length. */
    @Test
    void aKindNameLongerThan200CharactersIsRejectedWithItsLength() {
        String huge = "k".repeat(10_000_000);
        assertThatThrownBy(() -> TransactionOptions.queueWait(Duration.ZERO).kind(huge))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("kind must be at most 200 characters, was 10000000 characters ('kkk");
        assertThat(TransactionOptions.queueWait(Duration.ZERO)
                        .kind("k".repeat(200))
                        .kind())
                .hasSize(200);
    }

    @Test
    void concurrentBelowOneIsRejectedWithTheValue() {
        assertThatThrownBy(() -> new DbBulkhead(pool(), 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("concurrent must be >= 1, was 0");
        assertThatThrownBy(() -> new DbBulkhead(pool(), -5, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("concurrent must be >= 1, was -5");
    }

    @Test
    void negativeExtraSlotsIsRejectedWithTheValue() {
        assertThatThrownBy(() -> new DbBulkhead(pool(), 1, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("extraSlots must be >= 0, was -1");
    }

    @Test
    void admissionOverflowingAnIntIsRejectedWithBothValues() {
        assertThatThrownBy(() -> new DbBulkhead(pool(), Integer.MAX_VALUE, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must fit in an int")
                .hasMessageContaining(Integer.MAX_VALUE + " + 1");
    }

    @Test
    void theSmallestAndLargestValidCapacitiesAreAccepted() {
        assertThatNoException().isThrownBy(() -> new DbBulkhead(pool(), 1, 0));
        var huge = POOL.bulkhead(pool(), Integer.MAX_VALUE - 1, 1);
        assertThat(huge.availableSlots()).isEqualTo(Integer.MAX_VALUE);
        assertThat(huge.available()).isEqualTo(Integer.MAX_VALUE - 1);
    }

    @Test
    void nullWorkIsANullPointerExceptionAndAcquiresNothing() throws Exception {
        var probe = new FaultyDataSource(pool());
        var gate = POOL.bulkhead(probe, 1, 1);
        assertThatThrownBy(() -> gate.transaction(Duration.ZERO, null))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("work");
        assertUntouched(gate, probe);
    }

    @Test
    void nullQueueWaitIsANullPointerExceptionAndAcquiresNothing() throws Exception {
        var probe = new FaultyDataSource(pool());
        var gate = POOL.bulkhead(probe, 1, 1);
        var ran = new AtomicBoolean();
        assertThatThrownBy(() -> gate.transaction((Duration) null, c -> ran.getAndSet(true)))
                .isInstanceOf(NullPointerException.class)
                .hasMessageContaining("queueWait");
        assertThat(ran).isFalse();
        assertUntouched(gate, probe);
    }

    @Test
    void negativeQueueWaitIsAnIllegalArgumentAndAcquiresNothing() throws Exception {
        var probe = new FaultyDataSource(pool());
        var gate = POOL.bulkhead(probe, 1, 1);
        var ran = new AtomicBoolean();
        assertThatThrownBy(() -> gate.transaction(Duration.ofMillis(-1), c -> ran.getAndSet(true)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("queueWait must not be negative, was PT-0.001S");
        assertThat(ran).isFalse();
        assertUntouched(gate, probe);
    }

    @Test
    void aHugeQueueWaitIsAcceptedAndSaturates() throws Exception {
        var gate = POOL.bulkhead(pool(), 1, 0);
        int value = gate.transaction(Duration.ofSeconds(Long.MAX_VALUE), c -> 7);
        assertThat(value).isEqualTo(7);
        Db.assertAllReleased(gate.defaultWorkload(), pool());
    }

    private static void assertUntouched(DbBulkhead gate, FaultyDataSource probe) throws Exception {
        assertThat(gate.available()).isEqualTo(1);
        assertThat(gate.availableSlots()).isEqualTo(2);
        assertThat(probe.openConnections()).isZero();
        // The barrier still works afterwards: nothing was half-taken.
        int value = gate.transaction(Duration.ZERO, c -> 1);
        assertThat(value).isEqualTo(1);
        assertThat(probe.openConnections()).isZero();
    }

    @Test
    void aRefusedBuilderSettingNamesItsWorkloadSettingAndValueInItsParts() {
        var e = org.assertj.core.api.Assertions.catchThrowableOfType(
                InvalidSettingException.class,
                () -> DbBulkhead.builder(new dev.dbbulkhead.testkit.NoopDataSource())
                        .workload("batch", 0, 1));
        assertThat(e.workload()).contains("batch");
        assertThat(e.setting()).isEqualTo(Setting.CONCURRENT);
        assertThat(e.rule()).isEqualTo("must be >= 1");
        assertThat(e.value()).isEqualTo(0);
        assertThat(e)
                .hasMessage("workload 'batch': concurrent must be >= 1, was 0")
                .isInstanceOf(IllegalArgumentException.class);
        var pool = org.assertj.core.api.Assertions.catchThrowableOfType(
                InvalidSettingException.class,
                () -> DbBulkhead.builder(new dev.dbbulkhead.testkit.NoopDataSource())
                        .poolSize(4)
                        .workload("a", 3, 0)
                        .workload("b", 2, 0)
                        .build());
        assertThat(pool.setting()).isEqualTo(Setting.POOL_SIZE);
        assertThat(pool.workload()).isEmpty();
        assertThat(pool.value()).isEqualTo(4);
    }

    @Test
    void aLatencyObjectiveMustBePositiveAndARegularWorkloads() {
        var zero = org.assertj.core.api.Assertions.catchThrowableOfType(
                InvalidSettingException.class,
                () -> WorkloadConfig.builder("interactive")
                        .concurrent(4)
                        .latencyObjective(Duration.ZERO)
                        .build());
        assertThat(zero.setting()).isEqualTo(Setting.LATENCY_OBJECTIVE);
        assertThat(zero).hasMessage("workload 'interactive': latencyObjective must be > 0, was PT0S");
        var elastic = org.assertj.core.api.Assertions.catchThrowableOfType(
                InvalidSettingException.class,
                () -> WorkloadConfig.builder("batch")
                        .concurrent(4)
                        .priority(Priority.ELASTIC)
                        .latencyObjective(Duration.ofMillis(20))
                        .build());
        assertThat(elastic.setting()).isEqualTo(Setting.LATENCY_OBJECTIVE);
        assertThat(elastic)
                .hasMessage("workload 'batch': latencyObjective is a regular workload's: an elastic workload yields to "
                        + "the regular workloads' objectives, was PT0.02S");
        assertThat(
                        WorkloadConfig.builder("interactive")
                                .concurrent(4)
                                .latencyObjective(Duration.ofMillis(20))
                                .build()
                                .toBuilder()
                                .build()
                                .latencyObjective())
                .contains(Duration.ofMillis(20));
    }
}
