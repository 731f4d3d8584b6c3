package dev.dbbulkhead.tools.overload;

import dev.dbbulkhead.testkit.TestDatabase;
import dev.dbbulkhead.tools.support.Failures;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code --pin}: PostgreSQL on the first CPU, this load generator on the others, with {@code taskset}, so that the
 * two stop taking each other's core on a small machine. The postmaster is found from its {@code postmaster.pid} in
 * the data directory (a superuser may read {@code data_directory}); its backends inherit the affinity, and those
 * already running are moved too. Where that cannot be done (a remote server, no {@code taskset}, no permission), it
 * says so and prints the commands to run.
 */
final class Pinning {
    private Pinning() {}

    /** Pins both sides; returns a description for the report. */
    static String pin(TestDatabase db, PrintWriter out) {
        int cpus = Runtime.getRuntime().availableProcessors();
        if (cpus < 2) {
            out.println("--pin: only one CPU; not pinned");
            return "not pinned (one CPU)";
        }
        String serverCpu = "0";
        String clientCpus = cpus == 2 ? "1" : "1-" + (cpus - 1);
        long self = ProcessHandle.current().pid();
        var commands = new ArrayList<List<String>>();
        try {
            long postmaster = postmaster(db);
            commands.add(List.of("taskset", "-a", "-p", "-c", serverCpu, Long.toString(postmaster)));
            ProcessHandle.of(postmaster)
                    .ifPresent(p -> p.children()
                            .forEach(child -> commands.add(
                                    List.of("taskset", "-a", "-p", "-c", serverCpu, Long.toString(child.pid())))));
        } catch (SQLException | IOException | RuntimeException e) {
            out.println("--pin: cannot find PostgreSQL's postmaster (" + Failures.oneLine(e) + "); pin it yourself: "
                    + "taskset -a -p -c " + serverCpu + " <postmaster pid>");
        }
        commands.add(List.of("taskset", "-a", "-p", "-c", clientCpus, Long.toString(self)));
        for (var command : commands) {
            try {
                var p = new ProcessBuilder(command).redirectErrorStream(true).start();
                String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (p.waitFor() != 0) {
                    out.println("--pin: " + String.join(" ", command) + " failed: " + output.strip());
                }
            } catch (IOException e) {
                out.println("--pin: cannot run taskset (" + e.getMessage() + "); run: " + String.join(" ", command));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        String description = "pinned: PostgreSQL on CPU " + serverCpu + ", the load generator on CPU " + clientCpus;
        out.println("--pin: " + description);
        return description;
    }

    private static long postmaster(TestDatabase db) throws SQLException, IOException {
        try (Connection c = db.connect();
                var s = c.createStatement();
                var r = s.executeQuery("SELECT current_setting('data_directory')")) {
            r.next();
            Path pidFile = Path.of(r.getString(1), "postmaster.pid");
            return Long.parseLong(Files.readAllLines(pidFile, StandardCharsets.UTF_8)
                    .getFirst()
                    .trim());
        }
    }
}
