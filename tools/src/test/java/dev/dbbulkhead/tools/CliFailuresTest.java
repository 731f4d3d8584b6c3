package dev.dbbulkhead.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.tools.support.Failures;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Every command: an unreachable database is one line and exit 2, never a password, never a stack trace. */
class CliFailuresTest {
    private static final String URL = "jdbc:postgresql://app:s3cret@127.0.0.1:1/nowhere?password=s3cret";

    @ParameterizedTest
    @ValueSource(strings = {"demo", "overload"})
    void anUnreachableDatabaseIsOneLineAndExit2(String command) throws Exception {
        String line = oneErrorLine(command, URL);
        assertThat(line).startsWith("error: ").contains("password=***").doesNotContain("s3cret");
    }

    /** {@code command} in a JVM of its own with {@code DB_URL}: its one line of output, once it exited 2. */
    private static String oneErrorLine(String command, String dbUrl) throws Exception {
        var java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        var pb = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), Main.class.getName(), command)
                .redirectErrorStream(true);
        pb.environment().put("DB_URL", dbUrl);
        pb.environment().put("DB_PASSWORD", "s3cret");
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isEqualTo(2);
        List<String> lines = output.lines().filter(l -> !l.startsWith("SLF4J")).toList();
        assertThat(lines).as(output).hasSize(1);
        return lines.get(0);
    }

    /** The demo and overload need PostgreSQL: another database's URL is one line that says so, and exit 2. */
    @ParameterizedTest
    @ValueSource(strings = {"demo", "overload"})
    void anotherDatabaseIsToldWhatTheCommandNeeds(String command) throws Exception {
        assertThat(oneErrorLine(command, "jdbc:mariadb://app:s3cret@127.0.0.1:3306/test"))
                .startsWith("error: this command runs on PostgreSQL")
                .doesNotContain("s3cret");
    }

    @Test
    void contradictoryOverloadOptionsAreRefusedBeforeAnyWork() {
        var r = Cli.run("overload", "--concurrent", "8", "--pool", "4");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("--concurrent (8) must not exceed --pool (4)");
        assertThat(r.out()).doesNotContain("database:");
    }

    @Test
    void oneLineJoinsTheCausesAndMasksPasswords() {
        var e = new IllegalStateException("cannot reach " + URL, new RuntimeException("refused\n  twice"));
        assertThat(Failures.oneLine(e))
                .isEqualTo("cannot reach jdbc:postgresql://app:***@127.0.0.1:1/nowhere?password=***: refused twice");
    }

    /** Every command reports a bad value the same way: one "error:" line naming it, and exit 2; no usage dump. */
    @ParameterizedTest
    @ValueSource(
            strings = {
                "overload --loads abc",
                "overload --duration -x",
                "budget --instances x",
                "fleet --surge y",
                "demo --nope",
                "fleet --instances -1"
            })
    void aBadValueIsOneErrorLineAndExit2(String command) {
        var r = Cli.run(command.split(" "));
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList())
                .as(r.err())
                .hasSize(1)
                .allSatisfy(line -> assertThat(line).startsWith("error: "));
        assertThat(r.out()).isEmpty();
        if (command.equals("fleet --instances -1")) {
            assertThat(r.err()).contains("--instances must be >= 1, was -1").doesNotContain("--surge");
        }
    }

    /** A mistyped option is one error line with the options it is close to. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "overload --duraton 5|did you mean --duration?",
                "budget --instances 2 --pool 5 --max-connections 100 --surg 1|did you mean --surge?",
                "fleet --surg 1|did you mean --surge?"
            })
    void aMistypedOptionIsToldWhatItIsCloseTo(String command, String suggestion) {
        var r = Cli.run(command.split(" "));
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList())
                .as(r.err())
                .hasSize(1)
                .first()
                .asString()
                .startsWith("error: ")
                .contains(suggestion);
    }

    /** Non-finite and overflowing numbers, and repeated or nameless --other clients: refused naming the option. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "overload --scenarios open-loop --rate Infinity|--rate must be a finite number > 0, was Infinity",
                "overload --scenarios open-loop --rate 1e400|--rate must be a finite number > 0, was Infinity",
                "overload --scenarios open-loop --rate 5e8 --duration 5|--rate must be at most 100000 ops/s",
                "overload --scenarios open-loop --rate 1e7 --duration 1|--rate must be at most 100000 ops/s",
                "overload --scenarios open-loop --rate 90000 --duration 60|--rate × --duration must be at most 1000000",
                "overload --report /proc/nope|--report: cannot write to /proc/nope: ",
                "fleet --report /proc/nope|--report: cannot write to /proc/nope: ",
                "budget --instances 2 --pool 5 --max-connections 100 --other batch=99999999999|N at most 2147483647",
                "overload --duration NaN|--duration must be a finite number > 0, was NaN",
                "overload --scenarios s2-locks --loads Infinity|--loads must all be finite numbers > 0",
                "fleet --rate Infinity|--rate must be a finite number > 0",
                "budget --instances 2 --pool 5 --max-connections 100 --other ops=5 --other ops=7|--other names 'ops' twice",
                "budget --instances 2 --pool 5 --max-connections 100 --other =5|--other needs a NAME=N, was '=5'",
                "budget --instances 2 --pool 5 --max-connections 100 --other ops=x|--other needs a NAME=N, was 'ops=x'",
            })
    void aNumberThatCannotWorkOrARepeatedClientIsOneErrorLineNamingTheOption(String command, String message) {
        var r = Cli.run(command.split(" "));
        assertThat(r.exit()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList())
                .as(r.err())
                .hasSize(1)
                .first()
                .asString()
                .startsWith("error: ")
                .contains(message);
        assertThat(r.out()).isEmpty();
    }

    @Test
    void theVersionIsTheArtifactsOwn() throws Exception {
        var r = Cli.run("--version");
        assertThat(r.exit()).isZero();
        String pom = java.nio.file.Files.readString(Path.of("pom.xml"));
        var version =
                java.util.regex.Pattern.compile("<version>([^<]+)</version>").matcher(pom);
        assertThat(version.find()).isTrue();
        assertThat(r.out().strip()).isEqualTo("db-bulkhead " + version.group(1));
    }
}
