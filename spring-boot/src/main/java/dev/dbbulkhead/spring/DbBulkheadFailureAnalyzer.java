package dev.dbbulkhead.spring;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.origin.Origin;
import org.springframework.core.env.Environment;

/**
 * Reports a {@link DbBulkheadConfigurationException} at start-up with the properties to change and, for a property at
 * fault, where it was set (a file and line, an environment variable), as Spring Boot's own binding failures do.
 */
class DbBulkheadFailureAnalyzer extends AbstractFailureAnalyzer<DbBulkheadConfigurationException> {
    private final Environment environment;

    /** Spring Boot passes the application's environment (null when the failure came before there was one). */
    DbBulkheadFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DbBulkheadConfigurationException cause) {
        String origin = origin(cause.property());
        return new FailureAnalysis(
                origin == null ? cause.getMessage() : cause.getMessage() + "\n\n    Origin: " + origin,
                cause.action(),
                cause);
    }

    /** Where {@code property} was set, or null. */
    @Nullable
    String origin(@Nullable String property) {
        if (property == null || environment == null || !ConfigurationPropertyName.isValid(property)) {
            return null;
        }
        var name = ConfigurationPropertyName.of(property);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty found = source.getConfigurationProperty(name);
            if (found != null) {
                Origin origin = found.getOrigin();
                return origin != null ? origin.toString() : String.valueOf(source.getUnderlyingSource());
            }
        }
        return null;
    }
}
