package org.privface.agent.control;

import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import io.micronaut.context.annotation.Factory;
import io.micronaut.serde.ObjectMapper;
import jakarta.inject.Singleton;
import org.privface.agent.AgentSettings;
import org.privface.agent.capture.CameraSettings;
import org.privface.agent.policy.AuditLog;
import org.privface.agent.policy.PolicyOverride;
import org.privface.agent.policy.PolicyStore;
import org.privface.agent.policy.PrivacyFloor;
import org.privface.agent.policy.SiteOverrides;
import org.privface.agent.policy.SitePolicy;

/**
 * What the gateway reports about itself (REST status, the site's status topic): the policy in
 * force, its floor, the cameras and the budget counters. Holds no pixels and no face data. The
 * status topic gets {@link #report}: aggregates only, with the counts that depend on linking and
 * withholding noised ({@link org.privface.privacy.StatusCounts}); the authenticated REST status adds the exact local
 * sections ({@link #localReport}).
 */
@Singleton
public class GatewayState {
    private final AgentSettings settings;
    private final PolicyStore policies;
    private final Map<String, Supplier<Map<String, Object>>> sections = new ConcurrentHashMap<>();
    private final Map<String, Supplier<Map<String, Object>>> localSections = new ConcurrentHashMap<>();
    private final Instant started = Instant.now();
    /** Audit entries carried in each report; the gateway's audit.jsonl keeps them all. */
    static final int RECENT_CHANGES = 20;

    public GatewayState(AgentSettings settings, PolicyStore policies) {
        this.settings = settings;
        this.policies = policies;
    }

    public PolicyStore policies() {
        return policies;
    }

    /** Lets the pipeline add live sections (cameras, budget, publishing) to the report. */
    public void register(String name, Supplier<Map<String, Object>> section) {
        sections.put(name, section);
    }

    /**
     * Adds a section only the gateway's authenticated REST status shows, never the status topic:
     * exact counts and per-person spend that would tell the cloud about linking decisions.
     */
    public void registerLocal(String name, Supplier<Map<String, Object>> section) {
        localSections.put(name, section);
    }

    /** The report with the local sections under {@code local}: for the operator's authenticated REST status only. */
    public Map<String, Object> localReport() {
        Map<String, Object> r = report();
        Map<String, Object> local = new LinkedHashMap<>();
        localSections.forEach((name, s) -> local.put(name, s.get()));
        // The heap in use grows with the work done, faces included: a face-dependent figure, so local only.
        local.put("residentMemoryBytes", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        r.put("local", local);
        return r;
    }

    public String gatewayId() {
        return settings.getGatewayId();
    }

    public Map<String, Object> report() {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("gateway", settings.getGatewayId());
        r.put("site", policies.site());
        r.put("at", Instant.now().toString());
        r.put("startedAt", started.toString());
        PolicyStore.Versioned v = policies.current();
        r.put("policyVersion", v.version());
        r.put("policy", describe(v.policy()));
        r.put("floor", Map.of("epsilonMin", policies.floor().epsilonMin(), "epsilonMax", policies.floor().epsilonMax(),
                "windowMin", policies.floor().windowMin().toString()));
        List<AuditLog.Entry> recent = policies.audit().recent();
        if (!recent.isEmpty()) {
            AuditLog.Entry last = recent.get(recent.size() - 1);
            r.put("lastChange", change(last));
            // The latest changes, so an operator sees each outcome without reaching the gateway.
            r.put("recentChanges", recent.subList(Math.max(0, recent.size() - RECENT_CHANGES), recent.size()).stream()
                    .map(GatewayState::change).toList());
        }
        sections.forEach((name, s) -> r.put(name, s.get()));
        return r;
    }

    private static Map<String, Object> change(AuditLog.Entry e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("at", e.at().toString());
        m.put("source", e.source());
        m.put("principal", e.principal() == null ? "" : e.principal());
        m.put("outcome", e.outcome());
        if (e.epsilonRequested() != null) {
            m.put("epsilonRequested", e.epsilonRequested());
        }
        m.put("epsilonApplied", e.epsilonApplied());
        m.put("version", e.version());
        m.put("reason", e.reason() == null ? "" : e.reason());
        return m;
    }

    public static Map<String, Object> describe(SitePolicy p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("mechanism", p.mechanism().name());
        m.put("mode", p.mode());
        m.put("epsilonPerTrack", p.epsilon());
        m.put("budget", p.budget());
        m.put("epsilonPerRelease", p.budgetPolicy().epsilonPerRelease(p.epsilon()));
        m.put("window", p.window().toString());
        m.put("imageRelease", p.imageRelease());
        return m;
    }

    /** Builds the policy store from local configuration: defaults, then the site's section, then the floor. */
    @Factory
    static class Policies {
        @Singleton
        PolicyStore policyStore(AgentSettings s, List<SiteOverrides> sites, List<CameraSettings> cameras, ObjectMapper json) {
            SitePolicy policy = s.defaultPolicy();
            for (SiteOverrides o : sites) {
                if (o.site().equals(s.getSiteId())) {
                    policy = o.applyTo(policy);
                }
            }
            Map<String, PolicyOverride> perCamera = new LinkedHashMap<>();
            for (CameraSettings c : cameras) {
                perCamera.put(c.camera(), c);
            }
            PrivacyFloor floor = new PrivacyFloor(s.getFloor().getEpsilonMin(), s.getFloor().getEpsilonMax(),
                    s.getFloor().getWindowMin());
            AuditLog audit = new AuditLog(s.getDataDir().resolve("audit.jsonl"), json);
            return new PolicyStore(s.getSiteId(), policy, floor, perCamera, audit);
        }
    }
}
