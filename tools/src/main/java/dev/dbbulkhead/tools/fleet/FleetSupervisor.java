package dev.dbbulkhead.tools.fleet;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * The fleet's processes during one topology's run: the old instances, then the surge of new ones, one killed if asked,
 * the old ones retired as a deploy would, each stopped by closing its input and read for its result; the sampler beside
 * them. Every process it started is killed when the run ends, however it ends, and on {@link #stopAll} (Ctrl-C).
 */
final class FleetSupervisor {
    /** Starts one instance's process: its name, the JDBC URL it connects to, its pool size, whether it adapts. */
    @FunctionalInterface
    interface Launcher {
        ProcessBuilder instance(String name, String url, int size, boolean adaptive);
    }

    private final PrintWriter out;
    private final String dbUrl;
    private final int instances;
    private final int surge;
    private final boolean killOne;
    private final double phaseSeconds;
    private final Launcher launcher;
    private final List<Process> running = new CopyOnWriteArrayList<>();

    FleetSupervisor(
            PrintWriter out,
            String dbUrl,
            int instances,
            int surge,
            boolean killOne,
            double phaseSeconds,
            Launcher launcher) {
        this.out = out;
        this.dbUrl = dbUrl;
        this.instances = instances;
        this.surge = surge;
        this.killOne = killOne;
        this.phaseSeconds = phaseSeconds;
        this.launcher = launcher;
    }

    FleetReport.Run run(
            FleetTopology topology, String url, int size, @Nullable String console, String user, String password)
            throws IOException, SQLException, InterruptedException {
        var sampler = new FleetSampler(dbUrl, user, password, console, FleetCommand.ROLE);
        var samplerThread = Thread.ofPlatform().daemon().start(sampler);
        var all = new ArrayList<Process>();
        try {
            for (int i = 0; i < instances; i++) {
                all.add(start(topology.label + "-old-" + i, url, size, topology.adaptive));
            }
            pause();
            for (int i = 0; i < surge; i++) {
                all.add(start(topology.label + "-new-" + i, url, size, topology.adaptive));
            }
            pause();
            var results = new ArrayList<Map<String, String>>();
            var limits = new ArrayList<List<long[]>>();
            if (killOne && instances > surge) {
                Process victim = all.get(surge); // an old instance that the deploy would have kept
                victim.destroyForcibly(); // SIGKILL: its transactions and connections cut
                out.println("  killed " + topology.label + "-old-" + surge + " (SIGKILL)");
                out.flush();
            }
            for (int i = 0; i < surge; i++) {
                results.add(stop(all.get(i), limits)); // the deploy retires as many old instances as it started
            }
            pause();
            for (Process p : all.subList(surge, all.size())) {
                results.add(stop(p, limits));
            }
            return new FleetReport.Run(results, sampler.samples(), sampler.failure(), limits, sampler.startMillis());
        } finally {
            sampler.stop();
            samplerThread.join(2_000);
            all.forEach(this::kill);
        }
    }

    private void pause() throws InterruptedException {
        TimeUnit.MILLISECONDS.sleep((long) (phaseSeconds * 1_000));
    }

    private Process start(String name, String url, int size, boolean adaptive) throws IOException {
        var pb = launcher.instance(name, url, size, adaptive);
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        Process p = pb.start();
        running.add(p);
        out.println("  started " + name);
        out.flush();
        return p;
    }

    /** Closes its input (stop), waits for its result line; its limit lines go to {@code limits}. */
    private Map<String, String> stop(Process p, List<List<long[]>> limits) {
        var result = new LinkedHashMap<String, String>();
        try {
            if (p.isAlive()) {
                p.getOutputStream().close();
            }
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(30, TimeUnit.SECONDS);
            var output = FleetLines.read(text);
            result.putAll(output.result());
            if (!output.limits().isEmpty()) {
                limits.add(output.limits());
            }
        } catch (IOException e) {
            result.put("error", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            kill(p);
        }
        return result;
    }

    private void kill(Process p) {
        if (p.isAlive()) {
            p.destroyForcibly();
        }
        running.remove(p);
    }

    void stopAll() {
        running.forEach(Process::destroyForcibly);
    }
}
