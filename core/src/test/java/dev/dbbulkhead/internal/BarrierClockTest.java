package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.Priority;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.WorkloadConfig;
import java.lang.System.Logger;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The barrier's one clock runs every workload's periodic work in its documented order, and a control that throws
 * inside its tick stops neither the other workloads' limits nor the next ticks; each kind of failure is logged once.
 */
@Tag("no-db")
class BarrierClockTest {
    private static final long MS = 1_000_000;

    /** Throws in every tick and every apply: a bug in one workload's control. */
    private static final class Broken implements Controls {
        final AtomicInteger ticks = new AtomicInteger();

        @Override
        public boolean ticks() {
            return true;
        }

        @Override
        public void tick(long now) {
            ticks.incrementAndGet();
            throw new IllegalStateException("tick " + now);
        }

        @Override
        public void apply() {
            throw new ArithmeticException("apply");
        }

        @Override
        public String toString() {
            return "the controls of workload 'broken'";
        }
    }

    @Test
    void aControlThatThrowsInItsTickStopsNoOtherLimitAndIsLoggedOncePerKind() throws InterruptedException {
        var now = new AtomicLong();
        var log = new Recording();
        var telemetry = new Telemetry(List.of(), now::get, log);
        var regularPermits = new Permits(6, 20);
        var elasticPermits = new Permits(6, 20);
        var regular = ConfiguredControls.of(
                workload("regular"), config("regular", Priority.REGULAR), regularPermits, telemetry, true);
        var elastic = ConfiguredControls.of(
                workload("elastic"), config("elastic", Priority.ELASTIC), elasticPermits, telemetry, true);
        var broken = new Broken();
        var members = List.of(Objects.requireNonNull(regular.member()), Objects.requireNonNull(elastic.member()));
        var clock =
                new BarrierClock("db", List.of(broken, regular, elastic), new Arbiter(8, members, 0), now::get, log);
        for (Controls c : List.of(regular, elastic)) {
            c.apply(); // what BarrierClock.start does before the first tick
        }
        assertThat(elasticPermits.limit())
                .as("elastic work starts at its floor")
                .isEqualTo(1);

        var held = new ArrayList<Permits.Node>();
        int ticks = 20 * (int) (Arbiter.WINDOW_MILLIS / BarrierClock.TICK_MILLIS);
        for (int i = 0; i < ticks; i++) {
            while (true) { // elastic work uses every permit it gets: its allowance grows while there is room
                var node = new Permits.Node(Thread.currentThread());
                if (elasticPermits.enter(node, false) != Permits.Entry.ACQUIRED) {
                    break;
                }
                held.add(node);
            }
            now.addAndGet(BarrierClock.TICK_MILLIS * MS);
            clock.run();
        }

        assertThat(broken.ticks).as("the broken control ran at every tick").hasValue(ticks);
        assertThat(elasticPermits.limit())
                .as("elastic grew, window by window, to its B")
                .isEqualTo(6);
        assertThat(regularPermits.limit())
                .as("the idle regular workload's limit came down to what is left of 8")
                .isEqualTo(2);
        assertThat(log.lines)
                .as("one line per kind of failure, not one per tick")
                .hasSize(2);
        assertThat(log.lines)
                .anySatisfy(l -> assertThat(l)
                        .contains("tick of the controls of workload 'broken'")
                        .contains("IllegalStateException"));
        assertThat(log.lines)
                .anySatisfy(l -> assertThat(l)
                        .contains("limit of the controls of workload 'broken'")
                        .contains("ArithmeticException"));
        held.forEach(elasticPermits::exit);
    }

    private static WorkloadConfig config(String name, Priority priority) {
        return WorkloadConfig.builder(name)
                .concurrent(6)
                .extraSlots(20)
                .priority(priority)
                .build();
    }

    /** A workload that only has a name: all the controls ask of it here. */
    private static Workload workload(String name) {
        return (Workload) Proxy.newProxyInstance(
                Workload.class.getClassLoader(),
                new Class<?>[] {Workload.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "name" -> name;
                    case "bulkheadName" -> "db";
                    case "toString" -> "Workload[" + name + "]";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    /** Keeps what is logged at ERROR, message and exception class. */
    private static final class Recording implements Logger {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public String getName() {
            return "recording";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            if (level == Level.ERROR) {
                lines.add(msg + " / " + thrown.getClass().getSimpleName());
            }
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            if (level == Level.ERROR) {
                lines.add(format);
            }
        }

        @Override
        public void log(Level level, Supplier<String> msg) {
            log(level, (ResourceBundle) null, msg.get(), (Object[]) null);
        }
    }
}
