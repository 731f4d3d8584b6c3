package dev.dbbulkhead.spring.repositories.jpa;

import dev.dbbulkhead.spring.DbWorkload;
import java.util.List;
import org.springframework.data.repository.CrudRepository;

/** Only one method carries the annotation: the others run unadmitted. */
public interface AuditRepository extends CrudRepository<Person, Long> {
    @DbWorkload("batch")
    List<Person> findByName(String name);
}
