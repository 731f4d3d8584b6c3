package dev.dbbulkhead.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("no-db")
class SecretsTest {
    @Test
    void passwordsInJdbcUrlsAreRedacted() {
        assertThat(Secrets.redact("jdbc:postgresql://db:5432/app?user=u&password=p%40ss&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/app?user=u&password=***&ssl=true");
        assertThat(Secrets.redact("jdbc:postgresql://u:p@ss@db/app")).doesNotContain("p@ss").contains("u:***@");
        assertThat(Secrets.redact("jdbc:postgresql://db/app;PASSWORD=x"))
                .isEqualTo("jdbc:postgresql://db/app;PASSWORD=***");
        assertThat(Secrets.redact("jdbc:postgresql://db/app")).isEqualTo("jdbc:postgresql://db/app");
    }
}
