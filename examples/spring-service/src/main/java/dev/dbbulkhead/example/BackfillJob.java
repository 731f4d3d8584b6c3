package dev.dbbulkhead.example;

import dev.dbbulkhead.BatchJob;
import dev.dbbulkhead.DbBulkhead;
import java.time.Duration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.stereotype.Component;

/**
 * A batch job in chunks beside the interactive API: each chunk asks the barrier before it runs ({@link Backfill} is a
 * {@code @DbWorkload("backfill")} method, an elastic workload), and a chunk refused because interactive work needs
 * the room makes the job pause and ask again rather than fail ({@link BatchJob#step}). With the starter switched off
 * ({@code db-bulkhead.enabled=false}) there is no {@link DbBulkhead} bean, and so no job.
 */
@Component
@ConditionalOnBooleanProperty(name = "db-bulkhead.enabled", matchIfMissing = true)
public class BackfillJob {
    private final Backfill backfill;
    private final BatchJob job;

    public BackfillJob(Backfill backfill, DbBulkhead db) {
        this.backfill = backfill;
        this.job = BatchJob.of(db.workload("backfill"), Duration.ofSeconds(5));
    }

    /** Copies every product in chunks of {@code chunkSize}; the chunks it took. */
    public long run(int chunkSize) throws Exception {
        long last = 0;
        long chunks = 0;
        while (true) {
            long after = last;
            long next = job.step(() -> backfill.copyAfter(after, chunkSize));
            if (next < 0) {
                return chunks;
            }
            last = next;
            chunks++;
        }
    }

    /** The job's counters: chunks admitted, times it was told to slow down, time paused. */
    public BatchJob job() {
        return job;
    }
}
