package org.privface.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.runtime.server.event.ServerStartupEvent;
import io.micronaut.serde.ObjectMapper;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.privface.agent.capture.CameraSettings;
import org.privface.agent.capture.CameraSupervisor;
import org.privface.agent.capture.FfmpegSource;
import org.privface.agent.capture.FrameSource;
import org.privface.agent.control.ControlSignatures;
import org.privface.agent.control.ControlTopic;
import org.privface.agent.control.GatewayState;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.policy.PolicyStore;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.privacy.FaceMechanism;
import org.privface.agent.privacy.Release;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.DropReason;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.Uplink;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.TrackRelease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway: enrollment, then one supervised thread per camera (capture → detect → track →
 * budget → perturb), all spooled to disk and forwarded to the broker by the {@link Uplink}.
 * The guarantee it reports is per track: ε per appearance of a person per budget window.
 */
@Singleton
public class AgentPipeline implements ApplicationEventListener<ServerStartupEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(AgentPipeline.class);

    private final AgentSettings settings;
    private final List<CameraSettings> cameraSettings;
    private final KafkaClientProperties kafka;
    private final MeterRegistry metrics;
    private final GatewayState state;
    private final ObjectMapper json;
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicBoolean ok = new AtomicBoolean(false);
    private final AtomicLong enrolled = new AtomicLong();
    private final List<CameraSupervisor> supervisors = new ArrayList<>();
    private final Map<String, CameraWorker> workers = new LinkedHashMap<>();
    private volatile FacePublisher publisher;
    private volatile Uplink uplink;
    private volatile ControlTopic control;
    private volatile Ledger ledger;
    private volatile Thread main;

    public AgentPipeline(AgentSettings settings, List<CameraSettings> cameraSettings,
                         KafkaClientProperties kafka, MeterRegistry metrics, GatewayState state, ObjectMapper json) {
        this.settings = settings;
        this.cameraSettings = cameraSettings;
        this.kafka = kafka;
        this.metrics = metrics;
        this.state = state;
        this.json = json;
    }

    @Override
    public void onApplicationEvent(ServerStartupEvent event) {
        main = new Thread(this::runGuarded, "agent-pipeline");
        main.start();
    }

    /**
     * Waits until every file source is read and every record acknowledged (with live cameras:
     * until the cameras are started); true without errors.
     */
    public boolean awaitCompletion() throws InterruptedException {
        done.await();
        return ok.get();
    }

    public long facesDetected() {
        return workers.values().stream().mapToLong(w -> w.faces.get()).sum();
    }

    /** Records the broker acknowledged. */
    public long published() {
        Uplink u = uplink;
        return u == null ? 0 : u.acknowledged();
    }

    public long releases() {
        return workers.values().stream().mapToLong(w -> w.releases.get()).sum() + enrolled.get();
    }

    public Uplink uplink() {
        return uplink;
    }

    public List<CameraSupervisor.Status> cameraStatus() {
        return supervisors.stream().map(CameraSupervisor::status).toList();
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
        PolicyStore policies = state.policies();
        SitePolicy policy = policies.current().policy();
        Files.createDirectories(settings.getDataDir());
        FaceDetector enrollDetector = detector(null);
        Mechanisms mechanisms = new Mechanisms(settings, enrollDetector);
        FaceMechanism first = mechanisms.forRelease(policy, policy.budgetPolicy().epsilonPerRelease(policy.epsilon()));
        LOG.info("policy v{}: {} {} at epsilon {} per track ({}), {} per release; floor [{}, {}]",
                policies.current().version(), policy.mechanism(), policy.mode(), policy.epsilon(), policy.budget(),
                first.epsilonPerFace(), policies.floor().epsilonMin(), policies.floor().epsilonMax());

        publisher = new FacePublisher(kafka, settings.getSiteId(), new Properties());
        DiskSpool spool = DiskSpool.open(settings.getDataDir().resolve("spool"),
                DiskSpool.Options.of(settings.getSpool().getMaxBytes(), settings.getSpool().getDropPolicy()));
        if (spool.depth() > 0) {
            LOG.info("spool holds {} records from before; replaying them first", spool.depth());
        }
        uplink = new Uplink(publisher, spool, metrics, settings.getSiteId());
        ledger = new Ledger(settings.getLedger());
        state.register("uplink", () -> {
            Map<String, Object> byReason = new LinkedHashMap<>();
            for (DropReason r : DropReason.values()) {
                byReason.put(r.name(), spool.dropped(r));
            }
            return Map.of("spoolDepth", spool.depth(), "spoolBytes", spool.bytes(), "spoolDropped", spool.dropped(),
                    "spoolDroppedByReason", byReason, "acknowledged", uplink.acknowledged(), "deliveryFailures",
                    uplink.failures(), "brokerHealthy", uplink.brokerHealthy(Duration.ofSeconds(30)));
        });
        if (settings.getControl().isTopicEnabled()) {
            control = new ControlTopic(kafka, state, json, settings.getControl().getReportInterval(),
                    ControlSignatures.of(settings, json));
        }

        if (settings.isPublishEnrollments()) {
            enroll(mechanisms, policy);
            // Enrollments live in the mechanism's feature space, so a new mechanism or mode re-enrolls.
            policies.onChange(v -> {
                SitePolicy p = v.policy();
                if (p.mechanism() != policy.mechanism() || !p.mode().equals(policy.mode())) {
                    Thread t = new Thread(() -> enroll(mechanisms, p), "agent-reenroll");
                    t.setDaemon(true);
                    t.start();
                }
            });
        }

        for (Camera c : cameras()) {
            CameraWorker w = new CameraWorker(c.name(), c.independentFrames(), detector(c.settings()), policies, mechanisms,
                    publisher, uplink, ledger, metrics);
            workers.put(c.name(), w);
            CameraSupervisor s = new CameraSupervisor(c.name(), () -> FrameSource.open(c.uri()), c.live(),
                    CameraSupervisor.Settings.defaults(), w::accept);
            supervisors.add(s);
        }
        state.register("cameras", () -> {
            Map<String, Object> m = new LinkedHashMap<>();
            for (CameraSupervisor s : supervisors) {
                CameraSupervisor.Status st = s.status();
                Map<String, Object> c = new LinkedHashMap<>();
                c.put("state", st.state().name());
                c.put("since", st.since().toString());
                c.put("lastFrameAt", st.lastFrameAt() == null ? "" : st.lastFrameAt().toString());
                c.put("reconnects", st.reconnects());
                c.put("lastError", st.lastError() == null ? "" : st.lastError());
                c.putAll(workers.get(st.camera()).report());
                m.put(st.camera(), c);
            }
            return m;
        });
        supervisors.forEach(CameraSupervisor::start);
        LOG.info("{} camera(s) started", supervisors.size());

        // With only files and folders, the run has an end: wait for it and for the broker's acks.
        // Live cameras run until the agent stops.
        if (settings.isExitWhenDone() || cameras().stream().noneMatch(Camera::live)) {
            for (CameraSupervisor s : supervisors) {
                s.awaitTermination(Duration.ofDays(365));
            }
            if (!uplink.drain(Duration.ofSeconds(120))) {
                throw new IllegalStateException(spool.depth() + " records still spooled: the broker did not acknowledge them");
            }
            LOG.info("done: {} faces detected, {} records acknowledged", facesDetected(), uplink.acknowledged());
        }
    }

    /** Publishes the enrollment folder, each image a track of enroll-releases releases at ε each. */
    private void enroll(Mechanisms mechanisms, SitePolicy policy) {
        LabelledFaces faces = mechanisms.enrollment(Mechanisms.shape(policy));
        if (faces == null) {
            return;
        }
        FaceMechanism m = mechanisms.forRelease(policy, policy.epsilon());
        int k = settings.getEnrollReleases();
        Instant windowStart = Instant.now();
        for (int i = 0; i < faces.size(); i++) {
            String label = faces.names().get(faces.labels()[i]);
            String track = "enroll-" + UUID.randomUUID();
            for (int r = 1; r <= k; r++) {
                Release rel = m.perturb(faces.faces()[i]);
                PerturbedFace rec = publisher.record(rel, "enrollment", track, Instant.now(), label,
                        TrackRelease.newBuilder().setReleaseIndex(r).setEpsilonSpentInWindow(r * rel.epsilonPerFace())
                                .setEpsilonBudget(k * rel.epsilonPerFace()).setBudgetPolicy("enrollment:k=" + k)
                                .setWindowStartMillis(windowStart).build());
                if (uplink.submit(rec)) {
                    enrolled.incrementAndGet();
                }
            }
        }
        LOG.info("enrollment: {} faces of {} people, {} release(s) each at epsilon {} ({} {})", faces.size(),
                faces.names().size(), k, m.epsilonPerFace(), policy.mechanism(), policy.mode());
    }

    record Camera(String name, String uri, boolean live, boolean independentFrames, CameraSettings settings) {
    }

    private List<Camera> cameras() {
        List<Camera> out = new ArrayList<>();
        for (CameraSettings c : cameraSettings) {
            if (c.getUrl() == null) {
                throw new IllegalArgumentException("camera " + c.camera() + " has no url");
            }
            out.add(camera(c.camera(), c.getUrl(), c));
        }
        if (settings.getSource() != null) {
            out.add(camera(settings.getCameraId(), settings.getSource(), null));
        }
        return out;
    }

    private static Camera camera(String name, String uri, CameraSettings s) {
        boolean folder = Files.isDirectory(Path.of(uri.startsWith("file:") ? uri.substring(5) : uri));
        return new Camera(name, uri, FfmpegSource.kindOf(uri).live(), folder, s);
    }

    private FaceDetector detector(CameraSettings c) {
        return new FaceDetector(c != null && c.getCascade() != null ? c.getCascade() : settings.getCascade(),
                c != null && c.getScaleFactor() != null ? c.getScaleFactor() : settings.getScaleFactor(),
                c != null && c.getMinNeighbors() != null ? c.getMinNeighbors() : settings.getMinNeighbors(),
                c != null && c.getMinFaceSize() != null ? c.getMinFaceSize() : settings.getMinFaceSize(),
                c != null && c.getMaxDetectWidth() != null ? c.getMaxDetectWidth() : settings.getMaxDetectWidth());
    }

    @PreDestroy
    void stop() throws InterruptedException, IOException {
        supervisors.forEach(CameraSupervisor::stop);
        Thread m = main;
        if (m != null) {
            m.join(10_000);
        }
        if (control != null) {
            control.close();
        }
        if (uplink != null) {
            uplink.close();
            uplink.spool().close();
        }
        if (publisher != null) {
            publisher.close();
        }
        if (ledger != null) {
            ledger.close();
        }
    }
}
