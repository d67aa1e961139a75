package org.privface.agent.control;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.inject.Singleton;

/**
 * The gateway's face-dependent meters (faces detected, faces withheld, frames processed, releases
 * per track, faces withheld for an unwritable ledger): exact counts that would show when and how
 * many faces were in view, and which the person ledger held. They are kept out of the registry
 * {@code /prometheus} serves without a token, and served in the same text format only behind the
 * control token ({@code /control/metrics}, {@link ControlController}). A registry of its own
 * rather than a filter on the shared one: nothing registered here can reach the open endpoint.
 */
@Singleton
public class ExactMetrics {
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    public MeterRegistry registry() {
        return registry;
    }

    /** The Prometheus text of the exact meters. */
    public String scrape() {
        return registry.scrape();
    }
}
