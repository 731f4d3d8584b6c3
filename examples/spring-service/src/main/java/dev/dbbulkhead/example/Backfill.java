package dev.dbbulkhead.example;

import dev.dbbulkhead.spring.DbWorkload;
import java.util.List;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * The step of a batch job: one chunk, admitted to the elastic {@code backfill} workload and run as one transaction.
 * It can be asked again: a chunk copied twice leaves the same rows.
 */
@Service
public class Backfill {
    private final JdbcClient jdbc;

    public Backfill(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    /** Copies the next {@code size} products after id {@code after}; the last id copied, or -1 when none is left. */
    @DbWorkload("backfill")
    @Transactional
    public long copyAfter(long after, int size) {
        List<Long> ids = jdbc.sql("""
                        INSERT INTO product_archive (id, name)
                        SELECT id, name FROM product WHERE id > ? ORDER BY id LIMIT ?
                        ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name
                        RETURNING id""").params(after, size).query(Long.class).list();
        return ids.stream().mapToLong(Long::longValue).max().orElse(-1);
    }
}
