package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.DeadlineExceededException.Stage;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which failures an adaptive limit counts as load: the server's, the pool's and PgBouncer's, never the application's. */
@Tag("no-db")
class OverloadTest {
    @ParameterizedTest(name = "{0} {1}: {2}")
    @CsvSource(delimiter = '|', textBlock = """
            53300 | FATAL: sorry, too many clients already                          | true
            53200 | ERROR: out of memory                                            | true
            53000 | ERROR: insufficient resources                                   | true
            08P01 | ERROR: query_wait_timeout                                       | true
            08P01 | FATAL: no more connections allowed (max_client_conn)            | true
            08P01 | ERROR: client_login_timeout (server down)                       | true
            08P01 | ERROR: server login has been failing, try again later (server_login_retry) | true
            08P01 | ERROR: server conn crashed?                                     | false
            55P03 | ERROR: could not obtain lock on row in relation "accounts"      | false
            55P03 | ERROR: canceling statement due to lock timeout                  | false
            57014 | ERROR: canceling statement due to statement timeout             | false
            57014 | ERROR: canceling statement due to user request                  | false
            40P01 | ERROR: deadlock detected                                        | false
            40001 | ERROR: could not serialize access due to concurrent update      | false
            23505 | ERROR: duplicate key value violates unique constraint           | false
            08006 | An I/O error occurred while sending to the backend.             | false
            """)
    void onlySaturationCounts(String sqlState, String message, boolean overload) {
        var failure = new SQLException(message, sqlState);
        assertThat(Overload.signalled(failure)).isEqualTo(overload);
        assertThat(Overload.signalled(new RuntimeException("wrapped", failure)))
                .as("as a cause")
                .isEqualTo(overload);
    }

    @Test
    void theDeadlinePassingAtAnyStageIsLoad() {
        for (Stage stage : Stage.values()) {
            assertThat(Overload.signalled(new DeadlinePassed(stage, 1_000, null)))
                    .as("%s", stage)
                    .isTrue();
        }
        // A statement the deadline's own lock_timeout cut short: the same 55P03 as above, but past the deadline.
        var lockWait = new SQLException("ERROR: canceling statement due to lock timeout", "55P03");
        assertThat(Overload.signalled(new DeadlinePassed(Stage.STATEMENT, 1_000, lockWait)))
                .isTrue();
    }

    @Test
    void aPoolTimeoutIsLoad() {
        var hikari = new SQLTransientConnectionException("pool - Connection is not available, request timed out");
        assertThat(Overload.signalled(hikari)).isTrue();
        assertThat(Overload.poolTimeout(new SQLException("wrapped", hikari))).isTrue();
        assertThat(Overload.poolTimeout(new SQLException("refused", "53300"))).isFalse();
        assertThat(Overload.signalled(new IllegalStateException("a bug"))).isFalse();
        assertThat(Overload.signalled(new SQLException("no state"))).isFalse();
    }
}
