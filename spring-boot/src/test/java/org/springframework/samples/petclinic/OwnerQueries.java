package org.springframework.samples.petclinic;

import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * An application whose own code lives under {@code org.springframework}, as Spring PetClinic's does: the
 * unadmitted-connections meter must still name this frame, found by the application's packages.
 */
public final class OwnerQueries {
    private OwnerQueries() {}

    public static boolean find(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return c.isValid(1);
        }
    }
}
