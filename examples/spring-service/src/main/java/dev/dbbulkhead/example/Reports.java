package dev.dbbulkhead.example;

import dev.dbbulkhead.spring.DbWorkload;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Batch work: long transactions with their own small budget, so that they cannot take interactive's. */
@Service
public class Reports {
    private final JdbcClient jdbc;

    public Reports(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    @DbWorkload("batch")
    @Transactional
    public long run() {
        jdbc.sql("SELECT pg_sleep(0.2)").query().singleValue();
        return jdbc.sql("INSERT INTO report_run (products) SELECT count(*) FROM product RETURNING id")
                .query(Long.class)
                .single();
    }
}
