package dev.dbbulkhead.spring.repositories.jdbc;

import dev.dbbulkhead.spring.DbWorkload;
import java.util.List;
import org.springframework.data.jdbc.repository.query.Query;
import org.springframework.data.repository.ListCrudRepository;
import org.springframework.data.repository.query.Param;

/** A Spring Data JDBC repository, admitted to "interactive" as a type; one method to "batch". */
@DbWorkload("interactive")
public interface PersonRows extends ListCrudRepository<PersonRow, Long> {
    List<PersonRow> findByName(String name);

    @DbWorkload("batch")
    @Query("SELECT * FROM spring_people WHERE name LIKE :prefix || '%'")
    List<PersonRow> startingWith(@Param("prefix") String prefix);
}
