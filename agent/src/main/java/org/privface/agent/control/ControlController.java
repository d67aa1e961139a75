package org.privface.agent.control;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;

import io.micronaut.http.HttpResponse;
import io.micronaut.http.HttpStatus;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Header;
import io.micronaut.http.annotation.Put;
import io.micronaut.core.annotation.Nullable;
import org.privface.agent.AgentSettings;
import org.privface.agent.policy.AuditLog;
import org.privface.agent.policy.PolicyOverride;
import org.privface.agent.policy.PolicyStore;

/**
 * The gateway's control API. Every endpoint needs the bearer token of {@code agent.control.token};
 * without a configured token the API answers 403, so a gateway is never controllable by accident.
 */
@Controller("/control")
public class ControlController {
    private final AgentSettings settings;
    private final GatewayState state;
    private final ExactMetrics exact;

    public ControlController(AgentSettings settings, GatewayState state, ExactMetrics exact) {
        this.settings = settings;
        this.state = state;
        this.exact = exact;
    }

    /** The exact face counts in Prometheus text: /prometheus serves only what depends on no face (issue 39). */
    @Get(value = "/metrics", produces = "text/plain; version=0.0.4; charset=utf-8")
    public HttpResponse<?> metrics(@Nullable @Header("Authorization") String auth) {
        // Refused in plain text too: this endpoint produces text, not the JSON of the others.
        return authorized(auth) ? HttpResponse.ok(exact.scrape())
                : HttpResponse.status(HttpStatus.UNAUTHORIZED).body(String.valueOf(((Map<?, ?>) refused().body()).get("error")));
    }

    @Get("/status")
    public HttpResponse<?> status(@Nullable @Header("Authorization") String auth) {
        return authorized(auth) ? HttpResponse.ok(state.localReport()) : refused();
    }

    @Get("/audit")
    public HttpResponse<?> audit(@Nullable @Header("Authorization") String auth) {
        if (!authorized(auth)) {
            return refused();
        }
        List<AuditLog.Entry> recent = state.policies().audit().recent();
        return HttpResponse.ok(recent);
    }

    @Put("/policy")
    public HttpResponse<?> change(@Nullable @Header("Authorization") String auth, @Body PolicyOverride change) {
        if (!authorized(auth)) {
            return refused();
        }
        PolicyStore.Result r = state.policies().applyRemote(change, "rest", "bearer");
        Map<String, Object> body = Map.of("outcome", r.outcome().name(), "reason", r.reason(),
                "version", r.current().version(), "policy", GatewayState.describe(r.current().policy()),
                "floor", state.policies().floor());
        return r.outcome() == PolicyStore.Outcome.REJECTED
                ? HttpResponse.status(HttpStatus.UNPROCESSABLE_ENTITY).body(body)
                : HttpResponse.ok(body);
    }

    private boolean authorized(String header) {
        String token = settings.getControl().getToken();
        if (token == null || token.isBlank() || header == null || !header.startsWith("Bearer ")) {
            return false;
        }
        // Constant-time comparison, so response timing does not leak the token.
        return MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8),
                header.substring("Bearer ".length()).getBytes(StandardCharsets.UTF_8));
    }

    private HttpResponse<?> refused() {
        String why = settings.getControl().getToken() == null ? "control API disabled: set agent.control.token"
                : "missing or wrong bearer token";
        return HttpResponse.status(HttpStatus.UNAUTHORIZED).body(Map.of("error", why));
    }
}
