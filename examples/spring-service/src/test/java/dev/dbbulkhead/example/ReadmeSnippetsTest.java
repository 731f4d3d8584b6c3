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
    private static final Pattern PUBLIC_TYPE = Pattern.compile("^public (?:final )?(?:class|interface|record) (\\w+)",
            Pattern.MULTILINE);

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
            assertThat(type.find()).as("a README Java block declares a public type:%n%s", block).isTrue();
            Path file = dir.resolve(type.group(1) + ".java");
            assertThat(file).as("two README blocks declare %s", type.group(1)).doesNotExist();
            Files.writeString(file, block);
            sources.add(file.toString());
        }
        var args = new ArrayList<>(List.of("--release", "21", "-Xlint:all,-try", "-Werror", "-cp",
                System.getProperty("java.class.path"), "-d", dir.resolve("classes").toString()));
        args.addAll(sources);
        var errors = new ByteArrayOutputStream();
        int rc = ToolProvider.getSystemJavaCompiler().run(null, null, errors, args.toArray(String[]::new));
        assertThat(rc).as("javac on the README's Java blocks:%n%s", errors.toString(StandardCharsets.UTF_8))
                .isZero();
    }
}
