package dev.dbbulkhead.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("no-db")
class SecretsTest {
    @Test
    void passwordsInJdbcUrlsAreRedacted() {
        assertThat(Secrets.redact("jdbc:postgresql://db:5432/app?user=u&password=p%40ss&ssl=true"))
                .isEqualTo("jdbc:postgresql://db:5432/app?user=u&password=***&ssl=true");
        assertThat(Secrets.redact("jdbc:postgresql://u:p@ss@db/app"))
                .doesNotContain("p@ss")
                .contains("u:***@");
        assertThat(Secrets.redact("jdbc:postgresql://db/app;PASSWORD=x"))
                .isEqualTo("jdbc:postgresql://db/app;PASSWORD=***");
        assertThat(Secrets.redact("jdbc:postgresql://db/app")).isEqualTo("jdbc:postgresql://db/app");
    }

    @Test
    void aPasswordIsMaskedWholeAsTheDriverReadsItWithSpacesTabsAndSemicolons() {
        for (String password : new String[] {"horse battery staple", "tab\there", "SECRET;SEMISECRET", "p@ss word"}) {
            String url = "jdbc:postgresql://db/app?user=u&password=" + password + "&ssl=true";
            String redacted = Secrets.redact(url);
            assertThat(redacted).as(password).isEqualTo("jdbc:postgresql://db/app?user=u&password=***&ssl=true");
        }
        assertThat(Secrets.redact("jdbc:postgresql://db/app?password=horse%20battery"))
                .isEqualTo("jdbc:postgresql://db/app?password=***");
        assertThat(Secrets.mask(
                        "FATAL: password authentication failed: horse battery",
                        Secrets.passwordsIn("jdbc:postgresql://db/app?password=horse%20battery")))
                .doesNotContain("horse");
    }

    @Test
    void aShortPasswordInsideOrdinaryWordsIsLeftAlone() {
        var secrets = Secrets.passwordsIn("jdbc:postgresql://db/app?password=ab");
        assertThat(Secrets.mask("connection to database 'app' refused; password ab rejected", secrets))
                .isEqualTo("connection to database 'app' refused; password *** rejected");
    }

    @Test
    void everyParameterNamedLikeAPasswordIsRedactedAndFound() {
        String url =
                "jdbc:postgresql://db/app?sslmode=verify-full&sslpassword=k3y&user=u&Password=p2&x_password_file=f";
        assertThat(Secrets.redact(url))
                .isEqualTo(
                        "jdbc:postgresql://db/app?sslmode=verify-full&sslpassword=***&user=u&Password=***&x_password_file=f");
        assertThat(Secrets.passwordsIn(url)).containsExactly("k3y", "p2");
        assertThat(Secrets.mask("Unable to parse URL " + url, Secrets.passwordsIn(url)))
                .doesNotContain("k3y", "p2");
    }

    @Test
    void unsetSecretsAmongTheListAreSkipped() {
        var secrets = new java.util.ArrayList<String>(List.of("s3cret"));
        secrets.add(null); // an environment variable that is not set
        secrets.add("");
        assertThat(Secrets.mask("password s3cret refused", secrets)).isEqualTo("password *** refused");
    }
}
