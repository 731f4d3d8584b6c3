package dev.dbbulkhead.tools;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.testkit.TestDatabase;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoTest {
    private static final List<String> EXPECTED = List.of("overload=rejected", "query=42", "available=1");

    @Test
    void ourDemoPrintsTheArticlesThreeLines() throws Exception {
        var bytes = new ByteArrayOutputStream();
        DemoCommand.run(TestDatabase.get(), new PrintStream(bytes, true, StandardCharsets.UTF_8));
        assertThat(bytes.toString(StandardCharsets.UTF_8).lines()).containsExactlyElementsOf(EXPECTED);
    }

    /**
     * The article's {@code Demo.java}, unchanged but for {@code import dev.dbbulkhead.DbBulkhead;}, compiles
     * against core with {@code --release 21} and prints its three lines in a JVM of its own.
     */
    @Test
    void theArticlesDemoCompilesAgainstCoreWithOneAddedImportAndPrintsItsThreeLines(@TempDir Path dir)
            throws Exception {
        Path source = dir.resolve("Demo.java");
        try (var in = DemoTest.class.getResourceAsStream("/article/Demo.java")) {
            Files.copy(in, source);
        }
        String classpath = System.getProperty("java.class.path");
        var compiler = ToolProvider.getSystemJavaCompiler();
        var errors = new ByteArrayOutputStream();
        int rc = compiler.run(
                null, null, errors, "--release", "21", "-cp", classpath, "-d", dir.toString(), source.toString());
        assertThat(rc).as("javac: %s", errors.toString(StandardCharsets.UTF_8)).isZero();

        TestDatabase db = TestDatabase.get();
        var javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        var process = new ProcessBuilder(javaBin, "-cp", dir + java.io.File.pathSeparator + classpath, "Demo")
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        process.environment().put("DB_URL", db.jdbcUrl());
        process.environment().put("DB_USER", db.user());
        process.environment().put("DB_PASSWORD", db.password());
        Process p = process.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("Demo output: %s", out).isZero();
        assertThat(out.lines()).containsExactlyElementsOf(EXPECTED);
    }
}
