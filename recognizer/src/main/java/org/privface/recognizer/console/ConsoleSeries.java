package org.privface.recognizer.console;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.scheduling.annotation.Scheduled;
import io.micronaut.serde.annotation.Serdeable;
import jakarta.inject.Singleton;
import org.privface.recognizer.api.SiteController;
import org.privface.recognizer.status.StatusReader;

/**
 * Per-site time series for the console, sampled every {@code recognizer.console.sample-interval}:
 * the gateways' frames, faces and releases per second (from their reports), and the
 * recognizer's own records consumed, identified and unknown per second (from its meters).
 */
@Singleton
public class ConsoleSeries {
    @Serdeable
    public record Sample(Instant at, double framesPerSec, double facesPerSec, double releasesPerSec,
                         double recordsPerSec, double identifiedPerSec, double unknownPerSec) {
    }

    private final StatusReader status;
    private final MeterRegistry meters;
    private final ConsoleSettings settings;
    private final Map<String, Deque<Sample>> bySite = new TreeMap<>();
    /** The recognizer's counters at the last sample: records, identified, unknown. */
    private final Map<String, double[]> lastCounts = new TreeMap<>();
    private Instant lastAt;

    public ConsoleSeries(StatusReader status, MeterRegistry meters, ConsoleSettings settings) {
        this.status = status;
        this.meters = meters;
        this.settings = settings;
    }

    @Scheduled(fixedDelay = "${recognizer.console.sample-interval:5s}", initialDelay = "1s")
    synchronized void sample() {
        Instant now = Instant.now();
        double dt = lastAt == null ? 0 : (now.toEpochMilli() - lastAt.toEpochMilli()) / 1000.0;
        lastAt = now;
        var gateways = status.gateways();
        java.util.Set<String> sites = new java.util.TreeSet<>(gateways.keySet());
        sites.addAll(SiteController.sitesMetered(meters));
        for (String site : sites) {
            double frames = 0;
            double faces = 0;
            double releases = 0;
            long liveAfter = now.toEpochMilli() - settings.getLiveWithin().toMillis();
            for (StatusReader.Latest l : gateways.getOrDefault(site, Map.of()).values()) {
                if (l.current().receivedAt().toEpochMilli() >= liveAfter) {
                    frames += StatusReader.rate(l, "frames");
                    faces += StatusReader.rate(l, "noised.seen");
                    releases += StatusReader.rate(l, "releases");
                }
            }
            double[] counts = {
                count("privface.recognizer.enrollments", site, null) + count("privface.recognizer.results", site, null)
                        + count("privface.recognizer.dead.letters", site, null),
                count("privface.recognizer.results", site, "identified"),
                count("privface.recognizer.results", site, "unknown")};
            double[] before = lastCounts.put(site, counts);
            double[] perSec = new double[3];
            if (before != null && dt > 0) {
                for (int i = 0; i < 3; i++) {
                    perSec[i] = Math.max(0, counts[i] - before[i]) / dt;
                }
            }
            Deque<Sample> d = bySite.computeIfAbsent(site, s -> new ArrayDeque<>());
            d.addLast(new Sample(now, frames, faces, releases, perSec[0], perSec[1], perSec[2]));
            while (d.size() > settings.getSamplesKept()) {
                d.removeFirst();
            }
        }
    }

    public synchronized Map<String, List<Sample>> series() {
        Map<String, List<Sample>> m = new TreeMap<>();
        bySite.forEach((s, d) -> m.put(s, new ArrayList<>(d)));
        return m;
    }

    private double count(String name, String site, String outcome) {
        return SiteController.count(meters, name, site, outcome);
    }
}
