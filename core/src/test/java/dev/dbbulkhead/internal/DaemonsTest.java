package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The barrier's background threads do not join their first caller's thread group: Maven's {@code exec:java} runs a
 * program in a group of its own and waits 15 s for every thread left in it (the reclaimer ignored its interrupt), so
 * the README's program printed its line and then hung.
 */
@Tag("no-db")
class DaemonsTest {
    @Test
    void aThreadStartedFromACallersGroupIsADaemonOfTheRootGroup() throws Exception {
        var callers = new ThreadGroup("exec-java-like");
        var made = new AtomicReference<Thread>();
        Thread caller = new Thread(callers, () -> made.set(Daemons.thread("db-bulkhead-test", () -> {})));
        caller.start();
        caller.join();
        assertThat(made.get().isDaemon()).isTrue();
        assertThat(made.get().getThreadGroup()).isNotSameAs(callers);
        assertThat(made.get().getThreadGroup().getParent()).as("the root group").isNull();
    }
}
