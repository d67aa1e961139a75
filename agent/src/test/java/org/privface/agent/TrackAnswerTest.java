package org.privface.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.answer.GalleryFollower;
import org.privface.agent.answer.QueryAnswerer;
import org.privface.agent.detect.FaceDetector;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.publish.DiskSpool;
import org.privface.agent.publish.PerturbedRecords;
import org.privface.agent.release.Mechanisms;
import org.privface.agent.release.ReleaseCounts;
import org.privface.agent.release.ReleaseDesk;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;

/**
 * One answer per track (issue 45): the desk holds a granted track's answer for its next faces,
 * decodes them together as their mean direction and releases once, with the third face or at the
 * track's end; the track's later faces release nothing more under {@code once}.
 */
class TrackAnswerTest {
    private static final String SITE = "track-answers";
    private static final KeyPair RECOGNIZER = SignedControl.generate();

    @Test
    void aTracksFacesAreDecodedTogetherAndAnsweredOnce(@TempDir Path dir) throws Exception {
        AgentSettings s = new AgentSettings();
        s.setSiteId(SITE);
        s.setDataDir(dir);
        // ε 20: k-RR over 3 people keeps the decoder's answer with probability 1 − 6·10⁻⁹.
        SitePolicy policy = new SitePolicy(Mechanism.EMBEDDING, "sign-cap", 20, "once", Duration.ofMinutes(10), false);
        FaceDetector detector = new FaceDetector(s.getCascade(), s.getScaleFactor(), s.getMinNeighbors(), s.getMinFaceSize());
        Mechanisms mechanisms = new Mechanisms(s, detector, EnrollmentLedger.open(dir.resolve("ledger.txt"), 1000));
        EmbeddingMechanism m = (EmbeddingMechanism) mechanisms.forRelease(policy, 20);

        java.util.Random inputs = new java.util.Random(45); // test faces only, not noise
        double[][] people = new double[3][m.basis().inputDimension()];
        List<Double> templates = new ArrayList<>();
        for (double[] p : people) {
            for (int i = 0; i < p.length; i++) {
                p[i] = inputs.nextGaussian();
            }
            for (double v : m.direction(p)) {
                templates.add(v);
            }
        }
        FaceGallery g = FaceGallery.newBuilder().setSiteId(SITE).setVersion(1).setBuiltAt(Instant.now())
                .setBasisId(m.releaseSpace()).setK(m.k()).setLabels(List.of("alice", "bob", "carol"))
                .setTemplates(templates).setThreshold(-1).setEnrollmentReleases(9).setCalibration(null).build();
        byte[] body = FaceRecords.encode(g);
        ProducerRecord<String, byte[]> signed = new ProducerRecord<>(Topics.gallery(SITE), SITE, body);
        SignedControl.sign(SignedControl.GALLERY_DOMAIN, RECOGNIZER.getPrivate(), "recognizer", SITE, "recognizer", 1, body)
                .addTo(signed.headers());
        GalleryFollower follower = new GalleryFollower(SITE, Map.of("recognizer", RECOGNIZER.getPublic()));
        assertTrue(follower.offer(Topics.gallery(SITE), SITE, signed.headers(), body).isEmpty(), "gallery taken");

        try (CameraWorkerTest.SpoolingPublisher out = new CameraWorkerTest.SpoolingPublisher(dir)) {
            QueryAnswerer answers = new QueryAnswerer(QueryAnswerer.Mode.ANSWER, SITE, follower, out.uplink, 3);
            ReleaseCounts counts = new ReleaseCounts(SITE, "door", new SimpleMeterRegistry(), new SimpleMeterRegistry());
            ReleaseDesk desk = new ReleaseDesk("door", mechanisms, new PerturbedRecords(SITE), out.uplink, null, counts);
            desk.answers(answers);
            desk.policy(policy, 1);
            List<String> origins = new ArrayList<>();

            // Track a: bob, then alice twice. bob's face alone would answer bob; the three together answer alice.
            double[][] trackA = {people[1], people[0], near(people[0], inputs)};
            for (int i = 0; i < trackA.length; i++) {
                offer(desk, "trk-a", i + 1, trackA[i], origins, "a" + i);
                assertEquals(i < 2 ? 0 : 1, answers(out.spool).size(), "the answer waits for the third face");
            }
            // Its later faces are part of no answer: once per track.
            offer(desk, "trk-a", 4, people[2], origins, "a3");
            offer(desk, "trk-a", 5, people[2], origins, "a4");
            // Track b ends after two faces of carol: its answer goes out at the end.
            offer(desk, "trk-b", 1, people[2], origins, "b0");
            offer(desk, "trk-b", 2, near(people[2], inputs), origins, "b1");
            assertEquals(1, answers(out.spool).size());
            desk.ended(List.of("trk-a", "trk-b"), Instant.now());

            List<FaceAnswer> sent = answers(out.spool);
            assertEquals(2, sent.size(), "one answer per track");
            assertEquals("trk-a", sent.get(0).getTrackId());
            assertEquals("alice", sent.get(0).getLabel(), "the three faces decoded together");
            assertEquals("trk-b", sent.get(1).getTrackId());
            assertEquals("carol", sent.get(1).getLabel());
            for (FaceAnswer a : sent) {
                assertTrue(a.getMechanism().getEpsilonPerFace() <= 20);
                assertEquals(1, a.getTrack().getReleaseIndex());
            }
            // Each answer names its first face's origin, once.
            assertEquals(List.of("a0:" + sent.get(0).getEventId(), "b0:" + sent.get(1).getEventId()), origins);
            assertEquals(2L, answers.report().get("answers"));
        }
    }

    @Test
    void theShippedAnswerSettingsAndTheirBounds() {
        AgentSettings.Answer a = new AgentSettings.Answer();
        assertEquals(3, a.getTrackFaces(), "the shipped default decodes three faces together");
        assertEquals(20.0, a.getTemplateEpsilon(), "templates at ε 20 (docs/frontier.md, large galleries)");
        assertEquals(2, a.getTemplateReleases());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> a.setTrackFaces(0));
        assertTrue(e.getMessage().contains("agent.answer.track-faces"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> a.setTemplateReleases(0));
        assertThrows(IllegalArgumentException.class, () -> a.setTemplateEpsilon(Double.NaN));
        // A vector site releases no templates: any floor will do. An answering one must fit them under it.
        a.checkTemplateEpsilon(10);
        a.setRelease("answer");
        a.checkTemplateEpsilon(20);
        e = assertThrows(IllegalArgumentException.class, () -> a.checkTemplateEpsilon(10));
        assertTrue(e.getMessage().contains("agent.answer.template-epsilon 20.0 is above the floor's epsilon-max 10.0"),
                e.getMessage());
        AgentSettings s = new AgentSettings();
        assertThrows(IllegalArgumentException.class, () -> s.setFolderFrames("video"));
        s.setFolderFrames("sequence");
        assertTrue(!s.folderStills());
    }

    private static double[] near(double[] p, java.util.Random r) {
        double[] q = p.clone();
        for (int i = 0; i < q.length; i++) {
            q[i] += 0.1 * r.nextGaussian();
        }
        return q;
    }

    private static void offer(ReleaseDesk desk, String track, long frames, double[] embedding, List<String> origins,
                              String origin) {
        desk.offer(new ReleaseDesk.Offer(track, frames, null, null, () -> embedding, () -> embedding, () -> embedding,
                Instant.now(), Instant.now(), id -> origins.add(origin + ":" + id)));
    }

    private static List<FaceAnswer> answers(DiskSpool spool) throws Exception {
        List<FaceAnswer> out = new ArrayList<>();
        for (DiskSpool.Spooled e : spool.peek(1000)) {
            if (e.entry().topic().equals(Topics.answer(SITE))) {
                out.add(FaceRecords.decodeAnswer(e.entry().value()));
            }
        }
        return out;
    }
}
