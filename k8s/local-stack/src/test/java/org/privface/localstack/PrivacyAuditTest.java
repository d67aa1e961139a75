package org.privface.localstack;

import static org.privface.localstack.FaultKit.deleteRecursively;
import static org.privface.localstack.FaultKit.keepLogs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.micronaut.context.ApplicationContext;
import io.micronaut.runtime.server.EmbeddedServer;
import org.apache.avro.generic.GenericRecord;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Scalar;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.AgentPipeline;
import org.privface.agent.AgentSettings;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.image.OpenCv;
import org.privface.broker.KafkaServerProcess;
import org.privface.broker.ManagedProcess;
import org.privface.privacy.L1Ball;
import org.privface.privacy.fisher.FisherBasis;
import org.privface.privacy.fisher.FisherMechanism;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.TopicApplier;
import org.privface.wire.topics.Topics;

/**
 * What leaves the gateway, on real faces: the agent (in-process) runs the recommended FISHER
 * preset over ORL faces framed as camera stills, the recognizer (its own JVM) answers them, and
 * then every record of every topic on the real broker, Kafka's internal ones included, is read
 * back and audited:
 * <ul>
 *   <li>each record parses against the schema its topic declares (the Avro files of
 *       broker-config/schemas, with nothing after the record; the control and status JSON against
 *       their field lists), carries only allowed headers, and no field holds anything image-like
 *       (no bytes field, no base64 run, no image signature, no array longer than a vector);</li>
 *   <li>no published vector is the clean projection of a face: the test fits the same Fisher basis
 *       from the same enrollment folder (its id must match the records') and measures every
 *       vector's distance to the clean projection of every face the agent saw; the residuals of the
 *       queries against their own faces must look like Laplace noise of the stated scale.</li>
 * </ul>
 * Skips when the ORL data set is absent (FACE_DATASETS or -Dprivface.datasets).
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class PrivacyAuditTest {

    private static final String SITE = "audit";
    private static final double EPSILON = 8;
    /** The operator key the audited gateway trusts, under the key id "auditor". */
    private static final java.security.KeyPair OPERATOR_KEY = SignedControl.generate();
    private static final int PEOPLE = 15;
    /** ORL images 1..6 of a person are enrolled, 7..10 are camera stills. */
    private static final int ENROLLED = 6;
    /** A published vector closer than this many noise scales to a clean projection counts as unperturbed. */
    private static final double MIN_DISTANCE_IN_SCALES = 1e-3;

    @Test
    void nothingOnAnyTopicIsAFaceOrACleanProjection() throws Exception {
        long t0 = System.nanoTime();
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        Optional<Path> datasets = FaceDatasets.root();
        Path orl = datasets.map(d -> d.resolve("orl")).orElse(null);
        assumeTrue(orl != null && Files.isDirectory(orl.resolve("s1")),
                "ORL faces not found (set FACE_DATASETS or -Dprivface.datasets to the shared datasets folder): skipping the privacy audit");
        BrokerOutageTest.assumeBrokerJarsResolvable(root);
        assumeTrue(Files.isRegularFile(root.resolve("recognizer/target/runtime.classpath")),
                "recognizer/target/runtime.classpath is missing: build the project first (mvn install -DskipTests)");

        Path work = Files.createTempDirectory("privface-audit-");
        KafkaServerProcess kafka = null;
        ManagedProcess recognizer = null;
        ApplicationContext ctx = null;
        boolean passed = false;
        try {
            Path enrollDir = work.resolve("enroll");
            Path queryDir = work.resolve("query");
            int frames = writeFrames(orl, enrollDir, queryDir);

            kafka = KafkaServerProcess.start(root, work);
            double brokerUp = seconds(t0);
            String bootstrap = kafka.bootstrapServers();
            Properties ap = new Properties();
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin admin = Admin.create(ap)) {
                new TopicApplier(admin).apply(Topics.definitions(List.of(SITE)));
            }
            // An operator's signed instruction on the control topic (the same ε): the gateway replays it at start.
            Properties pp = new Properties();
            pp.put("bootstrap.servers", bootstrap);
            try (KafkaProducer<String, String> p = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
                ProducerRecord<String, String> change = new ProducerRecord<>(Topics.control(SITE), SITE,
                        "{\"epsilon\": " + EPSILON + "}");
                SignedControl.sign(OPERATOR_KEY.getPrivate(), "auditor", SITE, "auditor", System.currentTimeMillis(),
                        change.value().getBytes(StandardCharsets.UTF_8)).addTo(change.headers());
                p.send(change).get(20, TimeUnit.SECONDS);
            }

            int recognizerPort = KafkaServerProcess.freePort();
            recognizer = ManagedProcess.java("recognizer", DemoProcesses.classpath(root, "recognizer"),
                    "org.privface.recognizer.Application",
                    List.of("-Xmx1g", "-Dai.djl.offline=true", "-Dmicronaut.server.port=" + recognizerPort,
                            "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"),
                    List.of(), Map.of("KAFKA_BOOTSTRAP_SERVERS", bootstrap, "OMP_WAIT_POLICY", "PASSIVE"), work);

            Path ledger = work.resolve("ledger.csv");
            Map<String, Object> props = new HashMap<>();
            props.put("kafka.bootstrap.servers", bootstrap);
            props.put("micronaut.server.port", -1);
            props.put("micronaut.server.host", "127.0.0.1");
            props.put("agent.site-id", SITE);
            props.put("agent.gateway-id", "audit-gw");
            props.put("agent.enroll-folder", enrollDir.toString());
            props.put("agent.source", queryDir.toString());
            props.put("agent.mechanism", "fisher");
            props.put("agent.detector", "haar"); // FISHER's pixel crops on the cascade (the shipped default is YuNet)
            props.put("agent.sensitivity-mode", "l1-clip");
            props.put("agent.epsilon", EPSILON);
            props.put("agent.enroll-releases", 2);
            props.put("agent.data-dir", work.resolve("agent-data").toString());
            props.put("agent.control.operator-keys.auditor", SignedControl.base64(OPERATOR_KEY.getPublic()));
            props.put("agent.ledger", ledger.toString());
            ctx = ApplicationContext.builder()
                    .classLoader(new BrokerOutageTest.HidingClassLoader(PrivacyAuditTest.class.getClassLoader(),
                            org.privface.recognizer.Application.class))
                    .properties(BrokerOutageTest.HidingClassLoader.agentAlone(props))
                    .start();
            ctx.getBean(EmbeddedServer.class).start(); // its ServerStartupEvent starts the pipeline
            AgentPipeline pipeline = ctx.getBean(AgentPipeline.class);
            assertTrue(assertTimeoutPreemptively(Duration.ofSeconds(60), pipeline::awaitCompletion),
                    "the agent enrolled, read every still and had every record acknowledged");
            long published = pipeline.published();
            double agentDone = seconds(t0);
            ctx.close(); // flushes the ledger
            ctx = null;
            Map<String, String> originOf = SceneAgent.origins(ledger);
            assertTrue(originOf.size() >= frames / 2, "faces released from " + frames + " stills: " + originOf.size());

            // Wait for the recognizer's answers, so the results topic and its group's offsets are audited too.
            DemoProcesses.awaitHealthy(recognizer, recognizerPort);
            Set<String> answered = new HashSet<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(45).toNanos();
            List<TopicAudit.Captured> everything = List.of();
            while (answered.size() < originOf.size() && System.nanoTime() < deadline) {
                Thread.sleep(1000);
                everything = TopicAudit.readEverything(bootstrap, Duration.ofSeconds(20));
                answered.clear();
                for (TopicAudit.Captured c : everything) {
                    if (c.topic().equals(Topics.RESULTS) && c.value() != null) {
                        answered.add(org.privface.wire.FaceRecords.decodeResult(c.value()).getEventId().toString());
                    }
                }
            }
            assertEquals(originOf.keySet(), answered, "every query answered on " + Topics.RESULTS);
            double allAnswered = seconds(t0);
            // Commits of the recognizer's group land after its results: read once more for the final state.
            Thread.sleep(1000);
            everything = TopicAudit.readEverything(bootstrap, Duration.ofSeconds(20));

            // (a) every record on every topic against what its topic declares.
            TopicAudit audit = new TopicAudit(root.resolve("broker-config/schemas"), false);
            audit.operatorKeys.put("auditor", OPERATOR_KEY.getPublic());
            audit.check(everything);
            StringBuilder table = new StringBuilder();
            audit.volume.forEach((t, v) -> table.append(String.format(Locale.ROOT, "  %-28s %6d records %9d bytes%n",
                    t, v.records(), v.bytes())));
            System.out.print("privacy audit: bytes per topic (key + value + headers)\n" + table);
            assertTrue(audit.problems.isEmpty(), audit.problems.size() + " problem(s), e.g.\n  "
                    + String.join("\n  ", audit.problems.subList(0, Math.min(20, audit.problems.size()))));
            List<GenericRecord> faces = new ArrayList<>(audit.decoded.getOrDefault(Topics.query(SITE), List.of()));
            long queries = faces.size();
            faces.addAll(audit.decoded.getOrDefault(Topics.enrollment(SITE), List.of()));
            assertEquals(published, faces.size(), "every acknowledged record was read back and audited");
            assertEquals(originOf.size(), queries);
            for (String t : List.of(Topics.status(SITE), Topics.control(SITE), Topics.RESULTS, "__consumer_offsets")) {
                assertTrue(audit.volume.getOrDefault(t, new TopicAudit.Volume(0, 0)).records() > 0, t + " was audited empty");
            }

            // (b) no vector is a clean projection; residuals are noise of the stated scale.
            AgentSettings agent = new AgentSettings();
            FaceDetector detector = new FaceDetector(agent.getCascade(), agent.getScaleFactor(), agent.getMinNeighbors(),
                    agent.getMinFaceSize(), agent.getMaxDetectWidth());
            LabelledFaces enrolled = FaceDatasets.detected(enrollDir, detector, FaceCrops.Shape.PEEP);
            FisherMechanism.Preset preset = FisherMechanism.Preset.forEpsilon(EPSILON);
            FisherBasis basis = FisherBasis.fit(enrolled.faces(), enrolled.labels(), enrolled.names().size(),
                    FaceCrops.WIDTH, FaceCrops.HEIGHT, preset.p(), preset.k(), preset.quantile());
            List<double[]> clean = new ArrayList<>();
            for (double[] f : enrolled.faces()) {
                clean.add(L1Ball.clipInPlace(basis.project(f), basis.l1Radius()));
            }
            Map<String, List<double[]>> cleanOfFrame = new HashMap<>();
            try (Stream<Path> s = Files.walk(queryDir)) {
                for (Path frame : s.filter(p -> p.toString().endsWith(".png")).sorted().toList()) {
                    List<double[]> inFrame = new ArrayList<>();
                    Mat img = Imgcodecs.imread(frame.toString(), Imgcodecs.IMREAD_COLOR);
                    Mat grey = FaceCrops.grey(img);
                    for (Rect r : detector.boxes(grey)) {
                        FaceCrops.crop(grey, r, FaceCrops.Shape.PEEP)
                                .ifPresent(c -> inFrame.add(L1Ball.clipInPlace(basis.project(c), basis.l1Radius())));
                    }
                    grey.release();
                    img.release();
                    clean.addAll(inFrame);
                    cleanOfFrame.put(queryDir.relativize(frame).toString(), inFrame);
                }
            }
            double closest = Double.MAX_VALUE;
            List<double[]> residuals = new ArrayList<>();
            for (GenericRecord f : faces) {
                GenericRecord m = (GenericRecord) f.get("mechanism");
                // FISHER fits on the enrolled identities without privacy, so its records say whom ε covers (docs/privacy.md).
                assertEquals(basis.id() + ".query-faces-only", m.get("basisId").toString(),
                        "the test fitted the agent's own basis, and the record says ε covers query faces only");
                double b = (Double) m.get("noiseScale");
                assertEquals(2 * basis.l1Radius() / EPSILON, b, 1e-9 * b, "stated noise scale is Laplace(2R/ε)");
                double[] v = vector(f);
                for (double[] c : clean) {
                    closest = Math.min(closest, distance(v, c) / b);
                }
                String origin = originOf.get(f.get("eventId").toString());
                if (origin != null) {
                    double[] own = cleanOfFrame.get(origin).stream().min(Comparator.comparingDouble(c -> distance(v, c)))
                            .orElseThrow(() -> new AssertionError("no face found again in " + origin));
                    double[] r = new double[v.length];
                    for (int k = 0; k < v.length; k++) {
                        r[k] = (v[k] - own[k]) / b;
                    }
                    residuals.add(r);
                }
            }
            assertTrue(closest > MIN_DISTANCE_IN_SCALES, "a published vector lies within " + closest
                    + " noise scales of a clean projection");
            Residuals res = Residuals.of(residuals);
            System.out.printf(Locale.ROOT, "privacy audit: %d stills of %d ORL people, %d records (%d queries), "
                            + "basis %s, ε %.1f, noise scale b %.4f; closest vector to any of %d clean projections: %.3f b; "
                            + "query residuals / b: mean %.3f, sd %.3f (Laplace: 0, %.3f), mean |r| %.3f (1), "
                            + "per-coordinate sd %.2f..%.2f, %d distinct of %d; broker up %.1f s, agent done %.1f s, "
                            + "all answered %.1f s, %.1f s in all%n",
                    frames, PEOPLE, faces.size(), queries, basis.id(), EPSILON, 2 * basis.l1Radius() / EPSILON, clean.size(),
                    closest, res.mean(), res.sd(), Math.sqrt(2), res.meanAbs(), res.minCoordinateSd(), res.maxCoordinateSd(),
                    res.distinct(), residuals.size(), brokerUp, agentDone, allAnswered, seconds(t0));
            assertEquals(residuals.size(), res.distinct(), "no two queries carry the same noise");
            assertTrue(Math.abs(res.mean()) < 0.35, "residual mean " + res.mean());
            assertTrue(res.sd() > 0.7 * Math.sqrt(2) && res.sd() < 1.4 * Math.sqrt(2), "residual sd " + res.sd());
            assertTrue(res.meanAbs() > 0.7 && res.meanAbs() < 1.3, "residual mean |r| " + res.meanAbs());
            assertTrue(res.minCoordinateSd() > 0.5 * Math.sqrt(2), "a coordinate with almost no noise: sd "
                    + res.minCoordinateSd());
            assertTrue(res.zeros() < 0.01 * residuals.size() * basis.dimension(), res.zeros() + " residual coordinates are exactly 0");
            passed = true;
        } finally {
            if (ctx != null) {
                ctx.close();
            }
            if (recognizer != null) {
                recognizer.close();
            }
            if (kafka != null) {
                kafka.close();
            }
            if (!passed) {
                keepLogs(work, root.resolve("k8s/local-stack/target/privacy-audit-logs"));
            }
            deleteRecursively(work);
        }
    }

    /**
     * ORL faces as camera stills: each 92×112 image enlarged 2× onto a 320×300 background, so the
     * detector sees a face with surroundings. Images 1..ENROLLED of the first PEOPLE people go to
     * enroll/sN/, the rest to query/sN/. Written to the temporary folder only. Returns the stills.
     */
    private static int writeFrames(Path orl, Path enroll, Path query) throws Exception {
        OpenCv.load();
        int stills = 0;
        for (int p = 1; p <= PEOPLE; p++) {
            for (int i = 1; i <= 10; i++) {
                Path src = orl.resolve("s" + p).resolve(i + ".pgm");
                Mat face = Imgcodecs.imread(src.toString(), Imgcodecs.IMREAD_GRAYSCALE);
                assertFalse(face.empty(), "cannot read " + src);
                Mat big = new Mat();
                Imgproc.resize(face, big, new Size(184, 224), 0, 0, Imgproc.INTER_CUBIC);
                Mat frame = new Mat(300, 320, CvType.CV_8UC1, new Scalar(96 + 8 * (p % 5)));
                big.copyTo(frame.submat(new Rect(68 + 4 * (i % 3), 38 + 3 * (i % 4), 184, 224)));
                Mat bgr = new Mat();
                Imgproc.cvtColor(frame, bgr, Imgproc.COLOR_GRAY2BGR);
                Path dir = Files.createDirectories((i <= ENROLLED ? enroll : query).resolve("s" + p));
                assertTrue(Imgcodecs.imwrite(dir.resolve(String.format("%02d.png", i)).toString(), bgr));
                if (i > ENROLLED) {
                    stills++;
                }
                for (Mat m : List.of(face, big, frame, bgr)) {
                    m.release();
                }
            }
        }
        return stills;
    }

    private static double seconds(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    private static double[] vector(GenericRecord f) {
        List<?> v = (List<?>) f.get("vector");
        double[] out = new double[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = ((Number) v.get(i)).doubleValue();
        }
        return out;
    }

    private static double distance(double[] a, double[] b) {
        if (a.length != b.length) {
            return Double.MAX_VALUE;
        }
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (a[i] - b[i]) * (a[i] - b[i]);
        }
        return Math.sqrt(s);
    }

    /** Summary of residuals in noise scales: a Laplace(1) coordinate has mean 0, sd √2 and mean |r| 1. */
    record Residuals(double mean, double sd, double meanAbs, double minCoordinateSd, double maxCoordinateSd, int distinct,
                     int zeros) {
        static Residuals of(List<double[]> rs) {
            int n = 0;
            double sum = 0;
            double sq = 0;
            double abs = 0;
            int zeros = 0;
            int dim = rs.get(0).length;
            double[] cs = new double[dim];
            double[] cq = new double[dim];
            Set<List<Double>> seen = new HashSet<>();
            for (double[] r : rs) {
                List<Double> key = new ArrayList<>();
                for (int k = 0; k < dim; k++) {
                    n++;
                    sum += r[k];
                    sq += r[k] * r[k];
                    abs += Math.abs(r[k]);
                    cs[k] += r[k];
                    cq[k] += r[k] * r[k];
                    zeros += r[k] == 0 ? 1 : 0;
                    key.add(r[k]);
                }
                seen.add(key);
            }
            double mean = sum / n;
            double min = Double.MAX_VALUE;
            double max = 0;
            for (int k = 0; k < dim; k++) {
                double m = cs[k] / rs.size();
                double sd = Math.sqrt(Math.max(0, cq[k] / rs.size() - m * m));
                min = Math.min(min, sd);
                max = Math.max(max, sd);
            }
            return new Residuals(mean, Math.sqrt(Math.max(0, sq / n - mean * mean)), abs / n, min, max, seen.size(), zeros);
        }
    }


}
