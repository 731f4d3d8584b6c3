package dev.dbbulkhead;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A setting that cannot work, refused by {@link WorkloadConfig.Builder} or {@link DbBulkhead.Builder}: the message
 * names the workload where there is one, the setting, the rule and the value, e.g. {@code "workload 'batch':
 * concurrent must be >= 1, was 0"}. The parts are there for an integration that maps settings from elsewhere (the
 * Spring Boot starter names the property and where it was set).
 */
public final class InvalidSettingException extends IllegalArgumentException {
    private final @Nullable String workload;
    private final Setting setting;
    private final transient @Nullable Object value;
    private final String rule;

    InvalidSettingException(@Nullable String workload, Setting setting, @Nullable Object value, String rule) {
        super((workload == null ? "" : "workload '" + workload + "': ") + setting + " " + rule + ", was " + value);
        this.workload = workload;
        this.setting = setting;
        this.value = value;
        this.rule = rule;
    }

    /**
     * The rule the value broke, e.g. {@code "must be >= 1"}: the message is {@code "<setting> <rule>, was <value>"}.
     */
    public String rule() {
        return rule;
    }

    /** The workload the setting belongs to; empty for a setting of the whole barrier. */
    public Optional<String> workload() {
        return Optional.ofNullable(workload);
    }

    /** The setting refused. */
    public Setting setting() {
        return setting;
    }

    /** The value refused. */
    public @Nullable Object value() {
        return value;
    }
}
