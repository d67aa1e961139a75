package org.privface.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.MeterRegistry;
import io.micronaut.context.event.ApplicationEventListener;
import io.micronaut.runtime.server.event.ServerStartupEvent;
import io.micronaut.serde.ObjectMapper;
import jakarta.annotation.PreDestroy;
import jakarta.inject.Singleton;
import org.privface.agent.answer.QueryAnswerer;
import org.privface.agent.capture.CameraSettings;
import org.privface.agent.capture.CameraSupervisor;
import org.privface.agent.capture.FfmpegSource;
import org.privface.agent.capture.FrameSource;
import org.privface.agent.control.ControlSignatures;
import org.privface.agent.control.ControlTopic;
import org.privface.agent.control.GatewayHealth;
import org.privface.agent.control.GatewayState;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.link.GatewayLinking;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.policy.PolicyStore;
import org.privface.agent.policy.SitePolicy;
import org.privface.privacy.FaceMechanism;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.DropReason;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.Uplink;
import org.privface.agent.release.AnswerPlan;
import org.privface.agent.release.FaceInput;
import org.privface.agent.release.Mechanisms;
import org.privface.wire.KafkaClientProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway: enrollment, then one supervised thread per camera (capture → detect → track →
 * budget → perturb), all spooled to disk and forwarded to the broker by the {@link Uplink}.
 * The guarantee it reports is per person on this gateway where appearances are linked
 * ({@link GatewayLinking}), per track (ε per appearance per budget window) where they are not.
 */
@Singleton
public class AgentPipeline implements ApplicationEventListener<ServerStartupEvent>, GatewayHealth.Watched {
    private static final Logger LOG = LoggerFactory.getLogger(AgentPipeline.class);
    /** How long stop waits for a frame already in the pipeline: far above one frame's cost (~50 ms), under k8s' 30 s grace. */
    private static final java.time.Duration FRAME_IN_PROGRESS_WAIT = java.time.Duration.ofSeconds(20);

    private final AgentSettings settings;
    private final List<CameraSettings> cameraSettings;
    private final KafkaClientProperties kafka;
    private final MeterRegistry metrics;
    /** Face-dependent meters, served only behind the control token. */
    private final MeterRegistry exactMetrics;
    private final GatewayState state;
    private final ObjectMapper json;
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicBoolean ok = new AtomicBoolean(false);
    private final List<CameraSupervisor> supervisors = new ArrayList<>();
    private final Map<String, CameraWorker> workers = new LinkedHashMap<>();
    private volatile FacePublisher publisher;
    private volatile Uplink uplink;
    private volatile ControlTopic control;
    private volatile QueryAnswerer answers;
    private volatile OriginLog origins;
    private volatile Enrollment enrollment;
    private volatile org.privface.agent.erase.ErasureFollower erasures;
    /** The site's pseudonym secret (enrollment record keys); opened with the ledger. */
    private volatile org.privface.wire.erasure.PersonKeys personKeys;
    private volatile java.util.concurrent.ExecutorService reenroll;
    private volatile Thread main;
    /** One detector and embedder per network for every camera (agent.shared-models); null where off. */
    private volatile org.privface.agent.infer.SharedModels shared;

    public AgentPipeline(AgentSettings settings, List<CameraSettings> cameraSettings,
                         KafkaClientProperties kafka, MeterRegistry metrics, GatewayState state, ObjectMapper json,
                         org.privface.agent.control.ExactMetrics exactMetrics) {
        this.settings = settings;
        this.cameraSettings = cameraSettings;
        this.kafka = kafka;
        this.metrics = metrics;
        this.exactMetrics = exactMetrics.registry();
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
        Enrollment e = enrollment;
        return workers.values().stream().mapToLong(w -> w.releases.get()).sum() + (e == null ? 0 : e.published.get());
    }

    @Override
    public Uplink uplink() {
        return uplink;
    }

    @Override
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
        org.privface.agent.store.PrivateDirectory.make(settings.getDataDir(), true);
        FaceFinder enrollDetector = detector(null);
        LOG.info("face detector: {}", enrollDetector.describe());
        if (FaceInput.needsEmbedding(policy)) {
            // Where the network came from matters as much as what it is (docs/face-stack.md).
            LOG.info("face embedding: {}", settings.getEmbedder().describe());
        }
        Mechanisms.BasisFit.parse(settings.getBasisFit()); // refuses an unpaid enrollment fit before anything opens
        settings.getAnswer().checkTemplateEpsilon(policies.floor().epsilonMax());
        EnrollmentLedger ledger = settings.getEnrollFolder() == null ? null : openLedger(policies);
        Mechanisms mechanisms = new Mechanisms(settings, enrollDetector, ledger);
        FaceMechanism first = mechanisms.forRelease(policy, policy.budgetPolicy().epsilonPerRelease(policy.epsilon()));
        LOG.info("policy v{}: {} {} at epsilon {} per track ({}), {} per release; floor {}",
                policies.current().version(), policy.mechanism(), policy.mode(), policy.epsilon(), policy.budget(),
                first.epsilonPerFace(), policies.floor());

        publisher = new FacePublisher(kafka, settings.getSiteId(), new Properties());
        DiskSpool spool = DiskSpool.open(settings.getDataDir().resolve("spool"),
                DiskSpool.Options.of(settings.getSpool().getMaxBytes(), settings.getSpool().getDropPolicy()));
        if (spool.depth() > 0) {
            LOG.info("spool holds {} records from before; replaying them first", spool.depth());
        }
        uplink = new Uplink(publisher, spool, metrics, settings.getSiteId());
        origins = new OriginLog(settings.getLedger());
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

        if (ledger != null) {
            personKeys = openPersonKeys();
        }
        if (settings.isPublishEnrollments() && ledger != null) {
            startEnrollment(mechanisms, policies, ledger);
        } else if (ledger != null) {
            // Not publishing now, but the ledger on this data directory still says what its images spent.
            state.register("enrollment", () -> Enrollment.ledgerReport(ledger.stats()));
        }
        if (ledger != null && settings.getControl().isTopicEnabled() && settings.getErasure().isEnabled()) {
            startErasures(mechanisms, ledger);
        }

        boolean both = QueryAnswerer.Mode.parse(settings.getAnswer().getRelease()) == QueryAnswerer.Mode.BOTH;
        answers = QueryAnswerer.open(settings.getAnswer().getRelease(),
                settings.getAnswer().getGalleryKeys(), settings.getSiteId(), kafka, uplink,
                new org.privface.agent.answer.GalleryFollower.Options(settings.getDataDir().resolve(GALLERY_VERSION),
                        settings.getAnswer().getGalleryMaxAge(), java.time.Clock.systemUTC(),
                        answerEpsilon(mechanisms, policies, both)), settings.getAnswer().getTrackFaces());
        if (answers != null) {
            QueryAnswerer a = answers;
            state.register("answer", a::report);
            state.registerLocal("answer", a::localReport);
            LOG.info("query faces release: {}", a.release());
        }

        GatewayLinking.Decision link = GatewayLinking.open(settings.getLink().isEnabled(),
                settings.getLink().rule(settings.getEmbedder()),
                settings.getLink().getMinFaceSize(), settings.getLink().getMinScore(), settings.getLink().missing(settings.getEmbedder()),
                enrollDetector.landmarks(), settings.getDataDir().resolve(PERSONS), policy.window());
        LOG.info("appearance linking: {}", link.reason());
        state.register("linking", () -> link.on().map(GatewayLinking::report).orElseGet(() -> GatewayLinking.offReport(link.reason())));
        link.on().ifPresent(l -> state.registerLocal("linking", l::localReport));
        // Faces withheld for an unwritable person ledger: a face count, so exact only.
        link.on().ifPresent(l -> unrecorded(exactMetrics, "person", l.ledger(), p -> p.stats(java.time.Instant.now()).unrecorded()));
        if (settings.isSharedModels()) {
            shared = new org.privface.agent.infer.SharedModels(settings.getModelQueuePerCamera());
            // Requests served and dropped per camera depend on the faces in view: local only.
            state.registerLocal("inference", shared::localReport);
        }
        for (Camera c : cameras()) {
            FaceFinder finder = shared == null ? detector(c.settings())
                    : shared.detector(settings.detectorKey(c.settings()), c.name(), () -> detector(c.settings()));
            // An image folder is unrelated stills, each its own appearance (docs/agent.md): not linked.
            boolean linked = link.linking() != null && finder.landmarks() && !c.independentFrames();
            if (link.linking() != null && !linked) {
                LOG.warn("camera {}: {}, so its appearances are not linked: its records' budget is per track", c.name(),
                        c.independentFrames() ? "an image folder" : finder.describe() + " gives no landmarks");
            }
            CameraWorker w = new CameraWorker(c.name(), c.independentFrames(), finder, policies, mechanisms,
                    publisher, uplink, origins, metrics, exactMetrics, linked ? link.linking() : null);
            w.answers(answers);
            w.shared(shared);
            workers.put(c.name(), w);
            CameraSupervisor s = new CameraSupervisor(c.name(), () -> FrameSource.open(c.uri()), c.live(),
                    CameraSupervisor.Settings.defaults(), w::accept);
            supervisors.add(s);
            // Frames read: a live camera's at its own rate, whatever the faces (processed + dropped). Which of
            // them were processed and which dropped depends on the faces in view: exact only.
            io.micrometer.core.instrument.FunctionCounter.builder("privface.agent.frames", s,
                            x -> x.status().frames() + x.status().dropped())
                    .tag("site", settings.getSiteId()).tag("camera", c.name())
                    .description("frames read from the camera (processed or dropped)").register(metrics);
            io.micrometer.core.instrument.FunctionCounter.builder("privface.agent.frames.dropped", s, x -> x.status().dropped())
                    .tag("site", settings.getSiteId()).tag("camera", c.name())
                    .description("live frames dropped unprocessed because the pipeline was still busy").register(exactMetrics);
            if (shared != null) {
                io.micrometer.core.instrument.FunctionCounter.builder("privface.agent.inference.dropped", shared,
                                x -> x.dropped(c.name()))
                        .tag("site", settings.getSiteId()).tag("camera", c.name())
                        .description("requests to a shared model dropped because the camera's queue was full").register(exactMetrics);
            }
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
                // Read, not processed: the split between processed and dropped depends on the faces in view.
                c.put("frames", st.frames() + st.dropped());
                c.put("lastError", st.lastError() == null ? "" : st.lastError());
                c.putAll(workers.get(st.camera()).report());
                m.put(st.camera(), c);
            }
            return m;
        });
        // What all the noised counts together cost one person: each camera's and linking's, summed (a
        // person on every camera moves every camera's counts), so the record states its whole ε.
        List<org.privface.privacy.StatusCounts> counted = new ArrayList<>();
        workers.values().forEach(w -> counted.add(w.counts()));
        link.on().ifPresent(l -> counted.add(l.counts()));
        state.register("statusCounts", () -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("unit", link.on().isPresent() ? "person on this gateway (a track on cameras that do not link)" : "track");
            m.put("epsilonPerPersonPerWindow", counted.stream().mapToDouble(c -> c.epsilonPerUnitPerSpan()).sum());
            m.put("epsilonPerPersonPerDay", counted.stream().mapToDouble(c -> c.epsilonPerUnitPerSpan()).sum());
            m.put("covers", "the noised counts of this report (cameras.*.noised, linking.noised), any window or 24 hours");
            return m;
        });
        state.registerLocal("cameras", () -> {
            Map<String, Object> m = new LinkedHashMap<>();
            workers.forEach((name, w) -> m.put(name, w.localReport()));
            for (CameraSupervisor s : supervisors) {
                Object local = m.get(s.status().camera());
                if (local instanceof Map<?, ?> lm) {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> c = (Map<String, Object>) lm;
                    c.put("framesDropped", s.status().dropped());
                }
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
                // The stream is over: its tracks end, and the answers they held go out.
                workers.get(s.status().camera()).finish();
            }
            if (!uplink.drain(Duration.ofSeconds(120))) {
                throw new IllegalStateException(spool.depth() + " records still spooled: the broker did not acknowledge them");
            }
            LOG.info("done: {} faces detected, {} records acknowledged", facesDetected(), uplink.acknowledged());
        }
    }

    /**
     * Publishes the enrollment folder as the ledger allows, now and after every policy change.
     * Each image's ledger entry remembers the form it was last released in, so a restart or a
     * change that leaves the form as it was releases nothing. Changes are handled one at a time on
     * one thread, each with the policy in force when it runs, so the last change always wins.
     */
    private void startEnrollment(Mechanisms mechanisms, PolicyStore policies, EnrollmentLedger ledger)
            throws InterruptedException {
        Enrollment en = new Enrollment(settings.getEnrollFolder(), mechanisms, publisher, uplink,
                ledger, settings.getSiteId(), personKeys);
        enrollment = en;
        state.register("enrollment", en::report);
        unrecorded("enrollment", en, e -> e.unrecorded.get());
        reenroll = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "agent-reenroll");
            t.setDaemon(true);
            return t;
        });
        // Changes replayed from the control topic at start are not acted on one by one: the first
        // publication below uses the policy they end at. Later changes queue behind it.
        AtomicBoolean replayed = new AtomicBoolean();
        policies.onChange(v -> {
            if (replayed.get()) {
                try {
                    reenroll.execute(() -> {
                        try {
                            en.publish(policies.current().policy());
                        } catch (RuntimeException e) {
                            LOG.error("re-enrollment failed: {}", e.toString());
                        }
                    });
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    LOG.info("policy v{} arrived while the agent stops: no re-enrollment", v.version());
                }
            }
        });
        ControlTopic c = control;
        if (c != null && !c.awaitReplay(REPLAY_WAIT)) {
            // The cap still holds; the cost of going on is that a later replayed change may re-release.
            LOG.warn("control topic not replayed within {}: enrolling under the policy in force now", REPLAY_WAIT);
        }
        replayed.set(true);
        en.publish(policies.current().policy());
    }

    /**
     * The site's pseudonym secret: {@code agent.erasure.secret-file} (every gateway of a site and
     * the operator share it), else one made in the data directory on first start, which serves a
     * site with one gateway only: the log says so.
     */
    private org.privface.wire.erasure.PersonKeys openPersonKeys() throws IOException {
        Path file = settings.getErasure().getSecretFile();
        if (file != null) {
            return org.privface.wire.erasure.PersonKeys.load(file);
        }
        Path own = settings.getDataDir().resolve(PSEUDONYM_SECRET);
        if (!Files.exists(own)) {
            LOG.warn("agent.erasure.secret-file unset: made a pseudonym secret at {}; a site with several gateways must"
                    + " give them all the same one, and the operator needs it to ask for an erasure", own);
        }
        return org.privface.wire.erasure.PersonKeys.loadOrCreate(own);
    }

    /** Follows the site's erasure topic (docs/operations.md, "Forgetting a person"). */
    private void startErasures(Mechanisms mechanisms, EnrollmentLedger ledger) throws IOException {
        org.privface.agent.erase.GatewayErasure er = new org.privface.agent.erase.GatewayErasure(settings.getSiteId(),
                settings.getEnrollFolder(), ledger, personKeys, publisher, uplink, settings.getErasure().getWait());
        erasures = new org.privface.agent.erase.ErasureFollower(kafka, settings.getSiteId(), state.gatewayId(),
                ControlSignatures.trustedKeys(settings.getControl()), settings.getControl().getMaxClockSkew(),
                settings.getDataDir(), (person, issuedAt) -> {
                    Enrollment en = enrollment;
                    if (en != null) {
                        return en.erase(er, person, issuedAt);
                    }
                    try {
                        return er.erase(person, issuedAt);
                    } finally {
                        mechanisms.forgetEnrollment();
                    }
                });
        // Local only (REST status): the audit trail of erasures is the erasure topic itself.
        state.registerLocal("erasure", () -> Map.of("completed", erasures.completed(), "refused", erasures.refused()));
    }

    /** Counts, by ledger, the releases withheld because their charge could not be written (docs/reliability.md). */
    private <T> void unrecorded(String ledger, T source, java.util.function.ToDoubleFunction<T> count) {
        unrecorded(metrics, ledger, source, count);
    }

    private <T> void unrecorded(MeterRegistry registry, String ledger, T source, java.util.function.ToDoubleFunction<T> count) {
        io.micrometer.core.instrument.FunctionCounter.builder("privface.agent.releases.withheld.unrecorded", source, count)
                .tag("site", settings.getSiteId()).tag("ledger", ledger)
                .description("releases withheld because the ledger could not record their charge (full or failing disk)")
                .register(registry);
    }

    /**
     * The enrollment ledger, opened before any basis is fitted: a private fit is charged to it.
     * Null when it cannot be opened; then nothing is enrolled and no basis is fitted on the
     * enrollment (the cameras go on only where the policy needs no such fit).
     */
    private EnrollmentLedger openLedger(PolicyStore policies) {
        Path file = settings.getDataDir().resolve(ENROLLMENT_LEDGER);
        try {
            Double cap = settings.getFloor().getEnrollmentEpsilonCap();
            return EnrollmentLedger.open(file, cap != null ? cap : Mechanisms.defaultEnrollmentCap(settings,
                    policies.floor().epsilonMax()));
        } catch (IOException | RuntimeException e) {
            // Releasing without the ledger could pass an image's cap: enrollment stops, the cameras go on.
            LOG.error("enrollments are not published: {}", e.getMessage());
            state.register("enrollment", () -> Map.of("error", String.valueOf(e.getMessage())));
            return null;
        }
    }

    /** The person ledger's directory in the data directory: the only place embeddings are written. */
    static final String PERSONS = "persons";

    static final Duration REPLAY_WAIT = Duration.ofSeconds(30);

    /** The pseudonym secret made on a gateway whose configuration names none. */
    static final String PSEUDONYM_SECRET = "pseudonym-secret";

    /** The enrollment ledger's file name in the data directory. */
    static final String ENROLLMENT_LEDGER = "enrollment-ledger.txt";

    /** The newest gallery version this gateway installed, kept so a restart takes nothing older. */
    static final String GALLERY_VERSION = "gallery-version";

    /**
     * The ε per answer under the current policy, worked out once per policy version: what the
     * gateway reports for its site's calibration and checks a gallery's calibration against.
     */
    private static java.util.function.DoubleSupplier answerEpsilon(Mechanisms mechanisms, PolicyStore policies,
                                                                   boolean both) {
        double[] cached = {Double.NaN};
        long[] version = {Long.MIN_VALUE};
        return () -> {
            PolicyStore.Versioned v = policies.current();
            synchronized (cached) {
                if (v.version() != version[0]) {
                    AnswerPlan p = AnswerPlan.of(mechanisms, v.policy(), mechanisms.chargedBudget(v.policy()), both,
                            java.util.Optional.empty(), null);
                    cached[0] = p.ok() ? p.answerEpsilon() : Double.NaN;
                    version[0] = v.version();
                }
                return cached[0];
            }
        };
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

    private Camera camera(String name, String uri, CameraSettings s) {
        boolean folder = Files.isDirectory(Path.of(uri.startsWith("file:") ? uri.substring(5) : uri));
        return new Camera(name, uri, FfmpegSource.kindOf(uri).live(), folder && settings.folderStills(), s);
    }

    private FaceFinder detector(CameraSettings c) {
        return settings.faceFinder(c);
    }

    @PreDestroy
    void stop() throws InterruptedException, IOException {
        supervisors.forEach(CameraSupervisor::stop);
        for (CameraSupervisor s : supervisors) {
            // A frame still in the pipeline has been charged; its record must reach the spool before it closes.
            if (!s.awaitFrameInProgress(FRAME_IN_PROGRESS_WAIT)) {
                LOG.error("camera {}: a frame was still in the pipeline {} after stop; its record, if it is made, "
                        + "finds the spool closed and is lost", s.status().camera(), FRAME_IN_PROGRESS_WAIT);
            } else {
                // No frame runs on it any more: the answers its live tracks hold are charged, so they go out.
                workers.get(s.status().camera()).finish();
            }
        }
        Thread m = main;
        if (m != null) {
            m.join(10_000);
        }
        if (shared != null) {
            shared.close();
        }
        if (control != null) {
            control.close();
        }
        if (erasures != null) {
            erasures.close();
        }
        if (answers != null) {
            answers.close();
        }
        java.util.concurrent.ExecutorService r = reenroll;
        if (r != null) {
            r.shutdownNow();
            r.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
        }
        if (uplink != null) {
            uplink.close();
            uplink.spool().close();
        }
        if (publisher != null) {
            publisher.close();
        }
        if (origins != null) {
            origins.close();
        }
    }
}
