package dev.dbbulkhead.spring.repositories.refused;

import dev.dbbulkhead.spring.DbWorkload;
import dev.dbbulkhead.spring.repositories.jpa.Person;
import java.util.stream.Stream;
import org.springframework.data.jpa.repository.JpaRepository;

/** Refused at start-up: a stream is read after the method returned, and "reports" is no workload. */
public interface StreamingPeople extends JpaRepository<Person, Long> {
    @DbWorkload("interactive")
    Stream<Person> streamByName(String name);

    @DbWorkload("reports")
    long countByName(String name);
}
