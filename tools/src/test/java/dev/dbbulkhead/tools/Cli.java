package dev.dbbulkhead.tools;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Runs the command line in-process, as a user would type it, and keeps what it printed. */
final class Cli {
    private Cli() {}

    record Result(int exit, String out, String err) {}

    static Result run(String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        var cl = Main.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int exit = cl.execute(args);
        return new Result(exit, out.toString(), err.toString());
    }
}
