package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.imgcodecs.Imgcodecs;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.privacy.EigenBasis;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;

/**
 * Agent → real Kafka broker → recognizer, as separate processes, on the synthetic faces in
 * test-data/. One run at a large ε, then every published record is checked.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EndToEndTest {
    private static final double EPSILON = 400;
    private final List<AutoCloseable> running = new ArrayList<>();
    private Path root;
    private Path work;
    private Demo.Outcome outcome;

    @BeforeAll
    void runOnce() throws Exception {
        root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        Path faces = root.resolve("test-data/synthetic");
        assumeTrue(Files.isDirectory(faces.resolve("query")), "no synthetic faces at " + faces);
        work = Files.createTempDirectory("privface-e2e-");
        Map<String, String> opt = Demo.defaults();
        opt.put("--epsilon", Double.toString(EPSILON));
        opt.put("--detector", "haar"); // the seed mechanisms on the lightest detector
        opt.put("--mechanism", "peep");
        opt.put("--mode", "vector");
        opt.put("--components", "16");
        opt.put("--release", "vector"); // answers decode an embedding: the seed mechanisms release vectors only
        opt.put("--clip-frames", "1"); // every query photo its own track: each face's record is checked below
        outcome = Demo.execute(root, faces, opt, work, running);
    }

    @AfterAll
    void stop() {
        FaultKit.closeAll(running);
    }

    @Test
    void everyQueryIsAnsweredAndAccuracyIsWellAboveChance() {
        int queries = outcome.originOfQuery().size();
        assertTrue(queries >= 30, "faces detected in query frames: " + queries);
        assertEquals(queries, outcome.results().size(), "every query answered once");
        double chance = 1.0 / outcome.people();
        assertTrue(outcome.accuracy() >= Math.max(0.6, 3 * chance),
                "accuracy " + outcome.accuracy() + " vs chance " + chance);
    }

    @Test
    void everyRecordStatesAConsistentEpsilon() {
        for (PerturbedFace f : outcome.published().values()) {
            var m = f.getMechanism();
            assertEquals("PEEP", m.getName());
            assertEquals("vector", m.getSensitivityMode());
            assertEquals(EPSILON, m.getEpsilonPerFace(), 1e-9);
            assertEquals(m.getEpsilonPerFace(), m.getEpsilonPerCoordinate() * f.getDimension(), 1e-9);
            assertEquals(f.getDimension() / EPSILON, m.getNoiseScale(), 1e-12);
        }
        for (RecognitionResult r : outcome.results().values()) {
            assertEquals(outcome.published().get(r.getEventId()).getMechanism().getEpsilonPerFace(),
                    r.getEpsilonPerFace(), 0.0);
        }
    }

    @Test
    void noPublishedByteSequenceMatchesARawFaceCrop() throws Exception {
        // Every 12-byte window of every published record.
        int w = 12;
        Set<ByteBuffer> windows = new HashSet<>();
        for (PerturbedFace f : outcome.published().values()) {
            byte[] b = FaceRecords.encode(f);
            for (int i = 0; i + w <= b.length; i++) {
                windows.add(ByteBuffer.wrap(b, i, w).slice());
            }
        }
        int crops = 0;
        FaceDetector detector = FaceDetector.defaults();
        for (Path frame : frames()) {
            Mat img = Imgcodecs.imread(frame.toString());
            for (Rect r : detector.boxes(img)) {
                Optional<double[]> crop = FaceCrops.crop(img, r);
                if (crop.isEmpty()) {
                    continue;
                }
                crops++;
                byte[] px = new byte[crop.get().length];
                for (int i = 0; i < px.length; i++) {
                    px[i] = (byte) Math.round(crop.get()[i] * 255);
                }
                for (int i = 0; i + w <= px.length; i++) {
                    assertFalse(windows.contains(ByteBuffer.wrap(px, i, w).slice()),
                            "a published record contains 12 bytes of a raw crop of " + frame.getFileName());
                }
            }
            img.release();
        }
        assertTrue(crops > 0);
    }

    @Test
    void noPublishedVectorIsAnUnperturbedProjection() throws Exception {
        EigenBasis basis = EigenBasis.load(outcome.basisFile());
        List<double[]> clean = new ArrayList<>();
        FaceDetector detector = FaceDetector.defaults();
        for (Path frame : frames()) {
            Mat img = Imgcodecs.imread(frame.toString());
            for (Rect r : detector.boxes(img)) {
                FaceCrops.crop(img, r).ifPresent(c -> clean.add(basis.clampAndScale(basis.project(c))));
            }
            img.release();
        }
        for (PerturbedFace f : outcome.published().values()) {
            for (double[] c : clean) {
                double worst = 0;
                for (int k = 0; k < c.length; k++) {
                    worst = Math.max(worst, Math.abs(c[k] - f.getVector().get(k)));
                }
                assertTrue(worst > 1e-4, "a published vector equals a clean projection");
            }
        }
    }

    /** Issue 24: the demo's broker is secured by default, and its secrets stay in 0600 files. */
    @Test
    void eachServiceLogsInAsItsOwnPrincipalAndNoSecretIsInALogOrTheSummary() throws Exception {
        DemoSecurity security = outcome.stack().security();
        assertTrue(security.broker().secured(), "the demo's broker runs SASL_SSL unless --plaintext");
        List<String> secrets = new ArrayList<>(security.broker().secrets());
        secrets.add(outcome.stack().password());
        java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        java.io.PrintStream terminal = System.out;
        System.setOut(new java.io.PrintStream(printed, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            DemoSummary.print(outcome, root);
        } finally {
            System.setOut(terminal);
        }
        String summary = printed.toString(java.nio.charset.StandardCharsets.UTF_8);
        terminal.print(summary);
        assertTrue(summary.contains(security.vendorCredentials().toString()) && summary.contains(security.broker().caFile().toString())
                && summary.contains(security.operatorPasswordFile().toString()), summary);
        List<Path> logs;
        try (Stream<Path> s = Files.list(work)) {
            logs = s.filter(p -> p.toString().endsWith(".log")).toList();
        }
        assertTrue(logs.stream().map(p -> p.getFileName().toString()).toList().containsAll(List.of("kafka.log", "agent.log",
                "recognizer.log")), logs.toString());
        for (String secret : secrets) {
            assertFalse(summary.contains(secret), "a secret in the summary");
            for (Path log : logs) {
                assertFalse(Files.readString(log).contains(secret), "a secret in " + log);
            }
        }
        for (String service : List.of("agent.log", "recognizer.log")) {
            String log = Files.readString(work.resolve(service));
            assertFalse(log.contains("AuthorizationException") || log.contains("AuthenticationException"),
                    service + " was denied something; see " + work.resolve(service));
        }
    }

    private List<Path> frames() throws Exception {
        try (Stream<Path> s = Files.walk(root.resolve("test-data/synthetic/query"))) {
            return s.filter(p -> p.toString().endsWith(".png")).sorted().toList();
        }
    }
}
