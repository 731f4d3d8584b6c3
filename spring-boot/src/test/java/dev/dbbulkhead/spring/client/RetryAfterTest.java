package dev.dbbulkhead.spring.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import org.junit.jupiter.api.Test;

/** Retry-After as seconds, as an HTTP date, or missing and malformed (then 1 s). */
class RetryAfterTest {
    @Test
    void secondsDatesAndGarbage() {
        assertThat(RetryBudgetInterceptor.retryAfter("3")).isEqualTo(Duration.ofSeconds(3));
        assertThat(RetryBudgetInterceptor.retryAfter(" 0 ")).isEqualTo(Duration.ZERO);
        assertThat(RetryBudgetInterceptor.retryAfter(null)).isEqualTo(Duration.ofSeconds(1));
        assertThat(RetryBudgetInterceptor.retryAfter("soon")).isEqualTo(Duration.ofSeconds(1));
        String inTenSeconds = DateTimeFormatter.RFC_1123_DATE_TIME.format(
                ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(10));
        assertThat(RetryBudgetInterceptor.retryAfter(inTenSeconds))
                .isBetween(Duration.ofSeconds(8), Duration.ofSeconds(10));
        String past = DateTimeFormatter.RFC_1123_DATE_TIME.format(
                ZonedDateTime.now(ZoneOffset.UTC).minusHours(1));
        assertThat(RetryBudgetInterceptor.retryAfter(past)).isEqualTo(Duration.ZERO);
    }
}
