package dev.dbbulkhead.spring.repositories.jdbc;

import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Table;

/** A row of {@code spring_people}, as Spring Data JDBC sees it. */
@Table("spring_people")
public record PersonRow(@Id Long id, String name) {}
