package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.privface.agent.detect.FaceModels;
import org.privface.broker.KafkaServerProcess;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.topics.Topics;

/**
 * The container images as the manifests run them (k8s/base), started from their tars without a
 * container engine ({@link ImageRoot}): the recognizer answers /health and trains on a real Kafka
 * broker on loopback, and the agent runs the deep stack the overlays deploy (YuNet mounted where
 * the DaemonSet mounts its ConfigMap, dlib on OpenCV DNN, the EMBEDDING sign-cap release at ε 20) on a
 * folder camera of test-data/synthetic; a YuNet that is not the pinned file stops the agent at
 * start-up. YuNet comes from FACE_MODELS (../shared/models); without it the test is skipped.
 * Build the images first (k8s/README.md, "Images"), then, as root:
 * {@code mvn -Pimages -pl k8s/local-stack -am test -Dtest=ImageSmokeTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@EnabledIfSystemProperty(named = "privface.images.smoke", matches = "true",
        disabledReason = "the image smoke test runs with -Pimages (k8s/README.md, \"Images\")")
class ImageSmokeTest {
    private static final String SITE = "smoke";
    /** The live-camera gateway's site, so its records stay apart from the folder run's. */
    private static final String LIVE_SITE = "smokelive";
    /** The answer loop's site: a gateway set to answer, against a gallery the recognizer image signs. */
    private static final String ANSWER_SITE = "smokeanswer";
    /** The overlays' ε per face (docs/frontier.md, "Recommended ε"). */
    private static final double EPSILON = 20;
    /** Where base/agent/daemonset.yaml mounts the ConfigMap privface-face-models, and the path it names. */
    private static final String MODELS_MOUNT = "/etc/privface/models";
    private static final String YUNET_IN_IMAGE = MODELS_MOUNT + "/" + FaceModels.YUNET_FILE;
    private final Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
    private final List<AutoCloseable> running = new ArrayList<>();
    private LocalBroker broker;
    private Path work;
    private ImageRoot agentImage;
    private ImageRoot recognizerImage;
    private String bootstrap;

    @BeforeAll
    void unpack() throws Exception {
        Path agentTar = root.resolve("agent/target/jib-image.tar");
        Path recognizerTar = root.resolve("recognizer/target/jib-image.tar");
        assumeTrue(Files.isRegularFile(agentTar) && Files.isRegularFile(recognizerTar),
                "no image tars (agent/ and recognizer/target/jib-image.tar): build them with mvn -Pimages package first");
        assumeTrue(Files.isRegularFile(FaceModels.sharedModels().resolve(FaceModels.YUNET_FILE)),
                "YuNet absent under " + FaceModels.sharedModels().toAbsolutePath() + " (FACE_MODELS): the deep stack needs it");
        assumeTrue("root".equals(System.getProperty("user.name")),
                "the smoke test mounts and chroots, which needs root; running as " + System.getProperty("user.name"));
        work = root.resolve("k8s/local-stack/target/image-smoke");
        new ProcessBuilder("rm", "-rf", work.toString()).inheritIO().start().waitFor();
        Files.createDirectories(work);
        agentImage = ImageRoot.unpack(agentTar, work.resolve("agent"));
        recognizerImage = ImageRoot.unpack(recognizerTar, work.resolve("recognizer"));
        broker = LocalBroker.plaintext(root, Files.createDirectories(work.resolve("kafka")),
                Topics.definitions(List.of(SITE, LIVE_SITE, ANSWER_SITE)));
        running.add(broker);
        bootstrap = broker.bootstrap();
    }

    @AfterAll
    void stop() {
        FaultKit.closeAll(running);
    }

    @Test
    void eachImageRunsAsItsUserOnAReadOnlyRoot() throws Exception {
        for (ImageRoot image : List.of(agentImage, recognizerImage)) {
            assertEquals("10001:10001", image.user);
            var r = image.exec(List.of(ImageRoot.Mount.tmpfs("/tmp")),
                    List.of("sh", "-c", "id -u; id -g; touch /app/probe 2>&1 || echo read-only; touch /tmp/probe && echo tmp-writable"),
                    work.resolve("probe.log"), Duration.ofSeconds(30));
            assertEquals(0, r.getKey(), r.getValue());
            List<String> lines = r.getValue().lines().toList();
            assertEquals("10001", lines.get(0), r.getValue());
            assertEquals("10001", lines.get(1), r.getValue());
            assertTrue(r.getValue().contains("Read-only file system") && r.getValue().contains("read-only"), r.getValue());
            assertTrue(lines.contains("tmp-writable"), r.getValue());
        }
    }

    @Test
    void recognizerTrainsOnWhatTheAgentPublishesFromAFolderCamera() throws Exception {
        // The recognizer as base/recognizer/deployment.yaml runs it: models and /tmp on volumes.
        int recognizerPort = KafkaServerProcess.freePort();
        Process recognizer = recognizerImage.start(
                List.of(ImageRoot.Mount.tmpfs("/tmp"), ImageRoot.Mount.tmpfs("/var/lib/privface-recognizer/models")),
                Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap, "RECOGNIZER_HTTP_PORT", String.valueOf(recognizerPort),
                        "RECOGNIZER_INSTANCE_ID", "smoke-recognizer",
                        "JAVA_TOOL_OPTIONS", "-Xmx1g -Dai.djl.pytorch.num_threads=1 -Dai.djl.pytorch.num_interop_threads=1"),
                work.resolve("recognizer.log"));
        running.add(() -> ImageRoot.stop(recognizer));
        awaitHealthy(recognizer, recognizerPort, work.resolve("recognizer.log"));

        // The agent as base/agent/daemonset.yaml and the overlays run it (gateway environment, data dir,
        // read-only enrollment folder, YuNet mounted, the deep stack by default), with a folder of
        // synthetic frames as its one camera.
        int agentPort = KafkaServerProcess.freePort();
        Path faces = root.resolve("test-data/synthetic");
        List<ImageRoot.Mount> mounts = new ArrayList<>(agentMounts());
        mounts.add(ImageRoot.Mount.bind(faces.resolve("query"), "/srv/camera"));
        long t0 = System.nanoTime();
        Process agent = agentImage.start(mounts, daemonSetEnv(Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap, "AGENT_HTTP_PORT", String.valueOf(agentPort),
                        "AGENT_SITE_ID", SITE, "AGENT_GATEWAY_ID", "smoke-gateway",
                        "AGENT_ENROLL_FOLDER", "/var/lib/privface-agent-enroll", "AGENT_SOURCE", "/srv/camera",
                        "AGENT_YUNET_MODEL", YUNET_IN_IMAGE, "AGENT_EXIT_WHEN_DONE", "true",
                        "JAVA_TOOL_OPTIONS", "-Xmx1g")),
                work.resolve("agent.log"));
        running.add(() -> ImageRoot.stop(agent));
        long peakKib = 0;
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (!agent.waitFor(1, TimeUnit.SECONDS) && System.nanoTime() < deadline) {
            peakKib = Math.max(peakKib, peakRssKib(agent));
        }
        assertTrue(!agent.isAlive(), "the agent did not finish the folder within 5 minutes");
        assertEquals(0, agent.exitValue(), "agent exit code; its log:\n" + Files.readString(work.resolve("agent.log")));
        // Against the DaemonSet's memory limit (1536 MiB): the deep stack on OpenCV DNN (YuNet, dlib), heap up to -Xmx1g.
        System.out.printf("agent image: folder run in %.1f s, peak resident memory %d MiB (-Xmx1g)%n",
                (System.nanoTime() - t0) / 1e9, peakKib / 1024);
        // The stack that ran, as the agent logs it: the mounted YuNet, checked; dlib from the image.
        String agentLog = Files.readString(work.resolve("agent.log"));
        for (String ran : List.of("YuNet model " + YUNET_IN_IMAGE + ": SHA-256 " + FaceModels.YUNET_SHA256,
                "face detector: yunet (", "face embedding: dlib's ResNet descriptor")) {
            assertTrue(agentLog.contains(ran), "'" + ran + "' not in the agent's log:\n" + agentLog);
        }

        Map<String, PerturbedFace> published = DemoTopics.readAll(broker.client(LocalBroker.ADMIN), List.of(Topics.enrollment(SITE), Topics.query(SITE)),
                -1, Duration.ofSeconds(20), FaceRecords::decodeFace, PerturbedFace::getEventId);
        long enrollments = published.values().stream().filter(f -> f.getEnrollmentLabel() != null).count();
        long queries = published.size() - enrollments;
        System.out.printf("agent image: %d enrollment and %d query records published%n", enrollments, queries);
        assertTrue(enrollments >= 10, "enrollment records: " + enrollments);
        assertTrue(queries > 0, "query records: " + queries);
        for (PerturbedFace f : published.values()) {
            assertEquals("EMBEDDING", f.getMechanism().getName());
            assertTrue(f.getMechanism().getSensitivityMode().startsWith("sign-cap"), f.getMechanism().getSensitivityMode());
            assertTrue(f.getMechanism().getBasisId().startsWith("dlib-"), "dlib's public basis: " + f.getMechanism().getBasisId());
            // The sign-cap preset's exact ε (ln of its rational p and code count) is a hair under 20: 19.9999999955.
            double eps = f.getMechanism().getEpsilonPerFace();
            assertTrue(eps <= EPSILON && eps > EPSILON - 1e-6, "every record states the ε it spent: " + eps);
        }

        // privface.results is shared with the other tests' sites: this site's queries only.
        java.util.Set<String> queryIds = new java.util.HashSet<>();
        published.values().stream().filter(f -> f.getEnrollmentLabel() == null).forEach(f -> queryIds.add(f.getEventId()));
        Map<String, RecognitionResult> results = new java.util.HashMap<>();
        long until = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (!results.keySet().containsAll(queryIds) && System.nanoTime() < until) {
            results = new java.util.HashMap<>(DemoTopics.readAll(broker.client(LocalBroker.ADMIN), List.of(Topics.RESULTS), -1,
                    Duration.ofSeconds(20), FaceRecords::decodeResult, RecognitionResult::getEventId));
            results.keySet().retainAll(queryIds);
            if (!results.keySet().containsAll(queryIds)) {
                Thread.sleep(2000);
            }
        }
        long named = results.values().stream().filter(r -> r.getPredictedLabel() != null).count();
        System.out.printf("recognizer image: %d of %d queries answered (%d with an enrolled name, %d \"unknown\")%n",
                results.size(), queries, named, results.size() - named);
        assertEquals(queries, results.size(), "every query answered; recognizer log:\n"
                + tail(work.resolve("recognizer.log")));
        for (RecognitionResult r : results.values()) {
            assertNotNull(r.getModelVersion(), "answered by a trained model");
            assertEquals(published.get(r.getEventId()).getMechanism().getEpsilonPerFace(), r.getEpsilonPerFace(), 0.0);
        }
        assertTrue(recognizer.isAlive(), "the recognizer still runs");
        assertEquals(200, health(recognizerPort), "recognizer /health after training");
        String log = Files.readString(work.resolve("agent.log"));
        assertFalse(log.contains("Read-only file system"), "the agent wrote outside its volumes:\n" + log);
    }

    /**
     * The answer loop inside the images (issue 38), as the answer overlay runs it: the recognizer
     * signs the site's gallery with the key the Deployment mounts (RECOGNIZER_ANSWER_SIGNING_KEY_FILE),
     * a gateway enrolls in the templates' form, and a second gateway, set to answer and trusting the
     * gallery key (AGENT_ANSWER_GALLERY_KEYS_RECOGNIZER), releases each query face as a k-RR identity;
     * the recognizer turns every answer into a result. Closed-set: no strangers file is mounted here.
     */
    @Test
    void theAnswerLoopRunsInTheImages() throws Exception {
        Path keys = Files.createDirectories(work.resolve("gallery-key"));
        String trust = org.privface.wire.control.SignedControl.writeNewKey("recognizer", keys.resolve("signing.key"));
        // The image runs as 10001, as the Secret's defaultMode and fsGroup let it read the key in the cluster.
        new ProcessBuilder("chown", "-R", "10001:10001", keys.toString()).inheritIO().start().waitFor();
        int recognizerPort = KafkaServerProcess.freePort();
        Path recognizerLog = work.resolve("recognizer-answer.log");
        Process recognizer = recognizerImage.start(
                List.of(ImageRoot.Mount.tmpfs("/tmp"), ImageRoot.Mount.tmpfs("/var/lib/privface-recognizer/models"),
                        ImageRoot.Mount.bind(keys, "/etc/privface/gallery")),
                Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap, "RECOGNIZER_HTTP_PORT", String.valueOf(recognizerPort),
                        "RECOGNIZER_INSTANCE_ID", "smoke-answer-recognizer", "RECOGNIZER_SITES", ANSWER_SITE,
                        "RECOGNIZER_GROUP_ID", "smoke-answer",
                        "RECOGNIZER_ANSWER_SIGNING_KEY_FILE", "/etc/privface/gallery/signing.key",
                        "RECOGNIZER_ANSWER_KEY_ID", "recognizer",
                        "JAVA_TOOL_OPTIONS", "-Xmx1g -Dai.djl.pytorch.num_threads=1 -Dai.djl.pytorch.num_interop_threads=1"),
                recognizerLog);
        running.add(() -> ImageRoot.stop(recognizer));
        awaitHealthy(recognizer, recognizerPort, recognizerLog);

        // The gateway enrolls alone, in the templates' form; the recognizer builds and signs the gallery.
        Path enrolLog = work.resolve("agent-answer-enrol.log");
        Process enrol = agentImage.start(agentMounts(), daemonSetEnv(Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap, "AGENT_HTTP_PORT", String.valueOf(KafkaServerProcess.freePort()),
                        "AGENT_SITE_ID", ANSWER_SITE, "AGENT_GATEWAY_ID", "smoke-answer-enrol",
                        "AGENT_ENROLL_FOLDER", "/var/lib/privface-agent-enroll", "AGENT_ANSWER_ENROLLMENT_FORMS", "templates",
                        "AGENT_YUNET_MODEL", YUNET_IN_IMAGE, "AGENT_EXIT_WHEN_DONE", "true", "JAVA_TOOL_OPTIONS", "-Xmx1g")),
                enrolLog);
        running.add(() -> ImageRoot.stop(enrol));
        assertTrue(enrol.waitFor(5, TimeUnit.MINUTES), "the enrolling gateway did not finish:\n" + tail(enrolLog));
        assertEquals(0, enrol.exitValue(), "enrolling gateway's exit code:\n" + tail(enrolLog));
        String galleryTopic = Topics.gallery(ANSWER_SITE);
        Map<String, org.privface.wire.avro.FaceGallery> galleries = DemoTopics.readAll(broker.client(LocalBroker.ADMIN),
                List.of(galleryTopic), 1, Duration.ofMinutes(3), b -> FaceRecords.decodeGalleryFromTopic(galleryTopic, b),
                g -> Long.toString(g.getVersion()));
        assertFalse(galleries.isEmpty(), "no signed gallery on " + galleryTopic + "; recognizer log:\n" + tail(recognizerLog));
        int people = galleries.values().iterator().next().getLabels().size();

        // The answering gateway: the query folder as its camera, the gallery key trusted, nothing but answers out.
        Path answerLog = work.resolve("agent-answer.log");
        List<ImageRoot.Mount> mounts = new ArrayList<>(agentMounts());
        mounts.add(ImageRoot.Mount.bind(root.resolve("test-data/synthetic/query"), "/srv/camera"));
        Process answering = agentImage.start(mounts, daemonSetEnv(Map.ofEntries(Map.entry("KAFKA_BOOTSTRAP_SERVERS", bootstrap),
                        Map.entry("AGENT_HTTP_PORT", String.valueOf(KafkaServerProcess.freePort())),
                        Map.entry("AGENT_SITE_ID", ANSWER_SITE), Map.entry("AGENT_GATEWAY_ID", "smoke-answer-gateway"),
                        Map.entry("AGENT_ENROLL_FOLDER", "/var/lib/privface-agent-enroll"),
                        Map.entry("AGENT_PUBLISH_ENROLLMENTS", "false"), Map.entry("AGENT_SOURCE", "/srv/camera"),
                        Map.entry("AGENT_ANSWER_RELEASE", "answer"),
                        Map.entry("AGENT_ANSWER_GALLERY_KEYS_RECOGNIZER", trust.substring(trust.indexOf(':') + 1).strip()),
                        Map.entry("AGENT_YUNET_MODEL", YUNET_IN_IMAGE), Map.entry("AGENT_EXIT_WHEN_DONE", "true"),
                        Map.entry("JAVA_TOOL_OPTIONS", "-Xmx1g"))),
                answerLog);
        running.add(() -> ImageRoot.stop(answering));
        assertTrue(answering.waitFor(5, TimeUnit.MINUTES), "the answering gateway did not finish:\n" + tail(answerLog));
        assertEquals(0, answering.exitValue(), "answering gateway's exit code:\n" + tail(answerLog));

        Map<String, org.privface.wire.avro.FaceAnswer> answers = DemoTopics.readAll(broker.client(LocalBroker.ADMIN),
                List.of(Topics.answer(ANSWER_SITE)), -1, Duration.ofSeconds(20), FaceRecords::decodeAnswer,
                a -> a.getEventId());
        Map<String, PerturbedFace> vectors = DemoTopics.readAll(broker.client(LocalBroker.ADMIN),
                List.of(Topics.query(ANSWER_SITE)), -1, Duration.ofSeconds(5), FaceRecords::decodeFace, PerturbedFace::getEventId);
        System.out.printf("images, answer loop: gallery of %d people signed by the recognizer image; %d answers, %d query"
                + " vectors%n", people, answers.size(), vectors.size());
        assertTrue(answers.size() > 0, "no answer released; gateway log:\n" + tail(answerLog));
        assertTrue(vectors.isEmpty(), "an answer-only gateway released query vectors");
        for (var a : answers.values()) {
            double eps = a.getMechanism().getEpsilonPerFace();
            assertTrue(eps > 0 && eps <= EPSILON, "every answer states the ε it spent: " + eps);
        }
        Map<String, RecognitionResult> results = DemoTopics.readAll(broker.client(LocalBroker.ADMIN), List.of(Topics.RESULTS),
                -1, Duration.ofSeconds(30), FaceRecords::decodeResult, RecognitionResult::getEventId);
        long answered = answers.keySet().stream().filter(results::containsKey).count();
        System.out.printf("images, answer loop: %d of %d answers turned into results by the recognizer image%n", answered,
                answers.size());
        assertEquals(answers.size(), answered, "every answer became a result; recognizer log:\n" + tail(recognizerLog));
    }

    /**
     * The FFmpeg natives (libavdevice links the base's libpulse, libasound and libxcb) load only
     * for network and V4L2 cameras: a gateway on a live MJPEG-over-HTTP camera publishes queries.
     */
    @Test
    void agentCapturesALiveCameraThroughFfmpeg() throws Exception {
        try (MjpegFeed feed = new MjpegFeed(root.resolve("test-data/synthetic/query"), 5)) {
            Process agent = agentImage.start(agentMounts(), daemonSetEnv(Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap, "AGENT_HTTP_PORT", String.valueOf(KafkaServerProcess.freePort()),
                            "AGENT_SITE_ID", LIVE_SITE, "AGENT_GATEWAY_ID", "smoke-live-gateway",
                            "AGENT_ENROLL_FOLDER", "/var/lib/privface-agent-enroll", "AGENT_PUBLISH_ENROLLMENTS", "false",
                            "AGENT_CAMERAS_DOOR_URL", feed.url(), "AGENT_YUNET_MODEL", YUNET_IN_IMAGE,
                            "JAVA_TOOL_OPTIONS", "-Xmx1g")),
                    work.resolve("agent-live.log"));
            running.add(() -> ImageRoot.stop(agent));
            Map<String, PerturbedFace> queries = Map.of();
            long deadline = System.nanoTime() + Duration.ofMinutes(4).toNanos();
            while (queries.isEmpty() && System.nanoTime() < deadline) {
                assertTrue(agent.isAlive(), "the live gateway exited:\n" + tail(work.resolve("agent-live.log")));
                queries = DemoTopics.readAll(broker.client(LocalBroker.ADMIN), List.of(Topics.query(LIVE_SITE)), 1, Duration.ofSeconds(10),
                        FaceRecords::decodeFace, PerturbedFace::getEventId);
            }
            System.out.printf("agent image, live camera: %d query records from %s%n", queries.size(), feed.url());
            assertFalse(queries.isEmpty(), "no query from the live camera; agent log:\n" + tail(work.resolve("agent-live.log")));
            assertEquals("door", String.valueOf(queries.values().iterator().next().getCameraId()));
            ImageRoot.stop(agent);
        }
    }

    /**
     * A YuNet that is not the pinned file (a damaged or different ConfigMap) stops the agent at
     * start-up, before any camera or enrollment, with the file and both hashes in its log.
     */
    @Test
    void agentRefusesToStartOnAYunetThatIsNotThePinnedFile() throws Exception {
        Path models = Files.createDirectories(work.resolve("wrong-models/yunet"));
        Files.write(models.resolve(Path.of(FaceModels.YUNET_FILE).getFileName()), new byte[232_589]);
        List<ImageRoot.Mount> mounts = new ArrayList<>(agentMounts().subList(0, 3));
        mounts.add(ImageRoot.Mount.bind(models, MODELS_MOUNT + "/yunet"));
        Path log = work.resolve("agent-wrong-yunet.log");
        Process agent = agentImage.start(mounts, daemonSetEnv(Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap,
                "AGENT_HTTP_PORT", String.valueOf(KafkaServerProcess.freePort()), "AGENT_SITE_ID", SITE,
                "AGENT_YUNET_MODEL", YUNET_IN_IMAGE, "JAVA_TOOL_OPTIONS", "-Xmx512m")), log);
        running.add(() -> ImageRoot.stop(agent));
        assertTrue(agent.waitFor(3, TimeUnit.MINUTES), "the agent kept running on a wrong YuNet:\n" + tail(log));
        String out = Files.readString(log);
        assertTrue(agent.exitValue() != 0, "exit code 0 on a wrong YuNet:\n" + out);
        assertTrue(out.contains(YUNET_IN_IMAGE) && out.contains("expected " + FaceModels.YUNET_SHA256), out);
        assertFalse(out.contains("camera(s) started"), "nothing runs before the check:\n" + out);
        System.out.printf("agent image, wrong YuNet: exit %d; %s%n", agent.exitValue(), out.lines()
                .filter(l -> l.contains("expected " + FaceModels.YUNET_SHA256)).findFirst().orElse(""));
    }

    /**
     * The DaemonSet's volumes: /tmp and the data dir as emptyDir/hostPath, the enrollment folder
     * read-only, and YuNet's folder where the ConfigMap privface-face-models is mounted.
     */
    private List<ImageRoot.Mount> agentMounts() throws java.io.IOException, InterruptedException {
        return List.of(ImageRoot.Mount.tmpfs("/tmp"), ImageRoot.Mount.hostPath(agentDataDir(), "/var/lib/privface-agent"),
                ImageRoot.Mount.bind(root.resolve("test-data/synthetic/enroll"), "/var/lib/privface-agent-enroll"),
                ImageRoot.Mount.bind(FaceModels.sharedModels().resolve(FaceModels.YUNET_FILE).getParent(), MODELS_MOUNT + "/yunet"));
    }

    /** The DaemonSet's environment beside a test's own: the graph cache on the data directory, glibc's arenas. */
    private static Map<String, String> daemonSetEnv(Map<String, String> env) {
        Map<String, String> all = new java.util.HashMap<>(env);
        all.putIfAbsent("FACE_MODEL_CACHE", "/var/lib/privface-agent/models");
        all.putIfAbsent("MALLOC_ARENA_MAX", "2");
        return all;
    }

    /**
     * A fresh data directory as the DaemonSet's init container leaves its hostPath: owned by the
     * agent's user, 0700 (the agent tightens its data directory and cannot on one it does not own).
     */
    private Path agentDataDir() throws java.io.IOException, InterruptedException {
        Path dir = Files.createTempDirectory(work, "agent-data-");
        new ProcessBuilder("chown", "10001:10001", dir.toString()).inheritIO().start().waitFor();
        new ProcessBuilder("chmod", "0700", dir.toString()).inheritIO().start().waitFor();
        return dir;
    }

    /** The largest VmHWM among the started image's processes (the JVM under unshare), in KiB. */
    private static long peakRssKib(Process p) {
        return p.descendants().mapToLong(h -> {
            try {
                return Files.readAllLines(Path.of("/proc", Long.toString(h.pid()), "status")).stream()
                        .filter(l -> l.startsWith("VmHWM:")).mapToLong(l -> Long.parseLong(l.replaceAll("[^0-9]", "")))
                        .findFirst().orElse(0);
            } catch (java.io.IOException | RuntimeException e) {
                return 0; // exited meanwhile
            }
        }).max().orElse(0);
    }

    private static void awaitHealthy(Process p, int port, Path log) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (System.nanoTime() < deadline) {
            assertTrue(p.isAlive(), "exited during start-up:\n" + tail(log));
            if (health(port) == 200) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("not healthy on port " + port + " within 3 minutes:\n" + tail(log));
    }

    private static int health(int port) throws InterruptedException {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (java.io.IOException e) {
            return -1;
        }
    }

    private static String tail(Path log) throws java.io.IOException {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }
}
