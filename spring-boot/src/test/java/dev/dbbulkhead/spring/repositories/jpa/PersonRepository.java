package dev.dbbulkhead.spring.repositories.jpa;

import dev.dbbulkhead.spring.DbWorkload;
import java.util.List;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.data.jpa.repository.Query;
import org.springframework.data.repository.query.Param;

/** Admitted to "interactive" as a type: derived, {@code @Query} and inherited methods; one method to "batch". */
@DbWorkload("interactive")
public interface PersonRepository extends JpaRepository<Person, Long> {
    List<Person> findByNameStartingWith(String prefix);

    @Query("select p from Person p where p.name = :name")
    List<Person> named(@Param("name") String name);

    @DbWorkload("batch")
    long countByNameStartingWith(String prefix);
}
