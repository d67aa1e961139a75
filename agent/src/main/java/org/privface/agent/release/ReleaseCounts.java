package org.privface.agent.release;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * One camera's counts of faces and releases. Two registries: {@code metrics}, what a scraper of
 * /prometheus reads, holds only what the face topics show anyway (releases and their ε);
 * {@code exactMetrics}, served only behind the control token ({@code /control/metrics}), holds the
 * exact face counts (faces, withheld, frames processed, releases per track).
 */
public final class ReleaseCounts {
    public final AtomicLong frames = new AtomicLong();
    public final AtomicLong faces = new AtomicLong();
    public final AtomicLong releases = new AtomicLong();
    public final AtomicLong withheld = new AtomicLong();
    /** Faces withheld because the tracker was full (a subset of {@link #withheld}). */
    public final AtomicLong untracked = new AtomicLong();
    /** Faces withheld because their person had no room: the segment releases nothing more. */
    public final AtomicLong heldByPerson = new AtomicLong();
    public final AtomicLong spoolDropped = new AtomicLong();
    /** Sum of the stated ε of the releases (records and answers): what the face topics show, not the grants. */
    private final DoubleAdder releasedEpsilon = new DoubleAdder();
    private final Counter framesCounter;
    private final Counter facesCounter;
    private final Counter releasesCounter;
    private final Counter withheldCounter;
    private final DistributionSummary epsilonPerRelease;
    private final DistributionSummary releasesPerTrack;
    private final Counter epsilonSpent;

    public ReleaseCounts(String site, String camera, MeterRegistry metrics, MeterRegistry exactMetrics) {
        // Processed frames depend on the faces in view (each costs detection and embedding time): exact only.
        framesCounter = Counter.builder("privface.agent.frames.processed").tag("site", site).tag("camera", camera)
                .description("frames the pipeline processed").register(exactMetrics);
        facesCounter = Counter.builder("privface.agent.faces.detected").tag("site", site).tag("camera", camera)
                .register(exactMetrics);
        releasesCounter = Counter.builder("privface.agent.releases").tag("site", site).tag("camera", camera)
                .description("perturbed faces released (spooled for the broker)").register(metrics);
        withheldCounter = Counter.builder("privface.agent.releases.withheld").tag("site", site).tag("camera", camera)
                .description("faces not released: their track's or person's budget was spent, or the tracker was full")
                .register(exactMetrics);
        epsilonPerRelease = DistributionSummary.builder("privface.agent.epsilon.per.face").tag("site", site)
                .tag("camera", camera).description("epsilon each released face spent").register(metrics);
        releasesPerTrack = DistributionSummary.builder("privface.agent.releases.per.track").tag("site", site)
                .tag("camera", camera).description("releases of each ended track").register(exactMetrics);
        epsilonSpent = Counter.builder("privface.agent.epsilon.spent").tag("site", site).tag("camera", camera)
                .description("sum of epsilon over all releases").register(metrics);
    }

    public void frame() {
        frames.incrementAndGet();
        framesCounter.increment();
    }

    public void face() {
        faces.incrementAndGet();
        facesCounter.increment();
    }

    public void withheld() {
        withheld.incrementAndGet();
        withheldCounter.increment();
    }

    /** A face withheld because the tracker was full. */
    public void untracked() {
        withheld();
        untracked.incrementAndGet();
    }

    /** A face withheld because its person had no room. */
    public void heldByPerson() {
        heldByPerson.incrementAndGet();
        withheld();
    }

    /** A record (vector or answer) released, stating {@code epsilon}. */
    public void released(double epsilon) {
        releases.incrementAndGet();
        releasesCounter.increment();
        epsilonPerRelease.record(epsilon);
        epsilonSpent.increment(epsilon);
        releasedEpsilon.add(epsilon);
    }

    /** A released record the spool's bound dropped (its ε is spent all the same). */
    public void spoolDropped() {
        spoolDropped.incrementAndGet();
    }

    public void trackEnded(long releasesOfTrack) {
        releasesPerTrack.record(releasesOfTrack);
    }

    /** The released records' stated ε: a grant the person ledger then refused is not in it. */
    public double releasedEpsilon() {
        return releasedEpsilon.sum();
    }
}
