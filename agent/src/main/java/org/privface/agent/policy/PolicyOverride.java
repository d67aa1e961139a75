package org.privface.agent.policy;

import java.time.Duration;

import io.micronaut.core.annotation.Introspected;
import io.micronaut.serde.annotation.Serdeable;

/**
 * Fields that override a {@link SitePolicy}; null means "keep". The same shape serves the
 * per-site and per-camera sections of application.yml and the body of a remote change.
 */
@Introspected
@Serdeable
public class PolicyOverride {
    private String mechanism;
    private String mode;
    private Double epsilon;
    /** A budget policy spec, e.g. "max-k:k=3,every=5". */
    private String budget;
    private Duration window;
    private Boolean imageRelease;

    public PolicyOverride() {
    }

    /** Applies this override; the result is validated by {@link SitePolicy}'s constructor. */
    public SitePolicy applyTo(SitePolicy p) {
        Mechanism m = mechanism == null ? p.mechanism() : Mechanism.parse(mechanism);
        // A new mechanism without a mode takes that mechanism's production default.
        String md = mode != null ? mode : m != p.mechanism() ? defaultMode(m) : p.mode();
        return new SitePolicy(m, md, epsilon == null ? p.epsilon() : epsilon, budget == null ? p.budget() : budget,
                window == null ? p.window() : window, imageRelease == null ? p.imageRelease() : imageRelease);
    }

    public static String defaultMode(Mechanism m) {
        return switch (m) {
            case PEEP -> "l1-clip";
            case RDP -> "strict";
            case GAUSSIAN -> "gdp";
            case FISHER -> "l1-clip";
            case EMBEDDING -> "sign-cap";
        };
    }

    public boolean isEmpty() {
        return mechanism == null && mode == null && epsilon == null && budget == null && window == null
                && imageRelease == null;
    }

    public String getMechanism() { return mechanism; }
    public void setMechanism(String mechanism) { this.mechanism = mechanism; }
    public String getMode() { return mode; }
    public void setMode(String mode) { this.mode = mode; }
    public Double getEpsilon() { return epsilon; }
    public void setEpsilon(Double epsilon) { this.epsilon = epsilon; }
    public String getBudget() { return budget; }
    public void setBudget(String budget) { this.budget = budget; }
    public Duration getWindow() { return window; }
    public void setWindow(Duration window) { this.window = window; }
    public Boolean getImageRelease() { return imageRelease; }
    public void setImageRelease(Boolean imageRelease) { this.imageRelease = imageRelease; }
}
