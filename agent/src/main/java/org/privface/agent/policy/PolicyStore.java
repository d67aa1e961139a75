package org.privface.agent.policy;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The site's current policy and the only door to change it. Local configuration sets the
 * starting policy, the floor and per-camera overrides; remote changes (REST or the control
 * topic) may move the site's knobs, always inside the floor (ε within [min, max], the window no
 * shorter than its minimum), and never enable image release, which only the gateway's own
 * configuration may do.
 */
public final class PolicyStore {
    public enum Outcome { ACCEPTED, CLAMPED, REJECTED }

    /** The policy in force and a version that increases with every applied change. */
    public record Versioned(SitePolicy policy, long version) {
    }

    public record Result(Outcome outcome, Versioned current, String reason) {
    }

    private final String site;
    private final PrivacyFloor floor;
    private final Map<String, PolicyOverride> cameraOverrides;
    private final AuditLog audit;
    private final List<Consumer<Versioned>> listeners = new CopyOnWriteArrayList<>();
    private volatile Versioned current;

    public PolicyStore(String site, SitePolicy initial, PrivacyFloor floor, Map<String, PolicyOverride> cameraOverrides,
                       AuditLog audit) {
        this.site = site;
        this.floor = floor;
        this.cameraOverrides = Map.copyOf(cameraOverrides);
        this.audit = audit;
        // The gateway's own configuration must respect its own floor; refusing to start beats
        // silently running at an ε the operator ruled out.
        checkInsideFloor("site " + site, initial);
        for (var e : this.cameraOverrides.entrySet()) {
            checkInsideFloor("camera " + e.getKey(), e.getValue().applyTo(initial));
        }
        this.current = new Versioned(initial, 1);
        audit.append(new AuditLog.Entry(Instant.now(), "local-config", "gateway", site, Outcome.ACCEPTED.name(), null,
                initial.epsilon(), initial.epsilon(), 1, "starting policy " + initial));
    }

    private void checkInsideFloor(String what, SitePolicy p) {
        if (!floor.contains(p.epsilon())) {
            throw new IllegalArgumentException(what + ": configured epsilon " + p.epsilon() + " is outside the privacy floor ["
                    + floor.epsilonMin() + ", " + floor.epsilonMax() + "]");
        }
        if (!floor.containsWindow(p.window())) {
            throw new IllegalArgumentException(what + ": configured window " + p.window()
                    + " is shorter than the privacy floor's window-min " + floor.windowMin());
        }
    }

    public Versioned current() {
        return current;
    }

    /** The policy a camera runs: the site's, with the camera's local overrides on top. */
    public SitePolicy forCamera(String camera) {
        return forCamera(camera, current.policy());
    }

    /** The policy a camera runs under a given site policy (one read of {@link #current()} per change). */
    public SitePolicy forCamera(String camera, SitePolicy p) {
        PolicyOverride o = cameraOverrides.get(camera);
        if (o == null || o.isEmpty()) {
            return p;
        }
        SitePolicy merged = o.applyTo(p);
        // A local camera override cannot lift ε above what the site now allows, nor shorten its window.
        if (merged.epsilon() > p.epsilon()) {
            merged = withEpsilon(merged, p.epsilon());
        }
        return merged.window().compareTo(p.window()) >= 0 ? merged : withWindow(merged, p.window());
    }

    public PrivacyFloor floor() {
        return floor;
    }

    public String site() {
        return site;
    }

    public AuditLog audit() {
        return audit;
    }

    public void onChange(Consumer<Versioned> listener) {
        listeners.add(listener);
    }

    /** Applies a remote change; every call is audited, whatever its outcome. */
    public Result applyRemote(PolicyOverride change, String source, String principal) {
        Versioned applied;
        Result result;
        synchronized (this) {
            Versioned before = current;
            Double requested = change == null ? null : change.getEpsilon();
            try {
                if (change == null || change.isEmpty()) {
                    throw new IllegalArgumentException("empty change");
                }
                if (change.getImageRelease() != null && change.getImageRelease() != before.policy().imageRelease()) {
                    throw new IllegalArgumentException("image release can only be changed in the gateway's own configuration");
                }
                PolicyOverride effective = copy(change);
                boolean clamped = false;
                if (requested != null) {
                    double c = floor.clamp(requested);
                    clamped = c != requested;
                    effective.setEpsilon(c);
                }
                boolean windowClamped = false;
                if (change.getWindow() != null) {
                    effective.setWindow(floor.clampWindow(change.getWindow()));
                    windowClamped = !effective.getWindow().equals(change.getWindow());
                }
                SitePolicy next = effective.applyTo(before.policy());
                if (!floor.contains(next.epsilon())) {
                    next = withEpsilon(next, floor.clamp(next.epsilon()));
                    clamped = true;
                }
                if (!floor.containsWindow(next.window())) {
                    next = withWindow(next, floor.windowMin());
                    windowClamped = true;
                }
                applied = new Versioned(next, before.version() + 1);
                List<String> why = new java.util.ArrayList<>();
                if (clamped) {
                    why.add("epsilon brought inside the floor [" + floor.epsilonMin() + ", " + floor.epsilonMax() + "]");
                }
                if (windowClamped) {
                    why.add("window raised to the floor's minimum " + floor.windowMin());
                }
                result = new Result(why.isEmpty() ? Outcome.ACCEPTED : Outcome.CLAMPED, applied, String.join("; ", why));
                audit.append(new AuditLog.Entry(Instant.now(), source, principal, site, result.outcome().name(), change,
                        requested, next.epsilon(), applied.version(), result.reason()));
                current = applied;
            } catch (IllegalArgumentException e) {
                result = new Result(Outcome.REJECTED, before, e.getMessage());
                audit.append(new AuditLog.Entry(Instant.now(), source, principal, site, Outcome.REJECTED.name(), change,
                        requested, before.policy().epsilon(), before.version(), e.getMessage()));
                return result;
            }
        }
        for (Consumer<Versioned> l : listeners) {
            l.accept(applied);
        }
        return result;
    }

    private static SitePolicy withEpsilon(SitePolicy p, double eps) {
        PolicyOverride o = new PolicyOverride();
        o.setEpsilon(eps);
        return o.applyTo(p);
    }

    private static SitePolicy withWindow(SitePolicy p, java.time.Duration window) {
        PolicyOverride o = new PolicyOverride();
        o.setWindow(window);
        return o.applyTo(p);
    }

    private static PolicyOverride copy(PolicyOverride c) {
        PolicyOverride o = new PolicyOverride();
        o.setMechanism(c.getMechanism());
        o.setMode(c.getMode());
        o.setEpsilon(c.getEpsilon());
        o.setBudget(c.getBudget());
        o.setWindow(c.getWindow());
        o.setImageRelease(c.getImageRelease());
        return o;
    }
}
