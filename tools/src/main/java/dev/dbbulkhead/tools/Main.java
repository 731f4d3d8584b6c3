package dev.dbbulkhead.tools;

import dev.dbbulkhead.testkit.Secrets;
import dev.dbbulkhead.tools.budget.BudgetCommand;
import dev.dbbulkhead.tools.fleet.FleetCommand;
import dev.dbbulkhead.tools.http.HttpLoadCommand;
import dev.dbbulkhead.tools.overload.OverloadCommand;
import dev.dbbulkhead.tools.support.Failures;
import java.util.List;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of the db-bulkhead command-line tools. */
@Command(
        name = "db-bulkhead",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "Tools for db-bulkhead, admission control in front of a JDBC pool.",
        subcommands = {
            DemoCommand.class,
            OverloadCommand.class,
            BudgetCommand.class,
            FleetCommand.class,
            HttpLoadCommand.class
        })
public final class Main implements Runnable {
    /** How long the shutdown hooks may take once the JVM is asked to stop (SIGTERM, Ctrl-C, the end of a command). */
    static final long SHUTDOWN_GRACE_MILLIS = 15_000;

    public static void main(String[] args) {
        haltIfShutdownHangs();
        System.exit(commandLine().execute(args));
    }

    /**
     * A stop always stops: should a shutdown hook hang (a full heap, a server that no longer answers while the test
     * schema is dropped), the process halts {@link #SHUTDOWN_GRACE_MILLIS} later with status 143, as after SIGTERM.
     */
    private static void haltIfShutdownHangs() {
        Runtime.getRuntime()
                .addShutdownHook(Thread.ofPlatform()
                        .unstarted(() -> Thread.ofPlatform().daemon().start(() -> {
                            try {
                                Thread.sleep(SHUTDOWN_GRACE_MILLIS);
                            } catch (InterruptedException e) {
                                return;
                            }
                            Runtime.getRuntime().halt(143);
                        })));
    }

    /**
     * The command line, whose unexpected failures (an unreachable database, a server that refuses) are one line and
     * exit status 2, with any password in it masked, instead of a stack trace.
     */
    public static CommandLine commandLine() {
        var cl = new CommandLine(new Main());
        // A bad value is one line and exit status 2 for every command, as an unreachable server is (no usage dump).
        cl.setParameterExceptionHandler((e, args) -> {
            var err = e.getCommandLine().getErr();
            err.println("error: " + Secrets.mask(String.valueOf(e.getMessage()), List.of()) + suggestion(e) + " (see '"
                    + e.getCommandLine().getCommandSpec().qualifiedName() + " --help')");
            err.flush();
            return 2;
        });
        cl.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("error: " + Failures.oneLine(e));
            line.getErr().flush();
            return 2;
        });
        return cl;
    }

    /** For a mistyped option or command, the close ones picocli knows: "; did you mean --duration?". */
    private static String suggestion(CommandLine.ParameterException e) {
        if (e instanceof CommandLine.UnmatchedArgumentException unmatched
                && !unmatched.getSuggestions().isEmpty()) {
            return "; did you mean " + String.join(" or ", unmatched.getSuggestions()) + "?";
        }
        return "";
    }

    /** The version of the artifacts this jar was built with (Maven filters it into the jar). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() throws Exception {
            var properties = new Properties();
            try (var in = Main.class.getResourceAsStream("/db-bulkhead-tools.properties")) {
                if (in != null) {
                    properties.load(in);
                }
            }
            return new String[] {"db-bulkhead " + properties.getProperty("version", "(unknown version)")};
        }
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
