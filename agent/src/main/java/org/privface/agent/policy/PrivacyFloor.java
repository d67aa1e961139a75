package org.privface.agent.policy;

import java.time.Duration;
import java.util.Objects;

import org.privface.privacy.Privacy;

/**
 * The gateway's own bounds, set in its local configuration only. The cloud is untrusted, so no
 * remote instruction (REST or control topic) and no camera override can move ε per track outside
 * [min, max] or make the budget window shorter than {@code windowMin}. A track spends at most ε
 * per window, so together they bound what one appearance can spend: at most {@code epsilonMax}
 * in any one budget window, and windows are never shorter than {@code windowMin}.
 */
@io.micronaut.serde.annotation.Serdeable
public record PrivacyFloor(double epsilonMin, double epsilonMax, Duration windowMin) {
    /** The default window: a floor of ε_max per ten minutes of one appearance. */
    public static final Duration DEFAULT_WINDOW_MIN = Duration.ofMinutes(10);

    public PrivacyFloor {
        Privacy.checkEpsilon(epsilonMin);
        Privacy.checkEpsilon(epsilonMax);
        if (epsilonMin > epsilonMax) {
            throw new IllegalArgumentException("privacy floor: epsilon-min " + epsilonMin + " exceeds epsilon-max " + epsilonMax);
        }
        Objects.requireNonNull(windowMin, "privacy floor: window-min");
        if (windowMin.isNegative() || windowMin.isZero()) {
            throw new IllegalArgumentException("privacy floor: window-min must be a positive duration, was " + windowMin);
        }
    }

    public PrivacyFloor(double epsilonMin, double epsilonMax) {
        this(epsilonMin, epsilonMax, DEFAULT_WINDOW_MIN);
    }

    /** ε requested remotely, brought inside the floor; NaN, infinities and non-positive values are refused. */
    public double clamp(double requested) {
        Privacy.checkEpsilon(requested);
        return Math.max(epsilonMin, Math.min(epsilonMax, requested));
    }

    public boolean contains(double epsilon) {
        return epsilon >= epsilonMin && epsilon <= epsilonMax;
    }

    /** A window requested remotely, raised to the floor's minimum; non-positive ones are left for SitePolicy to refuse. */
    public Duration clampWindow(Duration requested) {
        return requested == null || requested.isNegative() || requested.isZero() || containsWindow(requested)
                ? requested : windowMin;
    }

    public boolean containsWindow(Duration window) {
        return window.compareTo(windowMin) >= 0;
    }

    /** Whether a whole policy lies inside the floor: its ε and its window. */
    public boolean contains(SitePolicy p) {
        return contains(p.epsilon()) && containsWindow(p.window());
    }

    @Override
    public String toString() {
        return "[" + epsilonMin + ", " + epsilonMax + "] per window of at least " + windowMin;
    }
}
