package dev.dbbulkhead.tools;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the db-bulkhead command-line tools. */
@Command(name = "db-bulkhead", mixinStandardHelpOptions = true, version = "db-bulkhead 0.1.0",
        description = "Tools for db-bulkhead, admission control in front of a JDBC pool.",
        subcommands = {DemoCommand.class, OverloadCommand.class, BudgetCommand.class})
public final class Main implements Runnable {
    public static void main(String[] args) {
        System.exit(new CommandLine(new Main()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
