package dev.dbbulkhead.spring.repositories.cached;

import dev.dbbulkhead.spring.DbWorkload;
import dev.dbbulkhead.spring.repositories.jpa.Person;
import java.util.List;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.data.jpa.repository.JpaRepository;

/**
 * A repository that caching wraps in a proxy of its own around Spring Data's (docs/spring.md's "annotate the
 * repository", with {@code @Cacheable} methods): admitted to "interactive" all the same.
 */
@DbWorkload("interactive")
public interface CachedPeople extends JpaRepository<Person, Long> {
    @Cacheable("people")
    List<Person> findByName(String name);
}
