package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;

/**
 * The demo as README command 1 runs it, with its defaults, on the synthetic faces in test-data/:
 * the gateway enrolls, the recognizer builds and signs the site's gallery, and only then are the
 * query images released, in two passes of the gateway: k-RR answers, then sign-cap vectors, each
 * at the whole ε per face, so both accuracies are measured on the same faces and printed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DemoAnswerTest {
    private final List<AutoCloseable> running = new ArrayList<>();
    private Path root;
    private Demo.Outcome outcome;
    private double epsilon;

    @BeforeAll
    void runOnce() throws Exception {
        root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        Path faces = root.resolve("test-data/synthetic");
        assumeTrue(Files.isDirectory(faces.resolve("query")), "no synthetic faces at " + faces);
        Map<String, String> opt = Demo.defaults();
        epsilon = Double.parseDouble(opt.get("--epsilon"));
        outcome = Demo.execute(root, faces, opt, Files.createTempDirectory("privface-demo-answer-"), running);
    }

    @AfterAll
    void stop() {
        FaultKit.closeAll(running);
    }

    @Test
    void everyQueryTrackGivesOneAnswerAndOneVectorEachAtTheWholeEpsilon() {
        assertEquals("compare", outcome.release());
        assertNotNull(outcome.gallery(), "the gallery the answers were decoded with");
        List<PerturbedFace> vectors = outcome.published().values().stream().filter(f -> f.getEnrollmentLabel() == null).toList();
        // 48 query photos in 18 clips of up to 3 (Demo's --clip-frames): a track per clip, or more where the
        // tracker loses a synthetic face that moves between photos.
        assertTrue(outcome.clips() > 0, "the demo plays clips");
        assertTrue(vectors.size() >= outcome.clips() && vectors.size() < outcome.queryImages(),
                "query vectors, one per track: " + vectors.size());
        assertEquals(vectors.size(), outcome.answers().size(), "one answer per track");
        assertEquals(outcome.queryRecords(), outcome.results().size(), "every record recognized once");
        for (PerturbedFace v : vectors) {
            assertEquals(epsilon, v.getMechanism().getEpsilonPerFace(), 1e-6);
            assertEquals(epsilon, v.getTrack().getEpsilonSpentInWindow(), 1e-6, "the track is charged what it states");
        }
        for (FaceAnswer a : outcome.answers().values()) {
            assertEquals("RR", a.getMechanism().getName());
            double e = a.getMechanism().getEpsilonPerFace();
            assertTrue(e <= epsilon && e > epsilon - 1e-6, "answer ε " + e);
            // The track's spend, as the record's track section states it, and the answer's ε both stay within
            // the per-track ε. (They differ by about 4e-9: the section states the policy's sign-cap ε per release,
            // 19.9999999955, the sampler spends at most the grant, 20; the ε per face on the record is the sampler's.)
            double charged = a.getTrack().getEpsilonSpentInWindow();
            assertTrue(charged <= epsilon + 1e-9 && Math.abs(charged - e) < 1e-6, "charged " + charged + ", stated " + e);
            assertEquals(outcome.gallery().getVersion(), a.getGallery().getVersion(), "decoded with the signed gallery");
            assertEquals(outcome.gallery().getLabels().size(), a.getGallery().getIdentities());
            RecognitionResult r = outcome.results().get(a.getEventId());
            assertEquals(a.getLabel(), r.getPredictedLabel());
            assertEquals(e, r.getEpsilonPerFace());
        }
    }

    @Test
    void bothAccuraciesAreMeasuredOnTheSameLabelledFacesAndPrinted() {
        Demo.Score answers = outcome.answerScore();
        Demo.Score vectors = outcome.vectors();
        assertEquals(vectors.faces(), answers.faces(), "the same labelled faces");
        assertTrue(answers.scored() >= outcome.clips(), "labelled tracks: " + answers.scored());
        double chance = 1.0 / outcome.people();
        // Floors far below what the run gives (README) and far above chance (1/6).
        assertTrue(answers.accuracy() >= Math.max(0.6, 3 * chance), "answer accuracy " + answers.accuracy());
        assertTrue(vectors.accuracy() >= 3 * chance, "vector accuracy " + vectors.accuracy());

        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream terminal = System.out;
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try {
            DemoSummary.print(outcome, root);
        } finally {
            System.setOut(terminal);
        }
        String summary = printed.toString(StandardCharsets.UTF_8);
        terminal.print(summary);
        String unit = outcome.clips() > 0 ? "tracks" : "faces";
        assertTrue(summary.contains(String.format("answer accuracy:      %.1f%% (%d/%d labelled %s), k-RR over C+1 = %d",
                100 * answers.accuracy(), answers.correct(), answers.scored(), unit,
                outcome.gallery().getLabels().size() + 1)), summary);
        assertTrue(summary.contains(String.format("vector accuracy:      %.1f%% (%d/%d labelled %s)",
                100 * vectors.accuracy(), vectors.correct(), vectors.scored(), unit)), summary);
        assertTrue(summary.contains("same faces:           yes"), summary);
        assertTrue(summary.contains("equal FPIR:           "), summary);
        assertTrue(summary.contains("open set:"), summary);
    }
}
