package dev.dbbulkhead.example.jpa;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Controllers calling the repository directly (no service layer, no annotation here): each repository call is one
 * admission. A rejection becomes a 503 with Retry-After, by the starter.
 */
@RestController
public class OwnerController {
    private final OwnerRepository owners;

    public OwnerController(OwnerRepository owners) {
        this.owners = owners;
    }

    /** Owners whose last name starts with {@code lastName}, as "Name (City)". */
    @GetMapping("/owners")
    public List<String> find(@RequestParam(name = "lastName", defaultValue = "") String lastName) {
        return owners.findByLastNameStartingWithOrderByLastName(lastName).stream()
                .map(o -> o.getLastName() + " (" + o.getCity() + ")")
                .toList();
    }

    @PostMapping("/owners")
    @ResponseStatus(HttpStatus.CREATED)
    public long add(@RequestParam("lastName") String lastName, @RequestParam("city") String city) {
        return owners.save(new Owner(lastName, city)).getId();
    }

    /** The batch report: owners per city. */
    @GetMapping("/reports/cities")
    public Map<String, Long> cities() {
        var perCity = new LinkedHashMap<String, Long>();
        for (Object[] row : owners.ownersPerCity(0.02)) {
            perCity.put((String) row[0], ((Number) row[1]).longValue());
        }
        return perCity;
    }
}
