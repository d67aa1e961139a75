package org.privface.recognizer.metrics;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micronaut.scheduling.annotation.Scheduled;
import jakarta.inject.Singleton;
import org.privface.recognizer.answer.GalleryService;
import org.privface.recognizer.status.StatusReader;
import org.privface.recognizer.model.ModelKey;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.recognizer.model.TrainedModel;
import org.privface.wire.avro.FaceGallery;

/**
 * The fleet as Prometheus gauges on the recognizer's /prometheus, for the alert rules in
 * k8s/monitoring: each gateway's last status report and spool (from the status topic, so a
 * gateway off the cluster, which no Prometheus scrapes, is still seen), and each site's model and
 * gallery against its enrollments. Refreshed on a schedule; a gateway or site that disappears
 * drops out of the next refresh.
 */
@Singleton
public class FleetMetrics {
    private final StatusReader status;
    private final ModelRegistry models;
    private final GalleryService galleries;
    private final MultiGauge lastReport;
    private final MultiGauge spoolDepth;
    private final MultiGauge spoolBytes;
    private final MultiGauge spoolDropped;
    private final MultiGauge modelTrained;
    private final MultiGauge modelPending;
    private final MultiGauge galleryBuilt;
    private final MultiGauge galleryPending;
    private final MultiGauge galleryTarget;
    private final MultiGauge galleryAccepted;

    public FleetMetrics(StatusReader status, ModelRegistry models, GalleryService galleries, MeterRegistry registry) {
        this.status = status;
        this.models = models;
        this.galleries = galleries;
        lastReport = gauge(registry, "privface.gateway.last.report.timestamp", "seconds",
                "When the gateway's latest status report was written (epoch seconds, the record's timestamp)");
        spoolDepth = gauge(registry, "privface.gateway.spool.depth", null, "Records in the gateway's store-and-forward spool");
        spoolBytes = gauge(registry, "privface.gateway.spool", "bytes", "Bytes in the gateway's store-and-forward spool");
        spoolDropped = gauge(registry, "privface.gateway.spool.dropped", null, "Records the gateway's spool dropped since it started");
        modelTrained = gauge(registry, "privface.model.trained.timestamp", "seconds", "When the site's model was trained (epoch seconds)");
        modelPending = gauge(registry, "privface.model.enrollments.pending", null,
                "Enrollment releases received since the site's model was trained");
        galleryBuilt = gauge(registry, "privface.gallery.built.timestamp", "seconds", "When the site's gallery was built (epoch seconds)");
        galleryPending = gauge(registry, "privface.gallery.enrollments.pending", null,
                "EMBEDDING enrollment releases received beyond those the site's gallery averages");
        galleryTarget = gauge(registry, "privface.gallery.calibrated.fpir", null,
                "The decoder false-positive rate the gallery's threshold was calibrated for, on public strangers");
        galleryAccepted = gauge(registry, "privface.gallery.calibration.accepted.ratio", null,
                "Share of the calibration strangers the gallery's threshold accepts");
    }

    private static MultiGauge gauge(MeterRegistry registry, String name, String unit, String help) {
        MultiGauge.Builder b = MultiGauge.builder(name).description(help);
        return (unit == null ? b : b.baseUnit(unit)).register(registry);
    }

    @Scheduled(fixedDelay = "${recognizer.fleet-metrics.interval:15s}", initialDelay = "2s")
    public void refresh() {
        List<MultiGauge.Row<?>> last = new ArrayList<>();
        List<MultiGauge.Row<?>> depth = new ArrayList<>();
        List<MultiGauge.Row<?>> bytes = new ArrayList<>();
        List<MultiGauge.Row<?>> dropped = new ArrayList<>();
        status.gateways().forEach((site, gws) -> gws.forEach((gw, latest) -> {
            Tags t = Tags.of("site", site, "gateway", gw);
            last.add(MultiGauge.Row.of(t, latest.current().receivedAt().toEpochMilli() / 1000.0));
            if (latest.current().body().get("uplink") instanceof Map<?, ?> up) {
                number(up.get("spoolDepth"), t, depth);
                number(up.get("spoolBytes"), t, bytes);
                number(up.get("spoolDropped"), t, dropped);
            }
        }));
        lastReport.register(last, true);
        spoolDepth.register(depth, true);
        spoolBytes.register(bytes, true);
        spoolDropped.register(dropped, true);

        List<MultiGauge.Row<?>> trained = new ArrayList<>();
        List<MultiGauge.Row<?>> pending = new ArrayList<>();
        Map<String, Integer> embeddingEnrollments = new java.util.TreeMap<>();
        for (Map.Entry<ModelKey, TrainedModel> e : models.models().entrySet()) {
            ModelKey k = e.getKey();
            Tags t = Tags.of("site", k.site(), "mechanism", k.mechanism(), "basis", k.basisId());
            trained.add(MultiGauge.Row.of(t, e.getValue().trainedAt().toEpochMilli() / 1000.0));
            int n = models.enrollmentCount(k);
            pending.add(MultiGauge.Row.of(t, Math.max(0, n - e.getValue().trainingSize())));
            if ("EMBEDDING".equals(k.mechanism())) {
                embeddingEnrollments.merge(k.site(), n, Math::max);
            }
        }
        modelTrained.register(trained, true);
        modelPending.register(pending, true);

        List<MultiGauge.Row<?>> built = new ArrayList<>();
        List<MultiGauge.Row<?>> gPending = new ArrayList<>();
        List<MultiGauge.Row<?>> target = new ArrayList<>();
        List<MultiGauge.Row<?>> accepted = new ArrayList<>();
        java.util.Set<String> sites = new java.util.TreeSet<>(status.gateways().keySet());
        models.models().keySet().forEach(k -> sites.add(k.site()));
        for (String site : sites) {
            FaceGallery g = galleries.gallery(site).orElse(null);
            if (g == null) {
                continue;
            }
            Tags t = Tags.of("site", site);
            built.add(MultiGauge.Row.of(t, g.getBuiltAt().toEpochMilli() / 1000.0));
            gPending.add(MultiGauge.Row.of(t, Math.max(0, embeddingEnrollments.getOrDefault(site, 0) - g.getEnrollmentReleases())));
            if (g.getCalibration() != null && g.getCalibration().getStrangers() > 0) {
                target.add(MultiGauge.Row.of(t, g.getCalibration().getTargetRate()));
                accepted.add(MultiGauge.Row.of(t, (double) g.getCalibration().getAccepted() / g.getCalibration().getStrangers()));
            }
        }
        galleryBuilt.register(built, true);
        galleryPending.register(gPending, true);
        galleryTarget.register(target, true);
        galleryAccepted.register(accepted, true);
    }

    private static void number(Object v, Tags t, List<MultiGauge.Row<?>> rows) {
        if (v instanceof Number n) {
            rows.add(MultiGauge.Row.of(t, n.doubleValue()));
        }
    }
}
