package dev.dbbulkhead;

import java.util.Optional;

/**
 * A builder setting that cannot work, refused by {@link DbBulkhead.Builder}: the message names the setting, the
 * workload where there is one, the value and the rule, e.g. {@code "workload 'batch': concurrent must be >= 1, was
 * 0"}. The parts are also there for an integration that maps settings from elsewhere (the Spring Boot starter names
 * the property and where it was set).
 */
public final class InvalidSettingException extends IllegalArgumentException {
    private final String workload;
    private final String setting;
    private final transient Object value;
    private final String rule;

    InvalidSettingException(String workload, String setting, Object value, String rule) {
        super((workload == null ? "" : "workload '" + workload + "': ") + setting + " " + rule + ", was " + value);
        this.workload = workload;
        this.setting = setting;
        this.value = value;
        this.rule = rule;
    }

    /** Refused with a message of its own (the rule spans several settings). */
    InvalidSettingException(String workload, String setting, Object value, String message, boolean custom) {
        super(message);
        this.workload = workload;
        this.setting = setting;
        this.value = value;
        this.rule = null;
    }

    /**
     * The rule the value broke, e.g. {@code "must be >= 1"}, for a message that names the setting its own way
     * ({@code "<setting> <rule>, was <value>"}); empty when the message spans several settings (read it whole).
     */
    public Optional<String> rule() {
        return Optional.ofNullable(rule);
    }

    /** The workload the setting belongs to; empty for a setting of the whole barrier. */
    public Optional<String> workload() {
        return Optional.ofNullable(workload);
    }

    /**
     * The setting, as the builder names it: {@code name}, {@code workload name}, {@code concurrent},
     * {@code extraSlots}, {@code poolSize} (also when the workloads' {@code concurrent} add up to more than the pool),
     * {@code predictiveRejection}, {@code adaptiveLimit minLimit}, {@code leakDetectionThreshold},
     * {@code sizingHint.queueWait}, {@code sizingHint.holdTime}.
     */
    public String setting() {
        return setting;
    }

    /** The value refused. */
    public Object value() {
        return value;
    }
}
