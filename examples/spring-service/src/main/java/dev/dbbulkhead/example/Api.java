package dev.dbbulkhead.example;

import java.util.List;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** The HTTP API. A rejection becomes 503 with Retry-After and a problem body, by the starter. */
@RestController
public class Api {
    private final Catalog catalog;
    private final Reports reports;

    public Api(Catalog catalog, Reports reports) {
        this.catalog = catalog;
        this.reports = reports;
    }

    @GetMapping("/products")
    public List<String> products() {
        return catalog.products();
    }

    @PostMapping("/reports")
    public Map<String, Long> report() {
        return Map.of("id", reports.run());
    }
}
