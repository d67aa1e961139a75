package org.privface.agent.control;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.micronaut.health.HealthStatus;
import io.micronaut.management.health.indicator.AbstractHealthIndicator;
import jakarta.inject.Singleton;
import org.privface.agent.capture.CameraSupervisor;
import org.privface.agent.publish.Uplink;

/**
 * /health for the gateway: DOWN when the broker has not acknowledged anything for a minute while
 * records wait in the spool, or when cameras are configured and none of them is delivering
 * frames. Each camera's state (LIVE, STALLED, BACKOFF, ...) and the spool depth are in the details.
 */
@Singleton
public class GatewayHealth extends AbstractHealthIndicator<Map<String, Object>> {
    static final Duration BROKER_GRACE = Duration.ofMinutes(1);

    /** What the check reads: the cameras' states and the uplink (the pipeline offers both). */
    public interface Watched {
        List<CameraSupervisor.Status> cameraStatus();

        /** The gateway's uplink; null before the pipeline has started one. */
        Uplink uplink();
    }

    private final Watched pipeline;

    public GatewayHealth(Watched pipeline) {
        this.pipeline = pipeline;
    }

    @Override
    protected Map<String, Object> getHealthInformation() {
        Map<String, Object> details = new LinkedHashMap<>();
        List<CameraSupervisor.Status> cameras = pipeline.cameraStatus();
        boolean anyDelivering = false;
        boolean anyBroken = false;
        for (CameraSupervisor.Status s : cameras) {
            details.put("camera." + s.camera(), s.state().name());
            switch (s.state()) {
                case LIVE, FINISHED, CONNECTING -> anyDelivering = true;
                case STALLED, BACKOFF, FAILED -> anyBroken = true;
                default -> { }
            }
        }
        Uplink uplink = pipeline.uplink();
        boolean brokerOk = uplink == null || uplink.brokerHealthy(BROKER_GRACE);
        if (uplink != null) {
            details.put("spoolDepth", uplink.spool().depth());
            details.put("spoolDropped", uplink.spool().dropped());
            details.put("broker", brokerOk ? "acknowledging" : "no acknowledgement for " + BROKER_GRACE.toSeconds() + " s");
        }
        details.put("camerasDegraded", anyBroken);
        healthStatus = !brokerOk || (!cameras.isEmpty() && !anyDelivering) ? HealthStatus.DOWN : HealthStatus.UP;
        return details;
    }

    @Override
    protected String getName() {
        return "gateway";
    }
}
