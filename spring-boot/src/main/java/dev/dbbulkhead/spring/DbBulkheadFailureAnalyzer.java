package dev.dbbulkhead.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a {@link DbBulkheadConfigurationException} at start-up with the properties to change. */
class DbBulkheadFailureAnalyzer extends AbstractFailureAnalyzer<DbBulkheadConfigurationException> {
    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, DbBulkheadConfigurationException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
    }
}
