package dev.dbbulkhead.example;

import dev.dbbulkhead.spring.DbWorkload;
import java.util.List;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Interactive reads: a short transaction each, admitted to the {@code interactive} workload before it begins. */
@Service
public class Catalog {
    private final JdbcClient jdbc;

    public Catalog(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    @DbWorkload("interactive")
    @Transactional(readOnly = true)
    public List<String> products() {
        jdbc.sql("SELECT pg_sleep(0.02)").query().singleValue(); // the database's share of a typical request
        return jdbc.sql("SELECT name FROM product ORDER BY name")
                .query(String.class)
                .list();
    }
}
