package dev.dbbulkhead.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dbbulkhead.internal.TransactionControl.Effect;
import dev.dbbulkhead.internal.TransactionControl.Finding;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How the guard reads SQL that changes the session (no database: {@code SessionStateContractTest} runs the same on
 * PostgreSQL, with the next caller's view of the session).
 */
@Tag("no-db")
class SessionStatementsTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            SET search_path TO tenant_a, public                        | SET search_path                   | SET LOCAL search_path
            set search_path = nowhere                                  | SET search_path                   | SET LOCAL search_path
            SET statement_timeout TO 1                                 | SET statement_timeout             | SET LOCAL statement_timeout
            SET SESSION statement_timeout = 1                          | SET SESSION statement_timeout     | SET LOCAL statement_timeout
            SET TIME ZONE 'UTC'                                        | SET time                          | SET LOCAL time
            SELECT set_config('statement_timeout', '1', false)         | set_config(..., false)            | set_config(..., true)
            SELECT pg_catalog.set_config('a.b', 'c', 'off')            | set_config(..., false)            | set_config(..., true)
            SELECT SET_CONFIG('a.b', 'c', FALSE) AS x                  | set_config(..., false)            | set_config(..., true)
            SELECT "set_config"('a.b', 'c', false)                     | set_config(..., false)            | set_config(..., true)
            SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY       | SET SESSION CHARACTERISTICS       | TransactionOptions
            SET ROLE other                                             | SET ROLE                          | SET LOCAL ROLE
            SET SESSION AUTHORIZATION other                            | SET SESSION AUTHORIZATION         | SET LOCAL SESSION AUTHORIZATION
            RESET application_name                                     | RESET application_name            | SET LOCAL name TO DEFAULT
            RESET ALL                                                  | RESET all                         | SET LOCAL name TO DEFAULT
            DISCARD TEMP                                               | DISCARD                           | ON COMMIT DROP
            SELECT pg_advisory_lock(42)                                | pg_advisory_lock(...)             | pg_advisory_xact_lock(...)
            SELECT pg_advisory_lock_shared(42)                         | pg_advisory_lock_shared(...)      | pg_advisory_xact_lock_shared(...)
            SELECT pg_try_advisory_lock(1, 2)                          | pg_try_advisory_lock(...)         | pg_try_advisory_xact_lock(...)
            SELECT x FROM t WHERE pg_try_advisory_lock_shared (t.id)   | pg_try_advisory_lock_shared(...)  | pg_try_advisory_xact_lock_shared(...)
            CREATE TEMP TABLE t (id int)                               | CREATE TEMP TABLE without ON COMMIT DROP | ON COMMIT DROP
            CREATE TEMPORARY TABLE t (id int) ON COMMIT DELETE ROWS    | CREATE TEMP TABLE without ON COMMIT DROP | ON COMMIT DROP
            CREATE GLOBAL TEMP TABLE t AS SELECT 1                     | CREATE TEMP TABLE without ON COMMIT DROP | ON COMMIT DROP
            CREATE TEMP VIEW v AS SELECT 1                             | CREATE TEMP VIEW                  | ON COMMIT DROP
            CREATE TEMP SEQUENCE s                                     | CREATE TEMP SEQUENCE              | ON COMMIT DROP
            SELECT 1 AS a INTO TEMP t                                  | SELECT ... INTO TEMP              | ON COMMIT DROP AS SELECT
            SELECT * INTO TEMPORARY TABLE t FROM bulkhead_items        | SELECT ... INTO TEMP              | ON COMMIT DROP AS SELECT
            DECLARE c CURSOR WITH HOLD FOR SELECT 1                    | DECLARE ... WITH HOLD             | WITHOUT HOLD
            PREPARE q AS SELECT 1                                      | PREPARE                           | PreparedStatement
            LISTEN events                                              | LISTEN                            | outside the pool
            LOAD 'auto_explain'                                        | LOAD                              | session_preload_libraries
            SELECT 1; SET search_path TO x                             | SET search_path                   | SET LOCAL search_path
            /* c */ SET work_mem = '1GB'                                | SET work_mem                      | SET LOCAL work_mem
            CREATE TEMP TABLE t ON COMMIT DROP AS SELECT pg_advisory_lock(1) | pg_advisory_lock(...)       | pg_advisory_xact_lock(...)
            CREATE TABLE pg_temp.orders (id int)                       | CREATE TEMP TABLE without ON COMMIT DROP | ON COMMIT DROP
            create table "pg_temp".orders (id int)                     | CREATE TEMP TABLE without ON COMMIT DROP | ON COMMIT DROP
            CREATE TABLE IF NOT EXISTS Pg_Temp_3 . orders (id int)     | CREATE TEMP TABLE without ON COMMIT DROP | ON COMMIT DROP
            CREATE TABLE test.pg_temp.orders (id int)                  | CREATE TEMP TABLE without ON COMMIT DROP | ON COMMIT DROP
            CREATE /* c */ TABLE pg_temp./* c */orders (id int)        | CREATE TEMP TABLE without ON COMMIT DROP | ON COMMIT DROP
            CREATE VIEW pg_temp.v AS SELECT 1                          | CREATE TEMP VIEW                  | ON COMMIT DROP
            CREATE SEQUENCE pg_temp.s                                  | CREATE TEMP SEQUENCE              | ON COMMIT DROP
            CREATE OR REPLACE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql AS 'SELECT 1' | CREATE FUNCTION pg_temp.* | schema of its own
            UPDATE pg_settings SET setting = 'x' WHERE name = 'search_path' | UPDATE pg_settings       | set_config(name, value, true)
            update ONLY pg_catalog."pg_settings" s set setting = '1' where name = 'statement_timeout' | UPDATE pg_settings | SET LOCAL
            WITH x AS (SELECT 1) UPDATE pg_settings SET setting = 'x' WHERE name = 'work_mem' | UPDATE pg_settings | SET LOCAL
            DO $$BEGIN PERFORM set_config('search_path', 'x', false); END$$ | set_config(..., false)     | set_config(..., true)
            DO $$BEGIN UPDATE pg_settings SET setting = '1' WHERE name = 'work_mem'; END$$ | UPDATE pg_settings | SET LOCAL
            DO $x$ BEGIN PERFORM pg_advisory_lock(1); END $x$ LANGUAGE plpgsql | pg_advisory_lock(...)  | pg_advisory_xact_lock(...)
            """)
    void sessionChangesAreRefusedNamingTheTransactionScopedSpelling(String sql, String command, String instead) {
        Finding finding = TransactionControl.inspect(sql);
        assertThat(finding).as(sql).isNotNull();
        assertThat(finding.effect()).as(sql).isEqualTo(Effect.SESSION_STATE);
        assertThat(finding.command()).isEqualTo(command);
        assertThat(finding.refusal().getMessage()).contains(instead).contains("reach the next caller");
        assertThat(finding.refusal().getSQLState()).isEqualTo("25000");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "SET LOCAL search_path TO tenant_a",
                "SET LOCAL statement_timeout = 50",
                "SET TRANSACTION ISOLATION LEVEL " + "SERIALIZABLE",
                "SET CONSTRAINTS ALL DEFERRED",
                "SET LOCAL ROLE other",
                "SELECT set_config('statement_timeout', '1', true)",
                "SELECT set_config('a.b', 'c', 'on')",
                "SELECT pg_advisory_xact_lock(42)",
                "SELECT pg_try_advisory_xact_lock_shared(1)",
                "SELECT pg_advisory_unlock(1)",
                "CREATE TEMP TABLE t (id int) ON COMMIT DROP",
                "create temporary table t on commit drop as select 1",
                "CREATE TABLE temp_things (id int)",
                "CREATE UNLOGGED TABLE u (id int)",
                "DECLARE c CURSOR FOR SELECT 1",
                "DECLARE c CURSOR WITHOUT HOLD FOR SELECT 1",
                "SELECT 'SET search_path TO x; RESET ALL'",
                "SELECT 1 /* RESET ALL; LISTEN x */",
                "-- LISTEN x\nSELECT 1",
                "SELECT $$pg_advisory_lock(1)$$",
                "SELECT 1 AS set_config",
                "SELECT set_config FROM t",
                "SELECT \"set_config\" FROM (SELECT 1 AS set_config) t",
                "SELECT \"SET_CONFIG\"('a', 'b', false)",
                "UPDATE bulkhead_items SET note = 'x' WHERE id = 1",
                "INSERT INTO bulkhead_items VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET note = 'y'",
                "ALTER TABLE t ALTER COLUMN c SET DEFAULT 1",
                "SELECT 1 INTO temp",
                "WITH x AS (SELECT 1) INSERT INTO temp SELECT * FROM x",
                "WITH x AS (SELECT 1 AS a) INSERT INTO temp (a) " + "SELECT a FROM x",
                "SELECT pg_advisory_lock_count",
                "DEALLOCATE ALL",
                "UNLISTEN *",
                "EXPLAIN SELECT 1",
                "SELECT my_pg_advisory_lock(1)",
                "CREATE TABLE pg_temp_things (id int)",
                "CREATE TABLE public.orders (id int)",
                "CREATE TABLE pg_temp.orders (id int) ON COMMIT DROP",
                "SELECT name, setting FROM pg_settings",
                "SELECT * FROM pg_settings WHERE name = 'work_mem' FOR UPDATE",
                "SELECT * FROM pg_settings FOR NO KEY UPDATE",
                "UPDATE settings SET pg_settings = 1",
                "ALTER ROLE CURRENT_USER SET work_mem = '5MB'",
                "CREATE FUNCTION f() RETURNS int LANGUAGE sql SET search_path = x AS 'SELECT 1'",
                "do 'begin null; end'",
                "DO $$BEGIN UPDATE t SET a = 1; END$$",
                "DO $$DECLARE n int; BEGIN SELECT count(*) INTO n FROM t; IF n > 0 THEN PERFORM 1; END IF; END$$",
                "DO LANGUAGE plpgsql $$ <<b>> BEGIN INSERT INTO t VALUES (1) ON CONFLICT DO UPDATE SET a = 2; END $$"
            })
    void transactionScopedChangesAndMereWordsPass(String sql) {
        assertThat(TransactionControl.inspect(sql)).as(sql).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            DO $$BEGIN EXECUTE 'SET search_path TO x'; END$$                 | DO
            DO $$BEGIN SET search_path = x; END$$                            | DO
            DO $$BEGIN IF true THEN RESET ALL; END IF; END$$                 | DO
            DO $$BEGIN CALL p(); END$$                                       | DO
            DO 'begin execute ''reset all''; end'                            | DO
            DO LANGUAGE plperl 'print 1'                                     | DO
            SET LOCAL search_path TO pg_temp, public                         | pg_temp
            SELECT set_config('search_path', 'PG_TEMP,public', true)         | pg_temp
            SELECT * INTO pg_temp.x FROM t                                   | pg_temp
            CREATE TABLE t AS SELECT * FROM "pg_temp".x                      | pg_temp
            CALL refresh_everything()                                        | CALL
            SELECT set_config('search_path', ?, ?)                           | set_config(..., <expression>)
            SELECT set_config('search_path', 'x', $1)                        | set_config(..., <expression>)
            SELECT set_config('search_path', 'x', NOT false)                 | set_config(..., <expression>)
            SELECT set_config('search_path', 'x', (SELECT true))             | set_config(..., <expression>)
            """)
    void whatTheTextCannotShowIsARiskNotARefusal(String sql, String command) {
        Finding finding = TransactionControl.inspect(sql);
        assertThat(finding).as(sql).isNotNull();
        assertThat(finding.effect()).as(sql).isEqualTo(Effect.SESSION_RISK);
        assertThat(finding.command()).isEqualTo(command);
        assertThat(TransactionControl.find(sql)).as("not refused").isNull();
    }

    @Test
    void aCallAloneNamesItsProcedureFoldedAsTheServerFoldsNames() {
        assertThat(TransactionControl.calledProcedure("CALL refresh()")).containsExactly(null, "refresh");
        assertThat(TransactionControl.calledProcedure("call Sales . \"Refresh\"(1, 'a;b') ;"))
                .containsExactly("sales", "Refresh");
        assertThat(TransactionControl.calledProcedure("/* c */ CALL db.s.p()")).containsExactly("s", "p");
        assertThat(TransactionControl.calledProcedure("CALL p(); SELECT 1"))
                .as("two statements")
                .isNull();
        assertThat(TransactionControl.calledProcedure("CALL p(set_config('a', 'b', $1))"))
                .as("another risk in it")
                .isNull();
        assertThat(TransactionControl.calledProcedure("SELECT p()")).isNull();
        assertThat(TransactionControl.plainBody("BEGIN INSERT INTO t VALUES (1); END"))
                .isTrue();
        assertThat(TransactionControl.plainBody("BEGIN EXECUTE 'x'; END")).isFalse();
    }

    @Test
    void aRefusalAnywhereInTheTextWinsOverARisk() {
        assertThat(TransactionControl.find("DO $$BEGIN END$$; SET search_path TO x"))
                .isEqualTo("SET search_path");
        assertThat(TransactionControl.find("CALL p(); COMMIT")).isEqualTo("COMMIT");
        assertThat(TransactionControl.inspect("SELECT 1; CALL p()").command()).isEqualTo("CALL");
    }

    @Test
    void bothReadingsOfBackslashesAreChecked() {
        // standard_conforming_strings off: the backslash escapes the quote, and SET starts a statement.
        assertThat(TransactionControl.find("SELECT 'x\\'; SET search_path TO x; --'"))
                .isEqualTo("SET search_path");
        // E'' reads backslashes in both readings: the SET stays inside the string.
        assertThat(TransactionControl.find("SELECT E'x\\'; SET search_path TO x; --'"))
                .isNull();
    }

    @Test
    void transactionControlIsStillRefusedAsBefore() {
        assertThat(TransactionControl.find("PREPARE TRANSACTION 'tx'")).isEqualTo("PREPARE TRANSACTION");
        assertThat(TransactionControl.find("COMMIT PREPARED 'tx'")).isNull();
        assertThat(TransactionControl.find("START TRANSACTION")).isEqualTo("START TRANSACTION");
        assertThat(TransactionControl.find("ROLLBACK TO SAVEPOINT s")).isNull();
        assertThat(TransactionControl.inspect("COMMIT").effect()).isEqualTo(Effect.TRANSACTION_CONTROL);
    }
}
