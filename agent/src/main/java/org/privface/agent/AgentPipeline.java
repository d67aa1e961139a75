package org.privface.agent;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.annotation.Property;
import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.runtime.server.event.ServerStartupEvent;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.privface.agent.capture.Frame;
import org.privface.agent.capture.FrameSource;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.privacy.EigenBasis;
import org.privface.agent.privacy.PeepMechanism;
import org.privface.agent.privacy.Release;
import org.privface.agent.privacy.SecureLaplace;
import org.privface.agent.privacy.SensitivityMode;
import org.privface.agent.publish.FacePublisher;
import org.privface.wire.avro.PerturbedFace;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Capture → detect → PEEP → publish, on its own thread. Each detected face is one release; its
 * track id is unique to that detection, so the reported ε is the ε of that one release.
 */
@Singleton
public class AgentPipeline implements ApplicationEventListener<ServerStartupEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(AgentPipeline.class);

    private final AgentSettings settings;
    private final String bootstrapServers;
    private final MeterRegistry metrics;
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicBoolean ok = new AtomicBoolean(false);
    private final AtomicBoolean stopping = new AtomicBoolean(false);
    private final AtomicLong facesDetected = new AtomicLong();
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private volatile Thread worker;

    public AgentPipeline(AgentSettings settings, @Property(name = "kafka.bootstrap.servers") String bootstrapServers,
                         MeterRegistry metrics) {
        this.settings = settings;
        this.bootstrapServers = bootstrapServers;
        this.metrics = metrics;
    }

    @Override
    public void onApplicationEvent(ServerStartupEvent event) {
        worker = new Thread(this::runGuarded, "agent-pipeline");
        worker.start();
    }

    /** Waits for the sources to be exhausted; true when everything was published. */
    public boolean awaitCompletion() throws InterruptedException {
        done.await();
        return ok.get();
    }

    public long facesDetected() {
        return facesDetected.get();
    }

    public long published() {
        return published.get();
    }

    @PreDestroy
    void stop() throws InterruptedException {
        stopping.set(true);
        Thread w = worker;
        if (w != null) {
            w.join(10_000);
        }
    }

    private void runGuarded() {
        try {
            run();
            ok.set(true);
        } catch (Exception e) {
            LOG.error("agent pipeline failed: {}", e.toString());
        } finally {
            done.countDown();
        }
    }

    private void run() throws Exception {
        SensitivityMode mode = SensitivityMode.fromWireName(settings.getSensitivityMode());
        FaceDetector detector = new FaceDetector(settings.getCascade(), settings.getScaleFactor(),
                settings.getMinNeighbors(), settings.getMinFaceSize());
        LabelledFaces enroll = settings.getEnrollFolder() == null ? null
                : FaceDatasets.detected(settings.getEnrollFolder(), detector);
        EigenBasis basis = basis(enroll);
        PeepMechanism peep = new PeepMechanism(basis, mode, settings.getEpsilon(), new SecureLaplace());
        if (mode.paperReproduction()) {
            LOG.warn("sensitivity mode {} reproduces a paper: each face spends epsilon {} in total, not {}",
                    mode.wireName(), peep.epsilonPerFace(), settings.getEpsilon());
        }
        LOG.info("PEEP ready: basis {} ({} components), mode {}, epsilon per face {}",
                basis.id(), basis.dimension(), mode.wireName(), peep.epsilonPerFace());

        Counter detected = Counter.builder("privface.agent.faces.detected").tag("site", settings.getSiteId())
                .tag("camera", settings.getCameraId()).register(metrics);
        Counter sent = Counter.builder("privface.agent.records.published").tag("site", settings.getSiteId())
                .tag("mechanism", "PEEP").tag("sensitivity_mode", mode.wireName()).register(metrics);
        DistributionSummary spent = DistributionSummary.builder("privface.agent.epsilon.per.face")
                .description("epsilon spent per published face").tag("site", settings.getSiteId())
                .tag("sensitivity_mode", mode.wireName()).register(metrics);

        try (FacePublisher publisher = new FacePublisher(bootstrapServers, settings.getSiteId(), new Properties());
             Ledger ledger = new Ledger(settings.getLedger())) {
            // Counts each acknowledged release, or the failure; no per-record future is kept, so a
            // camera that streams for months holds no growing list.
            java.util.function.Function<Release, java.util.function.BiConsumer<Object, Throwable>> acked =
                    rel -> (md, error) -> {
                        if (error != null) {
                            failed.incrementAndGet();
                        } else {
                            published.incrementAndGet();
                            sent.increment();
                            spent.record(rel.epsilonPerFace());
                        }
                    };
            if (enroll != null && settings.isPublishEnrollments()) {
                for (int i = 0; i < enroll.size() && !stopping.get(); i++) {
                    String label = enroll.names().get(enroll.labels()[i]);
                    // Releases of one enrolled image share a track: together they spend releases × ε.
                    String track = "enroll-" + UUID.randomUUID();
                    for (int r = 0; r < settings.getEnrollReleases(); r++) {
                        Release rel = peep.perturb(enroll.faces()[i]);
                        PerturbedFace rec = publisher.record(rel, "enrollment", track, Instant.now(), label);
                        publisher.send(rec).whenComplete(acked.apply(rel));
                    }
                }
                LOG.info("enrollment: {} faces of {} people, {} release(s) each", enroll.size(), enroll.names().size(),
                        settings.getEnrollReleases());
            }
            if (settings.getSource() != null) {
                try (FrameSource source = FrameSource.open(settings.getSource())) {
                    Optional<Frame> next;
                    while (!stopping.get() && (next = source.next()).isPresent()) {
                        try (Frame frame = next.get()) {
                            // One grey conversion per frame, shared by detection and every crop.
                            Mat grey = FaceCrops.grey(frame.image());
                            try {
                                for (Rect box : detector.detect(grey)) {
                                    Optional<double[]> face = FaceCrops.crop(grey, box);
                                    if (face.isEmpty()) {
                                        continue;
                                    }
                                    facesDetected.incrementAndGet();
                                    detected.increment();
                                    Release rel = peep.perturb(face.get());
                                    PerturbedFace rec = publisher.record(rel, settings.getCameraId(),
                                            "track-" + UUID.randomUUID(), frame.capturedAt(), null);
                                    ledger.write(rec.getEventId(), frame.origin());
                                    publisher.send(rec).whenComplete(acked.apply(rel));
                                }
                            } finally {
                                if (grey != frame.image()) {
                                    grey.release();
                                }
                            }
                        }
                    }
                    if (source.skipped() > 0) {
                        LOG.warn("{} frames could not be decoded and were skipped", source.skipped());
                    }
                }
            }
            // flush() returns once every send so far has been acknowledged or has failed.
            publisher.flush();
        }
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " records could not be published");
        }
        LOG.info("done: {} faces detected in frames, {} records published", facesDetected.get(), published.get());
    }

    private EigenBasis basis(LabelledFaces enroll) throws IOException {
        Path file = settings.getBasisFile();
        if (file != null && Files.exists(file)) {
            return EigenBasis.load(file);
        }
        if (enroll == null) {
            throw new IllegalStateException("no basis: set agent.basis-file to an existing basis or agent.enroll-folder to fit one");
        }
        EigenBasis b = EigenBasis.fit(enroll.faces(), settings.getComponents(), FaceCrops.WIDTH, FaceCrops.HEIGHT);
        if (file != null) {
            b.save(file);
        }
        return b;
    }

    /** eventId,origin lines for offline evaluation; a no-op without a path. */
    private static final class Ledger implements AutoCloseable {
        private final BufferedWriter out;

        Ledger(Path path) throws IOException {
            this.out = path == null ? null : Files.newBufferedWriter(path);
        }

        void write(String eventId, String origin) {
            if (out == null) {
                return;
            }
            try {
                out.write(eventId + "," + origin.replace(',', '_') + "\n");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() throws IOException {
            if (out != null) {
                out.close();
            }
        }
    }
}
