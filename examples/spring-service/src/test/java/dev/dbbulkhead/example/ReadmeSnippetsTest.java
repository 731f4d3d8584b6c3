package dev.dbbulkhead.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java block of the README is a complete source file that a user can paste: this extracts them all and
 * compiles them together (a tiny application) with {@code --release 21} against core, micrometer and the Spring
 * Boot starter, so that they cannot drift from the API.
 */
class ReadmeSnippetsTest {
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
    private static final Pattern PUBLIC_TYPE =
            Pattern.compile("^public (?:final )?(?:class|interface|record) (\\w+)", Pattern.MULTILINE);

    static List<String> javaBlocks() throws Exception {
        String readme = Files.readString(Path.of("..", "..", "README.md"), StandardCharsets.UTF_8);
        var blocks = new ArrayList<String>();
        Matcher m = JAVA_BLOCK.matcher(readme);
        while (m.find()) {
            blocks.add(m.group(1));
        }
        return blocks;
    }

    @Test
    void everyJavaBlockOfTheReadmeCompilesAsItStands(@TempDir Path dir) throws Exception {
        List<String> blocks = javaBlocks();
        assertThat(blocks).as("Java blocks in the README").hasSizeGreaterThanOrEqualTo(4);
        var sources = new ArrayList<String>();
        for (String block : blocks) {
            Matcher type = PUBLIC_TYPE.matcher(block);
            assertThat(type.find())
                    .as("a README Java block declares a public type:%n%s", block)
                    .isTrue();
            Path file = dir.resolve(type.group(1) + ".java");
            assertThat(file).as("two README blocks declare %s", type.group(1)).doesNotExist();
            Files.writeString(file, block);
            sources.add(file.toString());
        }
        var args = new ArrayList<>(List.of(
                "--release",
                "21",
                "-Xlint:all,-try",
                "-Werror",
                "-cp",
                System.getProperty("java.class.path"),
                "-d",
                dir.resolve("classes").toString()));
        args.addAll(sources);
        var errors = new ByteArrayOutputStream();
        int rc = ToolProvider.getSystemJavaCompiler().run(null, null, errors, args.toArray(String[]::new));
        assertThat(rc)
                .as("javac on the README's Java blocks:%n%s", errors.toString(StandardCharsets.UTF_8))
                .isZero();
    }

    private static String readme() throws Exception {
        return Files.readString(Path.of("..", "..", "README.md"), StandardCharsets.UTF_8);
    }

    private static List<String> blocks(String language) throws Exception {
        var found = new ArrayList<String>();
        Matcher m = Pattern.compile("```" + language + "\\n(.*?)```", Pattern.DOTALL)
                .matcher(readme());
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    /** A property of the build's own pom.xml (the versions the project is built and tested with). */
    private static String buildProperty(String name) throws Exception {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</")
                .matcher(Files.readString(Path.of("..", "..", "pom.xml"), StandardCharsets.UTF_8));
        assertThat(m.find()).as("pom.xml property %s", name).isTrue();
        return m.group(1);
    }

    /**
     * The README's pom.xml names the versions this project is built and tested with, and pins the compiler plugin (a
     * plain Maven 3.8 would use 3.1, which knows no --release).
     */
    @Test
    void theReadmesPomUsesTheVersionsThisBuildIsTestedWith() throws Exception {
        String pom = blocks("xml").stream()
                .filter(b -> b.contains("<project"))
                .findFirst()
                .orElseThrow();
        var parsed = javax.xml.parsers.DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(new java.io.ByteArrayInputStream(pom.getBytes(StandardCharsets.UTF_8)));
        assertThat(parsed.getDocumentElement().getTagName()).isEqualTo("project");
        assertThat(pom)
                .contains("<artifactId>HikariCP</artifactId>\n            <version>" + buildProperty("hikaricp.version")
                        + "</version>");
        assertThat(pom)
                .contains("<artifactId>postgresql</artifactId>\n            <version>"
                        + buildProperty("postgresql.version") + "</version>");
        assertThat(pom)
                .contains("<artifactId>slf4j-simple</artifactId>\n            <version>"
                        + buildProperty("slf4j.version") + "</version>");
        assertThat(pom)
                .contains("<artifactId>maven-compiler-plugin</artifactId>\n                <version>"
                        + buildProperty("compiler-plugin.version") + "</version>");
        assertThat(pom).contains("<maven.compiler.release>21</maven.compiler.release>");
        assertThat(blocks("kotlin"))
                .anySatisfy(gradle -> assertThat(gradle)
                        .contains(
                                "com.zaxxer:HikariCP:" + buildProperty("hikaricp.version"),
                                "org.postgresql:postgresql:" + buildProperty("postgresql.version")));
    }

    /** The tables the README's examples use exist once its SQL has run, on the real PostgreSQL. */
    @Test
    void theReadmesSqlCreatesTheTablesItsExamplesUse() throws Exception {
        List<String> sql = blocks("sql");
        assertThat(sql).isNotEmpty();
        try (var c = dev.dbbulkhead.testkit.TestDatabase.get().connect();
                var s = c.createStatement()) {
            for (String block : sql) {
                s.execute(block);
                s.execute(block); // IF NOT EXISTS: it can be run again
            }
            for (String table : List.of("orders", "account", "product")) {
                assertThat(readme()).contains(" " + table + " ");
                try (var r = s.executeQuery("SELECT count(*) FROM " + table)) {
                    assertThat(r.next()).isTrue();
                }
            }
            s.execute("INSERT INTO orders (customer) VALUES (7)");
        }
    }

    /** Every Spring properties example says how big the pool is: the workloads must fit in it. */
    @Test
    void everySpringPropertiesExampleSetsThePoolSize() throws Exception {
        List<String> properties = blocks("properties");
        assertThat(properties)
                .isNotEmpty()
                .allSatisfy(block -> assertThat(block).contains("spring.datasource.hikari.maximum-pool-size="));
    }
}
