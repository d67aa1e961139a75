package org.privface.agent;

import java.nio.file.Path;
import java.time.Duration;

import io.micronaut.context.annotation.ConfigurationProperties;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;

/**
 * The agent's configuration, bound from {@code agent.*} in application.yml, AGENT_* variables or
 * a Micronaut environment's file. These are the global defaults; {@code agent.sites.<site>} and
 * {@code agent.cameras.<camera>} override them (see docs/agent.md).
 */
@ConfigurationProperties("agent")
public class AgentSettings {
    private String siteId = "demo-site";
    /** This gateway's name in status reports; the host name unless set. */
    private String gatewayId = defaultGatewayId();
    private String cameraId = "cam-1";
    /** A single camera, for simple set-ups: image folder, video file, rtsp:// or http:// URL, or /dev/videoN. */
    private String source;
    /**
     * How an image-folder camera's images are read: {@code stills} (unrelated photos, each face its
     * own appearance) or {@code sequence} (one camera's frames in path order, tracked like a video's).
     */
    private String folderFrames = "stills";
    /** Folder-per-person faces on the gateway: fits the basis and, if enabled, enrolls them. */
    private Path enrollFolder;
    /** A PEEP basis fitted on faces that are not enrolled here; read when basis-fit is public-file. */
    private Path basisFile;
    /**
     * Where the pixel mechanisms' basis comes from: private (a μ-GDP fit on the enrollment, charged
     * to each enrolled image) or public-file (basis-file). "enrollment", a fit without privacy, is refused.
     */
    private String basisFit = "private";
    /** μ of the private basis fit, charged once per fit to every enrolled image it was fitted on. */
    private double basisFitMu = 2.0;
    private boolean publishEnrollments = true;
    /** Independent releases per enrolled image; each one spends the per-face ε again. */
    private int enrollReleases = 1;
    private int components = 8;
    private String mechanism = "embedding";
    /** The mechanism's mode: EMBEDDING sign-cap (default), a PEEP or FISHER sensitivity mode, or an RDP mode. */
    private String sensitivityMode = "sign-cap";
    /** ε per track per window in the honest modes; per coordinate in the paper modes. */
    private double epsilon = 20.0;
    /** Per-track budget policy spec: "once", "max-k:k=3,every=5" or "every-n:n=10,epsilon=0.5". */
    private String budget = "once";
    private Duration window = Duration.ofMinutes(10);
    /** RDP only: also publish the sanitized image. Local configuration only. */
    private boolean imageRelease;
    /**
     * Where the gateway keeps its audit log, spool and ledgers (0700, the agent's user only). Never holds
     * pixels; the person ledger's raw linking embeddings are here. Not under java.io.tmpdir: shared.
     */
    private Path dataDir = org.privface.agent.store.PrivateDirectory.defaultDataDir();
    private boolean exitWhenDone;
    /** Optional local CSV of eventId,origin for evaluating a run against known labels. Stays on the gateway. */
    private Path ledger;
    private String cascade = "haarcascades/haarcascade_frontalface_default.xml";
    private double scaleFactor = 1.1;
    private int minNeighbors = 4;
    private int minFaceSize = 40;
    /**
     * Frames wider than this are scanned for faces on a copy shrunk to this width; 0 scans at full
     * resolution. 320 makes a 640×480 camera about 2.6× cheaper on one core, at the cost of about
     * half the faces under 48 px (docs/performance.md, "Edge pipeline").
     */
    private int maxDetectWidth = 0;
    private boolean sharedModels = true;
    private int modelQueuePerCamera = 2;
    /** The face detector: yunet (default; UltraFace when its model is absent), ultraface, or haar (lightest, no landmarks); docs/face-stack.md. */
    private String detector = "yunet";
    /** YuNet's .onnx; unset: yunet/face_detection_yunet_2023mar.onnx under FACE_MODELS (default ../shared/models). */
    private String yunetModel;
    /** Score a deep detector's face must reach; unset: the detector's default. */
    private Double detectorScore;
    private Embedder embedder = new Embedder();

    /** The detector a camera runs: its own settings where set, else these (and the global ones for enrollment, c = null). */
    public org.privface.agent.detect.FaceFinder faceFinder(org.privface.agent.capture.CameraSettings c) {
        return org.privface.agent.detect.FaceFinders.create(
                c != null && c.getDetector() != null ? c.getDetector() : detector,
                new org.privface.agent.detect.FaceFinders.Haar(c != null && c.getCascade() != null ? c.getCascade() : cascade,
                        c != null && c.getScaleFactor() != null ? c.getScaleFactor() : scaleFactor,
                        c != null && c.getMinNeighbors() != null ? c.getMinNeighbors() : minNeighbors,
                        c != null && c.getMinFaceSize() != null ? c.getMinFaceSize() : minFaceSize),
                yunetModel, detectorScore,
                c != null && c.getMaxDetectWidth() != null ? c.getMaxDetectWidth() : maxDetectWidth);
    }

    /**
     * What makes two cameras' detectors the same model, for sharing one ({@code agent.shared-models}):
     * the values {@link #faceFinder} builds it from.
     */
    public String detectorKey(org.privface.agent.capture.CameraSettings c) {
        return String.join("|", c != null && c.getDetector() != null ? c.getDetector() : detector,
                String.valueOf(c != null && c.getCascade() != null ? c.getCascade() : cascade),
                String.valueOf(c != null && c.getScaleFactor() != null ? c.getScaleFactor() : scaleFactor),
                String.valueOf(c != null && c.getMinNeighbors() != null ? c.getMinNeighbors() : minNeighbors),
                String.valueOf(c != null && c.getMinFaceSize() != null ? c.getMinFaceSize() : minFaceSize),
                String.valueOf(yunetModel), String.valueOf(detectorScore),
                String.valueOf(c != null && c.getMaxDetectWidth() != null ? c.getMaxDetectWidth() : maxDetectWidth));
    }

    /** {@code agent.shared-models}: one detector and one embedder per network for all cameras (issue 44). */
    public boolean isSharedModels() { return sharedModels; }
    public void setSharedModels(boolean sharedModels) { this.sharedModels = sharedModels; }
    /** {@code agent.model-queue-per-camera}: requests one camera may have waiting on a shared model. */
    public int getModelQueuePerCamera() { return modelQueuePerCamera; }
    public void setModelQueuePerCamera(int modelQueuePerCamera) { this.modelQueuePerCamera = modelQueuePerCamera; }

    public String getDetector() { return detector; }
    public void setDetector(String detector) { this.detector = detector; }
    public String getYunetModel() { return yunetModel; }
    public void setYunetModel(String yunetModel) { this.yunetModel = yunetModel; }
    public Double getDetectorScore() { return detectorScore; }
    public void setDetectorScore(Double detectorScore) { this.detectorScore = detectorScore; }
    public Embedder getEmbedder() { return embedder; }
    public void setEmbedder(Embedder embedder) { this.embedder = embedder; }

    /**
     * {@code agent.embedder}: the face-embedding network for the EMBEDDING mechanism.
     * {@code network} picks a packaged one ({@link org.privface.agent.embed.FaceEmbedders}): {@code dlib}
     * (dlib's ResNet descriptor, public-domain weights, the default) or {@code fr_feature} (the faceplugin
     * npm package's ONNX network); docs/face-stack.md compares them. A {@code model} path instead runs
     * any ONNX network (SFace, ArcFace), configured by input size and normalisation.
     */
    private Link link = new Link();

    public Link getLink() { return link; }
    public void setLink(Link link) { this.link = link; }

    /** agent.link: appearance linking, for a budget per person on the gateway (docs/agent.md). */
    @ConfigurationProperties("link")
    public static class Link {
        private boolean enabled = true;
        /** Unset: the embedding network's calibrated threshold ({@code FaceEmbedders.linkThreshold}). */
        private Double threshold;
        /** Unset: the embedding network's calibrated rule ({@code FaceEmbedders.linkMatches}). */
        private Integer matches;
        /**
         * The network linking embeds with. Unset: {@code FaceEmbedders.LINK_NETWORK} (it links better,
         * docs/privacy.md) where installed and no custom model is configured, else the release's.
         */
        private String network;
        private int facesToLink = org.privface.agent.link.GatewayLinking.DEFAULT_FACES_TO_LINK;
        private int recheckEvery = org.privface.agent.link.GatewayLinking.DEFAULT_RECHECK_EVERY;
        /** The cameras' views do not overlap, so one person is not on two at once (docs/privacy.md). */
        private boolean disjointViews = true;
        private int minFaceSize = org.privface.agent.link.GatewayLinking.DEFAULT_MIN_FACE_SIZE;
        private double minScore = org.privface.agent.link.GatewayLinking.DEFAULT_MIN_SCORE;

        /** The rule in force: the configured threshold and matches, else the linking network's. */
        public org.privface.agent.link.GatewayLinking.Rule rule(Embedder embedder) {
            String n = network(embedder);
            int m = matches != null ? matches : n != null
                    ? org.privface.agent.embed.FaceEmbedders.linkMatches(n) : 1;
            return new org.privface.agent.link.GatewayLinking.Rule(threshold(embedder), m, facesToLink, recheckEvery,
                    disjointViews, n == null || n.equals(embedder.getModel() == null ? embedder.getNetwork() : null) ? null : n);
        }

        /** The packaged network linking embeds with; null for the release's custom model. */
        public String network(Embedder embedder) {
            if (network != null) {
                return network;
            }
            if (embedder.getModel() != null) {
                return null;
            }
            return org.privface.agent.embed.FaceEmbedders.missing(org.privface.agent.embed.FaceEmbedders.LINK_NETWORK).isEmpty()
                    ? org.privface.agent.embed.FaceEmbedders.LINK_NETWORK : embedder.getNetwork();
        }

        /** Why the linking network cannot run here, or empty when it can. */
        public java.util.Optional<String> missing(Embedder embedder) {
            String n = network(embedder);
            return n == null ? embedder.missing() : org.privface.agent.embed.FaceEmbedders.missing(n);
        }
        public String getNetwork() { return network; }
        public void setNetwork(String network) { this.network = network; }
        public Integer getMatches() { return matches; }
        public void setMatches(Integer matches) { this.matches = matches; }
        public int getFacesToLink() { return facesToLink; }
        public void setFacesToLink(int facesToLink) { this.facesToLink = facesToLink; }
        public int getRecheckEvery() { return recheckEvery; }
        public void setRecheckEvery(int recheckEvery) { this.recheckEvery = recheckEvery; }
        public boolean isDisjointViews() { return disjointViews; }
        public void setDisjointViews(boolean disjointViews) { this.disjointViews = disjointViews; }

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public Double getThreshold() { return threshold; }
        public void setThreshold(Double threshold) { this.threshold = threshold; }

        /** The threshold in force: the configured one, else the packaged network's; NaN for an uncalibrated custom network. */
        public double threshold(Embedder embedder) {
            if (threshold != null) {
                return threshold;
            }
            String n = network(embedder);
            return n == null ? Double.NaN : org.privface.agent.embed.FaceEmbedders.linkThreshold(n);
        }
        public int getMinFaceSize() { return minFaceSize; }
        public void setMinFaceSize(int minFaceSize) { this.minFaceSize = minFaceSize; }
        public double getMinScore() { return minScore; }
        public void setMinScore(double minScore) { this.minScore = minScore; }
    }

    @ConfigurationProperties("embedder")
    public static class Embedder {
        private String network = org.privface.agent.embed.FaceEmbedders.DLIB;
        /** What runs dlib's network: onnxruntime or opencv (docs/performance.md, "Embedding runtime"). */
        private org.privface.agent.embed.DlibResNet.Runtime runtime = org.privface.agent.embed.DlibResNet.Runtime.DEFAULT;
        private Path model;
        private int inputSize = 112;
        private double scale = 1 / 128.0;
        private double mean = 127;
        private boolean swapRb = true;

        /** A new embedder for one thread: the configured ONNX file, else the packaged network. */
        public org.privface.agent.embed.FaceEmbedder create() {
            return model == null
                    ? org.privface.agent.embed.FaceEmbedders.create(network, runtime)
                    : new org.privface.agent.embed.OnnxEmbedder(
                            new org.privface.agent.embed.OnnxEmbedder.Spec(model, inputSize, scale, mean, swapRb));
        }

        /** Why the configured network cannot run here, or empty when its files are present. */
        public java.util.Optional<String> missing() {
            if (model != null) {
                return java.nio.file.Files.isRegularFile(model) ? java.util.Optional.empty()
                        : java.util.Optional.of("no embedding network at " + model.toAbsolutePath());
            }
            return org.privface.agent.embed.FaceEmbedders.missing(network);
        }

        /** For the log: which network, and where its file comes from. */
        public String describe() {
            if (model != null) {
                return "ONNX network " + model.toAbsolutePath();
            }
            return switch (network) {
                case org.privface.agent.embed.FaceEmbedders.DLIB -> "dlib's ResNet descriptor (public-domain weights) from "
                        + org.privface.agent.detect.FaceModels.faceapiDir().toAbsolutePath();
                case org.privface.agent.embed.FaceEmbedders.FR_FEATURE -> "fr_feature.onnx (training data undocumented) from "
                        + org.privface.agent.detect.FaceModels.facepluginDir().toAbsolutePath();
                default -> network;
            };
        }

        public String getNetwork() { return network; }
        public void setNetwork(String network) {
            if (!org.privface.agent.embed.FaceEmbedders.NAMES.contains(network)) { // refused at startup, not at the first face
                throw new IllegalArgumentException("agent.embedder.network must be one of "
                        + org.privface.agent.embed.FaceEmbedders.NAMES + ", was '" + network + "'");
            }
            this.network = network;
        }
        public String getRuntime() { return runtime.name().toLowerCase(java.util.Locale.ROOT); }
        public void setRuntime(String runtime) { this.runtime = org.privface.agent.embed.DlibResNet.Runtime.of(runtime); }
        public Path getModel() { return model; }
        public void setModel(Path model) { this.model = model; }
        public int getInputSize() { return inputSize; }
        public void setInputSize(int inputSize) { this.inputSize = inputSize; }
        public double getScale() { return scale; }
        public void setScale(double scale) { this.scale = scale; }
        public double getMean() { return mean; }
        public void setMean(double mean) { this.mean = mean; }
        public boolean isSwapRb() { return swapRb; }
        public void setSwapRb(boolean swapRb) { this.swapRb = swapRb; }
    }

    /** The global default policy, before site and camera overrides. */
    public SitePolicy defaultPolicy() {
        return new SitePolicy(Mechanism.parse(mechanism), sensitivityMode, epsilon, budget, window, imageRelease);
    }

    public String getMechanism() { return mechanism; }
    public void setMechanism(String mechanism) { this.mechanism = mechanism; }
    public String getBudget() { return budget; }
    public void setBudget(String budget) { this.budget = budget; }
    public Duration getWindow() { return window; }
    public void setWindow(Duration window) { this.window = window; }
    public boolean isImageRelease() { return imageRelease; }
    public void setImageRelease(boolean imageRelease) { this.imageRelease = imageRelease; }
    public Path getDataDir() { return dataDir; }
    public void setDataDir(Path dataDir) { this.dataDir = dataDir; }
    public Floor getFloor() { return floor; }
    public void setFloor(Floor floor) { this.floor = floor; }
    public Control getControl() { return control; }
    public void setControl(Control control) { this.control = control; }

    private Floor floor = new Floor();
    private Spool spool = new Spool();

    public Spool getSpool() { return spool; }
    public void setSpool(Spool spool) { this.spool = spool; }

    /** {@code agent.spool}: the bounded disk queue that holds records while the broker is unreachable. */
    @ConfigurationProperties("spool")
    public static class Spool {
        /** 256 MiB: about a day of one busy camera's records (~600 bytes each at 3 faces/s). */
        private long maxBytes = 256L << 20;
        /** Past the bound, drop the oldest records: the newest matter most to an operator. */
        private org.privface.agent.publish.DropPolicy dropPolicy = org.privface.agent.publish.DropPolicy.DROP_OLDEST;

        public long getMaxBytes() { return maxBytes; }
        public void setMaxBytes(long maxBytes) { this.maxBytes = maxBytes; }
        public org.privface.agent.publish.DropPolicy getDropPolicy() { return dropPolicy; }
        public void setDropPolicy(org.privface.agent.publish.DropPolicy dropPolicy) { this.dropPolicy = dropPolicy; }
    }
    private Control control = new Control();

    /**
     * {@code agent.floor}: the gateway's own bounds; nothing remote moves ε per track outside them,
     * shortens the window below its minimum, or raises an enrolled image's cap.
     */
    @ConfigurationProperties("floor")
    public static class Floor {
        private double epsilonMin = 0.1;
        private double epsilonMax = 100;
        /** The shortest budget window: an appearance spends at most epsilon-max per window of at least this. */
        private Duration windowMin = org.privface.agent.policy.PrivacyFloor.DEFAULT_WINDOW_MIN;
        /**
         * Composed ε each enrollment image may spend over the gateway's whole life (the enrollment
         * ledger); unset, enroll-releases × epsilon-max: one enrollment at the highest ε the floor allows,
         * plus, with basis-fit private, one private basis fit at basis-fit-mu.
         */
        private Double enrollmentEpsilonCap;

        public Duration getWindowMin() { return windowMin; }
        public void setWindowMin(Duration windowMin) { this.windowMin = windowMin; }
        public Double getEnrollmentEpsilonCap() { return enrollmentEpsilonCap; }
        public void setEnrollmentEpsilonCap(Double enrollmentEpsilonCap) { this.enrollmentEpsilonCap = enrollmentEpsilonCap; }

        public double getEpsilonMin() { return epsilonMin; }
        public void setEpsilonMin(double epsilonMin) { this.epsilonMin = epsilonMin; }
        public double getEpsilonMax() { return epsilonMax; }
        public void setEpsilonMax(double epsilonMax) { this.epsilonMax = epsilonMax; }
    }

    private Erasure erasure = new Erasure();

    public Erasure getErasure() { return erasure; }
    public void setErasure(Erasure erasure) { this.erasure = erasure; }

    /** {@code agent.erasure}: forgetting a person (docs/operations.md, "Forgetting a person"). */
    @ConfigurationProperties("erasure")
    public static class Erasure {
        /** Follow the site's erasure topic (with the control topic on). */
        private boolean enabled = true;
        /** The site's pseudonym secret (base64), shared by its gateways and operators; unset: one in the data dir. */
        private Path secretFile;
        /** How long an erasure waits for the spool to empty and the tombstones to be acknowledged. */
        private Duration wait = Duration.ofSeconds(60);

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public Path getSecretFile() { return secretFile; }
        public void setSecretFile(Path secretFile) { this.secretFile = secretFile; }
        public Duration getWait() { return wait; }
        public void setWait(Duration wait) { this.wait = wait; }
    }

    private Answer answer = new Answer();

    public Answer getAnswer() { return answer; }
    public void setAnswer(Answer answer) { this.answer = answer; }

    /** {@code agent.answer}: what the site's query faces release (docs/wire.md, "Answers instead of vectors"). */
    @ConfigurationProperties("answer")
    public static class Answer {
        /** {@code vector} (the default), {@code answer} (a noisy identity only) or {@code both} (each at half the release's ε). */
        private String release = "vector";
        /** Key id → base64 X.509 Ed25519 public key of the recognizer; only galleries it signed are used. */
        private java.util.Map<String, String> galleryKeys = new java.util.LinkedHashMap<>();
        /**
         * A gallery built longer ago than this is refused, and a held one stops being used: a stale
         * or replayed gallery is not answered with. The recognizer republishes well within it.
         */
        private java.time.Duration galleryMaxAge = java.time.Duration.ofDays(7);

        /**
         * Which forms each enrolled image is released in: {@code vector}, {@code templates} or
         * {@code both}; unset, what the release needs (vector: vector, answer: templates, both: both).
         * A gateway that only enrolls for another's queries (the demo's enrollment pass) sets it.
         */
        private String enrollmentForms;
        /**
         * Faces of one track decoded together into one answer (their unit mean direction), released once
         * at the track's grant when the last of them is seen or the track ends. 3 is what
         * docs/frontier.md ("Large galleries") measured: on 139 enrolled people at ε 20 it cuts the
         * misses at FPIR 1 % from 0.19 to 0.03; 1 answers each face on its own, as before issue 45.
         */
        private int trackFaces = 3;

        /**
         * ε of each release of an enrolled image in the templates' form, set here only (no remote policy
         * moves it), independent of the query faces' ε: the templates are the enrolled people's, the
         * answers everyone's. docs/frontier.md ("Large galleries"): on 139 people, one release at ε 20
         * misses 0.10 of 3-face tracks answered at ε 10, two releases at ε 10 miss 0.16.
         */
        private double templateEpsilon = 20;
        /**
         * Releases of each enrolled image in the templates' form: the image spends template-releases ×
         * template-epsilon, stated on each record and charged in the enrollment ledger. 2 at ε 20 miss
         * 0.04 (ε 10 answers) and 0.02 (ε 20) of lfw139's 3-face tracks, against 0.10 and 0.03 with 1.
         */
        private int templateReleases = 2;

        public double getTemplateEpsilon() { return templateEpsilon; }
        public void setTemplateEpsilon(double templateEpsilon) {
            if (!(templateEpsilon > 0) || !Double.isFinite(templateEpsilon)) {
                throw new IllegalArgumentException("agent.answer.template-epsilon must be a positive number, was "
                        + templateEpsilon);
            }
            this.templateEpsilon = templateEpsilon;
        }
        /**
         * Refuses a template ε above the floor's {@code epsilon-max} where templates are released: it is
         * local configuration, but no release of a gateway passes its floor.
         */
        public void checkTemplateEpsilon(double epsilonMax) {
            if (!enrollmentForms().equals("vector") && templateEpsilon > epsilonMax) {
                throw new IllegalArgumentException("agent.answer.template-epsilon " + templateEpsilon
                        + " is above the floor's epsilon-max " + epsilonMax);
            }
        }
        public int getTemplateReleases() { return templateReleases; }
        public void setTemplateReleases(int templateReleases) {
            if (templateReleases < 1 || templateReleases > 16) {
                throw new IllegalArgumentException("agent.answer.template-releases must be 1 to 16, was " + templateReleases);
            }
            this.templateReleases = templateReleases;
        }

        public int getTrackFaces() { return trackFaces; }
        public void setTrackFaces(int trackFaces) {
            if (trackFaces < 1 || trackFaces > 64) {
                throw new IllegalArgumentException("agent.answer.track-faces must be 1 to 64, was " + trackFaces);
            }
            this.trackFaces = trackFaces;
        }

        public String getEnrollmentForms() { return enrollmentForms; }
        public void setEnrollmentForms(String enrollmentForms) { this.enrollmentForms = enrollmentForms; }
        /** The enrollment forms asked for, or the release's. */
        public String enrollmentForms() {
            if (enrollmentForms != null && !enrollmentForms.isBlank()) {
                String f = enrollmentForms.trim().toLowerCase(java.util.Locale.ROOT);
                if (!java.util.List.of("vector", "templates", "both").contains(f)) {
                    throw new IllegalArgumentException("agent.answer.enrollment-forms must be vector, templates or both, not '"
                            + enrollmentForms + "'");
                }
                return f;
            }
            String r = release.trim().toLowerCase(java.util.Locale.ROOT);
            return r.equals("answer") ? "templates" : r;
        }
        public java.time.Duration getGalleryMaxAge() { return galleryMaxAge; }
        public void setGalleryMaxAge(java.time.Duration galleryMaxAge) { this.galleryMaxAge = galleryMaxAge; }
        public String getRelease() { return release; }
        public void setRelease(String release) { this.release = release; }
        public java.util.Map<String, String> getGalleryKeys() { return galleryKeys; }
        public void setGalleryKeys(java.util.Map<String, String> galleryKeys) { this.galleryKeys = galleryKeys; }
    }

    /** {@code agent.control}: remote changes through REST and the site's control topic. */
    @ConfigurationProperties("control")
    public static class Control {
        /** Bearer token for changing the policy over REST; without one, REST changes are refused. */
        private String token;
        private boolean topicEnabled = true;
        /** How often the gateway reports to its site's status topic (and after every change). */
        private java.time.Duration reportInterval = java.time.Duration.ofSeconds(10);

        public java.time.Duration getReportInterval() { return reportInterval; }
        public void setReportInterval(java.time.Duration reportInterval) { this.reportInterval = reportInterval; }
        public String getToken() { return token; }
        public void setToken(String token) { this.token = token; }
        public boolean isTopicEnabled() { return topicEnabled; }
        public void setTopicEnabled(boolean topicEnabled) { this.topicEnabled = topicEnabled; }

        /** Key id → base64 X.509 Ed25519 public key; only records signed by one of them change the policy. */
        private java.util.Map<String, String> operatorKeys = new java.util.LinkedHashMap<>();
        /**
         * A file of {@code key-id: base64} lines (a mounted ConfigMap), added to {@link #operatorKeys};
         * absent means none. Not "operator-keys-file": the variable AGENT_CONTROL_OPERATOR_KEYS_FILE
         * would also bind as the map entry operator-keys.file.
         */
        private Path keysFile;
        /** A signed record issued longer ago than this is refused as stale (docs/agent.md, "Replays"). */
        private java.time.Duration maxRecordAge = java.time.Duration.ofHours(24);
        /**
         * A signed record issued further than this ahead of the gateway's clock is refused. Wider than
         * a 10-minute NTP step of either clock, so a fresh record still applies after one
         * (docs/reliability.md, "The clock steps by ten minutes").
         */
        private java.time.Duration maxClockSkew = java.time.Duration.ofMinutes(15);

        public java.util.Map<String, String> getOperatorKeys() { return operatorKeys; }
        public void setOperatorKeys(java.util.Map<String, String> operatorKeys) { this.operatorKeys = operatorKeys; }
        public Path getKeysFile() { return keysFile; }
        public void setKeysFile(Path keysFile) { this.keysFile = keysFile; }
        public java.time.Duration getMaxRecordAge() { return maxRecordAge; }
        public void setMaxRecordAge(java.time.Duration maxRecordAge) { this.maxRecordAge = maxRecordAge; }
        public java.time.Duration getMaxClockSkew() { return maxClockSkew; }
        public void setMaxClockSkew(java.time.Duration maxClockSkew) { this.maxClockSkew = maxClockSkew; }
    }

    private static String defaultGatewayId() {
        String h = System.getenv("HOSTNAME");
        if (h == null || h.isBlank()) {
            try {
                h = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException e) {
                h = "gateway";
            }
        }
        return h.replaceAll("[^A-Za-z0-9._-]", "-");
    }

    public String getGatewayId() { return gatewayId; }
    public void setGatewayId(String gatewayId) { this.gatewayId = gatewayId; }
    public String getSiteId() { return siteId; }
    public void setSiteId(String siteId) { this.siteId = siteId; }
    public String getCameraId() { return cameraId; }
    public void setCameraId(String cameraId) { this.cameraId = cameraId; }
    public String getFolderFrames() { return folderFrames; }
    public void setFolderFrames(String folderFrames) {
        if (!"stills".equals(folderFrames) && !"sequence".equals(folderFrames)) {
            throw new IllegalArgumentException("agent.folder-frames must be stills or sequence, not '" + folderFrames + "'");
        }
        this.folderFrames = folderFrames;
    }
    /** Whether an image folder's images are unrelated stills ({@code agent.folder-frames}). */
    public boolean folderStills() { return "stills".equals(folderFrames); }
    public String getSource() { return source; }
    public void setSource(String source) { this.source = source; }
    public Path getEnrollFolder() { return enrollFolder; }
    public void setEnrollFolder(Path enrollFolder) { this.enrollFolder = enrollFolder; }
    public Path getBasisFile() { return basisFile; }
    public void setBasisFile(Path basisFile) { this.basisFile = basisFile; }
    public String getBasisFit() { return basisFit; }
    public void setBasisFit(String basisFit) { this.basisFit = basisFit; }
    public double getBasisFitMu() { return basisFitMu; }
    public void setBasisFitMu(double basisFitMu) { this.basisFitMu = basisFitMu; }
    public boolean isPublishEnrollments() { return publishEnrollments; }
    public void setPublishEnrollments(boolean publishEnrollments) { this.publishEnrollments = publishEnrollments; }
    public int getEnrollReleases() { return enrollReleases; }
    public void setEnrollReleases(int enrollReleases) {
        if (enrollReleases < 1) {
            throw new IllegalArgumentException("agent.enroll-releases must be at least 1, was " + enrollReleases);
        }
        this.enrollReleases = enrollReleases;
    }
    public int getComponents() { return components; }
    public void setComponents(int components) { this.components = components; }
    public String getSensitivityMode() { return sensitivityMode; }
    public void setSensitivityMode(String sensitivityMode) { this.sensitivityMode = sensitivityMode; }
    public double getEpsilon() { return epsilon; }
    public void setEpsilon(double epsilon) { this.epsilon = epsilon; }
    public boolean isExitWhenDone() { return exitWhenDone; }
    public void setExitWhenDone(boolean exitWhenDone) { this.exitWhenDone = exitWhenDone; }
    public Path getLedger() { return ledger; }
    public void setLedger(Path ledger) { this.ledger = ledger; }
    public String getCascade() { return cascade; }
    public void setCascade(String cascade) { this.cascade = cascade; }
    public double getScaleFactor() { return scaleFactor; }
    public void setScaleFactor(double scaleFactor) { this.scaleFactor = scaleFactor; }
    public int getMinNeighbors() { return minNeighbors; }
    public void setMinNeighbors(int minNeighbors) { this.minNeighbors = minNeighbors; }
    public int getMinFaceSize() { return minFaceSize; }
    public void setMinFaceSize(int minFaceSize) { this.minFaceSize = minFaceSize; }
    public int getMaxDetectWidth() { return maxDetectWidth; }
    public void setMaxDetectWidth(int maxDetectWidth) { this.maxDetectWidth = maxDetectWidth; }
}
