package dev.dbbulkhead.tools;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.Socket;

/** Runs the command line in-process, as a user would type it, and keeps what it printed. */
public final class Cli {
    private Cli() {}

    public record Result(int exit, String out, String err) {}

    /** Whether something listens on 127.0.0.1:{@code port} (PostgreSQL, PgBouncer), for tests that need it. */
    public static boolean listening(int port) {
        try (var socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    public static Result run(String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        var cl = Main.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int exit = cl.execute(args);
        return new Result(exit, out.toString(), err.toString());
    }
}
