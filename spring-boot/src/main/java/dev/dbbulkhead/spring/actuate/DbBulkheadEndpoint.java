package dev.dbbulkhead.spring.actuate;

import dev.dbbulkhead.KindStats;
import dev.dbbulkhead.Sharing;
import dev.dbbulkhead.Workload;
import dev.dbbulkhead.spring.DbBulkheadAdmission;
import dev.dbbulkhead.spring.DbBulkheadSettings.WorkloadSettings;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The actuator endpoint {@code dbbulkhead}: each workload's budget (B, Q, waits) and, at the moment of reading, its
 * executing, waiting and free permits. For observation: deciding admission from it is a race.
 */
@Endpoint(id = "dbbulkhead")
public class DbBulkheadEndpoint {
    private final DbBulkheadAdmission admission;

    public DbBulkheadEndpoint(DbBulkheadAdmission admission) {
        this.admission = admission;
    }

    /** The barrier now. */
    @ReadOperation
    public BulkheadView bulkhead() {
        var settings = admission.settings();
        var workloads = settings.workloads().stream().map(this::view).toList();
        return new BulkheadView(admission.bulkhead().name(), settings.defaultWorkload(), workloads);
    }

    private WorkloadView view(WorkloadSettings s) {
        Workload w = admission.bulkhead().workload(s.name());
        return new WorkloadView(
                s.name(),
                w.concurrent(),
                w.extraSlots(),
                s.queueWait(),
                s.deadline(),
                w.limit(),
                w.adaptive(),
                w.executing(),
                w.waiting(),
                w.available(),
                w.availableSlots(),
                w.kinds(),
                w.sharing().orElse(null));
    }

    /** The barrier: its name, its default workload, its workloads. */
    public record BulkheadView(String name, String defaultWorkload, List<WorkloadView> workloads) {}

    /**
     * One workload: its budget, waits, the limit in force ({@code concurrent} unless {@code adaptive}), and current
     * use. {@code deadline} is null when none is set; {@code sharing} (the elastic allowance and why, a regular
     * workload's latency objective) when the barrier has an elastic workload.
     */
    public record WorkloadView(
            String name,
            int concurrent,
            int extraSlots,
            Duration queueWait,
            @Nullable Duration deadline,
            int limit,
            boolean adaptive,
            int executing,
            int waiting,
            int availablePermits,
            int availableSlots,
            List<KindStats> kinds,
            @Nullable Sharing sharing) {}
}
