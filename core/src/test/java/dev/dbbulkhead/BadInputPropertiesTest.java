package dev.dbbulkhead;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dbbulkhead.testkit.FaultyDataSource;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Property-based: over generated arguments (edge values first, then seeded random ones), every invalid combination
 * is refused with an exception naming the field and the value, and a refused call acquires nothing (no permit,
 * no connection, work never runs). A failure names the seed and the case; rerun with {@code -Dproperties.seed=N}.
 */
class BadInputPropertiesTest {
    @RegisterExtension
    static final BarrierExtension POOL = new BarrierExtension(2);

    private static final long SEED = Long.getLong("properties.seed", System.nanoTime());
    private static final int[] INT_EDGES = {
        Integer.MIN_VALUE, Integer.MIN_VALUE + 1, -2, -1, 0, 1, 2, Integer.MAX_VALUE - 1, Integer.MAX_VALUE
    };

    /** The edge values, then {@code n} seeded random ints in [min, max]. */
    private static IntStream ints(Random random, int n, int min, int max) {
        return IntStream.concat(
                IntStream.of(INT_EDGES).filter(v -> v >= min && v <= max),
                random.ints(n, min, max == Integer.MAX_VALUE ? max : max + 1));
    }

    private static String where(Object... values) {
        return "seed " + SEED + ", case " + java.util.Arrays.toString(values);
    }

    @Test
    void capacitiesAreAcceptedExactlyWhenValid() {
        var random = new Random(SEED);
        int[] a = ints(random, 300, Integer.MIN_VALUE, Integer.MAX_VALUE).toArray();
        int[] b = ints(random, 300, Integer.MIN_VALUE, Integer.MAX_VALUE).toArray();
        for (int concurrent : a) {
            for (int k = 0; k < 3; k++) {
                int extraSlots = b[random.nextInt(b.length)];
                String at = where(concurrent, extraSlots);
                boolean valid =
                        concurrent >= 1 && extraSlots >= 0 && (long) concurrent + extraSlots <= Integer.MAX_VALUE;
                if (valid) {
                    var gate = POOL.bulkhead(POOL.get(), concurrent, extraSlots);
                    assertThat(gate.available()).as(at).isEqualTo(concurrent);
                    assertThat(gate.availableSlots()).as(at).isEqualTo(concurrent + extraSlots);
                } else if (concurrent < 1) {
                    assertThatThrownBy(() -> new DbBulkhead(POOL.get(), concurrent, extraSlots))
                            .as(at)
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("concurrent must be >= 1, was " + concurrent);
                } else if (extraSlots < 0) {
                    assertThatThrownBy(() -> new DbBulkhead(POOL.get(), concurrent, extraSlots))
                            .as(at)
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("extraSlots must be >= 0, was " + extraSlots);
                } else {
                    assertThatThrownBy(() -> new DbBulkhead(POOL.get(), concurrent, extraSlots))
                            .as(at)
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessageContaining("must fit in an int")
                            .hasMessageContaining(concurrent + " + " + extraSlots);
                }
            }
        }
    }

    @Test
    void workloadBudgetsAreCheckedAgainstThePoolSize() {
        var random = new Random(SEED + 1);
        for (int i = 0; i < 400; i++) {
            int interactive = random.nextInt(15) - 2;
            int batch = random.nextInt(15) - 2;
            int extra = random.nextInt(8) - 1;
            int poolSize = 1 + random.nextInt(16);
            String at = where(interactive, batch, extra, poolSize);
            var probe = new FaultyDataSource(POOL.get());
            var builder = DbBulkhead.builder(probe).poolSize(poolSize);
            if (interactive < 1 || extra < 0) {
                assertThatThrownBy(() -> builder.workload("interactive", interactive, extra))
                        .as(at)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageStartingWith("workload 'interactive': ");
                continue;
            }
            builder.workload("interactive", interactive, extra);
            if (batch < 1) {
                assertThatThrownBy(() -> builder.workload("batch", batch, 0))
                        .as(at)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("workload 'batch': concurrent must be >= 1, was " + batch);
                continue;
            }
            builder.workload("batch", batch, 0);
            if (interactive + batch > poolSize) {
                assertThatThrownBy(builder::build)
                        .as(at)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("add up to, " + (interactive + batch))
                        .hasMessageEndingWith("was " + poolSize);
            } else {
                assertThat(builder.build().workload("batch").available()).as(at).isEqualTo(batch);
            }
            assertThat(probe.openConnections()).as(at).isZero();
        }
    }

    @Test
    void aNegativeQueueWaitIsRefusedAndAcquiresNothing() {
        var random = new Random(SEED + 2);
        LongStream.concat(LongStream.of(Long.MIN_VALUE, -1_000_000_000L, -1), random.longs(200, Long.MIN_VALUE, 0))
                .forEach(nanos -> {
                    int concurrent = 1 + random.nextInt(4);
                    String at = where(nanos, concurrent);
                    var probe = new FaultyDataSource(POOL.get());
                    var gate = POOL.bulkhead(probe, concurrent, 1);
                    var ran = new AtomicBoolean();
                    Duration wait = Duration.ofNanos(nanos);
                    assertThatThrownBy(() -> gate.transaction(wait, c -> ran.getAndSet(true)))
                            .as(at)
                            .isInstanceOf(IllegalArgumentException.class)
                            .hasMessage("queueWait must not be negative, was " + wait);
                    assertThat(ran).as(at).isFalse();
                    assertThat(probe.openConnections()).as(at).isZero();
                    assertThat(gate.available()).as(at).isEqualTo(concurrent);
                    assertThat(gate.availableSlots()).as(at).isEqualTo(concurrent + 1);
                });
    }

    @Test
    void anExpiredDeadlineIsRefusedBeforeAnyPermit() {
        var random = new Random(SEED + 3);
        long now = 5_000_000_000L;
        LongStream.concat(LongStream.of(0, 1, 999, 1_000), random.longs(200, 0, 10_000_000_000L))
                .forEach(overdue -> {
                    String at = where(overdue);
                    var probe = new FaultyDataSource(POOL.get());
                    var gate = POOL.track(DbBulkhead.builder(probe)
                            .nanoClock(() -> now)
                            .workload("w", 2, 2)
                            .build());
                    var ran = new AtomicBoolean();
                    assertThatThrownBy(() ->
                                    gate.transaction(Deadline.atNanoTime(now - overdue), c -> ran.getAndSet(true)))
                            .as(at)
                            .isInstanceOf(DeadlineExceededException.class)
                            .hasMessageContaining("deadline exceeded before admission")
                            .satisfies(e -> assertThat(((DeadlineExceededException) e).overdueNanos())
                                    .isEqualTo(overdue));
                    assertThat(ran).as(at).isFalse();
                    assertThat(probe.openConnections()).as(at).isZero();
                    assertThat(gate.available()).as(at).isEqualTo(2);
                    assertThat(gate.availableSlots()).as(at).isEqualTo(4);
                });
    }

    @Test
    void blankOrNullNamesAreRefused() {
        var random = new Random(SEED + 4);
        char[] blanks = {' ', '\t', '\n', '\u2003'};
        for (int i = 0; i < 100; i++) {
            String name;
            if (i == 0) {
                name = null;
            } else {
                var sb = new StringBuilder();
                for (int k = random.nextInt(6); k > 0; k--) {
                    sb.append(blanks[random.nextInt(blanks.length)]);
                }
                name = sb.toString();
            }
            String at = where(name == null ? "null" : "'" + name + "'");
            assertThatThrownBy(() -> DbBulkhead.builder(POOL.get()).workload(name, 1, 0))
                    .as(at)
                    .hasMessageMatching("(?s)(workloadName must not be blank|workload name must not be null).*");
            assertThatThrownBy(() -> DbBulkhead.builder(POOL.get()).name(name))
                    .as(at)
                    .hasMessageContaining("name must not be");
        }
    }
}
