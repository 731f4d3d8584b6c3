package dev.dbbulkhead.tools.overload;

import java.io.PrintWriter;

/**
 * What a long overload run is doing, on standard error: a bar redrawn in place on a terminal, one line per step
 * otherwise (a log, CI), so that a run of minutes never sits silent.
 */
final class Progress {
    private final PrintWriter err;
    private final int total;
    private final boolean terminal;
    private int done;

    /** {@code total}: the steps expected, or 0 when not known in advance. */
    @SuppressWarnings("SystemConsoleNull") // built for Java 21, where console() is null without a terminal
    Progress(PrintWriter err, int total) {
        this(err, total, System.console() != null);
    }

    Progress(PrintWriter err, int total, boolean terminal) {
        this.err = err;
        this.total = total;
        this.terminal = terminal && total > 0;
    }

    /** One step done: {@code what} names it (scenario, load, configuration, repetition). */
    void step(String what) {
        done++;
        if (terminal) {
            int width = 30;
            int filled = done * width / total;
            err.printf("\r[%s%s] %d/%d %-30s", "#".repeat(filled), ".".repeat(width - filled), done, total, what);
        } else {
            err.println(total > 0 ? "[" + done + "/" + total + "] " + what : "[" + done + "] " + what);
        }
        err.flush();
    }

    /** Clears the bar (a terminal); nothing otherwise. */
    void done() {
        if (terminal) {
            err.print("\r" + " ".repeat(80) + "\r");
            err.flush();
        }
    }
}
