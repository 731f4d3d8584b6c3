package dev.dbbulkhead.example.jpa;

import dev.dbbulkhead.spring.DbWorkload;
import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

/**
 * The owners, with no service layer in front: the controller calls this repository directly, so the admission is
 * here. Every method (derived, {@code @Query}, and those inherited from {@code JpaRepository}) is admitted to the
 * {@code interactive} workload, before the repository's own transaction; the report, to {@code batch}.
 */
@DbWorkload("interactive")
public interface OwnerRepository extends JpaRepository<Owner, Long> {
    List<Owner> findByLastNameStartingWithOrderByLastName(String prefix);

    /** A slow report (20 ms in PostgreSQL per call): owners per city. */
    @DbWorkload("batch")
    @Query(
            value = "SELECT city, count(*) AS owners FROM owners, pg_sleep(:seconds) GROUP BY city ORDER BY city",
            nativeQuery = true)
    List<Object[]> ownersPerCity(@Param("seconds") double seconds);
}
