package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.KeyPair;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.privface.wire.avro.AnswerEpsilonScope;
import org.privface.wire.avro.AnswerMechanism;
import org.privface.wire.avro.AnswerTrack;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.GalleryCalibration;
import org.privface.wire.avro.GalleryRef;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;

/** The answer record and the gallery model: what the validator accepts, refuses, and how a gallery is signed. */
class AnswerWireTest {
    /** κ = 0.9994… for C = 14: a = 2^62 − 2^51. */
    private static final long KEEP = (1L << 62) - (1L << 51);

    static FaceAnswer.Builder answer() {
        int c = 14;
        double eps = Math.log((double) KEEP * c / (double) ((1L << 62) - KEEP)) * (1 + 1e-12);
        return FaceAnswer.newBuilder().setEventId("e-1").setSiteId("north").setCameraId("cam-1").setTrackId("t-1")
                .setCaptureTimestamp(Instant.ofEpochMilli(1_700_000_000_000L))
                .setGallery(GalleryRef.newBuilder().setVersion(3).setIdentities(c).setBasisId("fr_feature-abc.k24").build())
                .setOutput(2).setLabel("carol")
                .setMechanism(AnswerMechanism.newBuilder().setName("RR").setKeepNumerator(KEEP).setEpsilonPerFace(eps)
                        .setEpsilonCovers(AnswerEpsilonScope.QUERY_FACE).build())
                .setTrack(AnswerTrack.newBuilder().setReleaseIndex(1).setEpsilonSpentInWindow(eps).setEpsilonBudget(20)
                        .setBudgetPolicy("withhold").setLinking(true).setPersonEpsilonBudget(20.0).build());
    }

    static FaceGallery.Builder gallery() {
        double r = Math.sqrt(0.5);
        return FaceGallery.newBuilder().setSiteId("north").setVersion(3).setBuiltAt(Instant.ofEpochMilli(1_700_000_000_000L))
                .setBasisId("fr_feature-abc.k2").setK(2).setLabels(List.of("alice", "bob"))
                .setTemplates(List.of(1.0, 0.0, r, -r)).setThreshold(0.4).setEnrollmentReleases(10)
                .setCalibration(GalleryCalibration.newBuilder().setStrangerSet("lfw-public").setStrangers(500)
                        .setAccepted(4).setTargetRate(0.01).build());
    }

    @Test
    void anAnswerRoundTripsAndStatesItsEpsilon() {
        FaceAnswer a = answer().build();
        FaceAnswer back = FaceRecords.decodeAnswerFromTopic(Topics.answer("north"), FaceRecords.encode(a));
        assertEquals(a, back);
        FaceAnswer unknown = answer().setOutput(14).setLabel(null).build();
        assertEquals(unknown, FaceRecords.decodeAnswer(FaceRecords.encode(unknown)));
        assertThrows(InvalidRecordException.class,
                () -> FaceRecords.decodeAnswerFromTopic(Topics.answer("south"), FaceRecords.encode(a)), "another site's topic");
    }

    @Test
    void anAnswerThatUnderstatesItsEpsilonOrMisnamesItsOutputIsRefused() {
        List<Consumer<FaceAnswer.Builder>> bad = new ArrayList<>();
        bad.add(b -> b.getMechanism().setEpsilonPerFace(b.getMechanism().getEpsilonPerFace() * 0.999));
        bad.add(b -> b.getMechanism().setName("PEEP"));
        bad.add(b -> b.getMechanism().setKeepNumerator((1L << 62) / 15)); // κ ≤ 1/(C + 1): no truthful answer
        bad.add(b -> b.getMechanism().setKeepNumerator(1L << 62));
        bad.add(b -> b.setOutput(15));
        bad.add(b -> b.setOutput(-1));
        bad.add(b -> b.setOutput(14)); // unknown with a label
        bad.add(b -> b.setLabel(null)); // an identity without one
        bad.add(b -> b.setLabel("a b"));
        bad.add(b -> b.getGallery().setIdentities(0));
        bad.add(b -> b.getGallery().setVersion(0));
        bad.add(b -> b.getTrack().setEpsilonSpentInWindow(21));
        bad.add(b -> b.getTrack().setPersonEpsilonBudget(null)); // linking on states the policy's bound
        bad.add(b -> b.getTrack().setLinking(false)); // and off states none
        bad.add(b -> b.setSiteId("a.b"));
        for (int i = 0; i < bad.size(); i++) {
            FaceAnswer.Builder b = answer(); // fresh nested records each time, edited in place
            bad.get(i).accept(b);
            int n = i;
            assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(b.build()), "case " + n);
        }
    }

    @Test
    void aGalleryRoundTripsAndItsTemplatesComeBackAsRows() {
        FaceGallery g = gallery().build();
        FaceGallery back = FaceRecords.decodeGalleryFromTopic(Topics.gallery("north"), FaceRecords.encode(g));
        assertEquals(g, back);
        double[][] t = FaceRecords.templates(back);
        assertArrayEquals(new double[] {1, 0}, t[0]);
        assertEquals(g.getTemplates(), FaceRecords.flatTemplates(t));
        FaceGallery closed = gallery().setThreshold(Double.NEGATIVE_INFINITY).setCalibration(null).build();
        assertEquals(closed, FaceRecords.decodeGalleryFromTopic(Topics.gallery("north"), FaceRecords.encode(closed)));
        assertThrows(InvalidRecordException.class,
                () -> FaceRecords.decodeGalleryFromTopic(Topics.gallery("south"), FaceRecords.encode(g)));
    }

    @Test
    void aMalformedOrOversizedGalleryIsRefused() {
        List<FaceGallery.Builder> bad = List.of(
                gallery().setTemplates(List.of(1.0, 0.0, 1.0, 1.0)), // not unit
                gallery().setTemplates(List.of(1.0, 0.0, 1.0)), // not C × k
                gallery().setTemplates(List.of(1.0, 0.0, Double.NaN, 1.0)),
                gallery().setLabels(List.of("alice", "alice")),
                gallery().setThreshold(Double.NaN),
                gallery().setK(0).setTemplates(List.of()),
                gallery().setEnrollmentReleases(1),
                gallery().setVersion(0),
                gallery().setCalibration(GalleryCalibration.newBuilder().setStrangerSet("lfw-public").setStrangers(5)
                        .setAccepted(6).setTargetRate(0.01).build()));
        for (FaceGallery.Builder b : bad) {
            assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(b.build()));
        }
        // C = 1000 people at k = 128 is over the 1 MB a record may have.
        List<String> labels = new ArrayList<>();
        List<Double> t = new ArrayList<>();
        for (int c = 0; c < WireLimits.MAX_GALLERY_IDENTITIES; c++) {
            labels.add("p" + c);
            for (int i = 0; i < 128; i++) {
                t.add(i == 0 ? 1.0 : 0.0);
            }
        }
        FaceGallery big = gallery().setK(128).setLabels(labels).setTemplates(t).setEnrollmentReleases(1000).build();
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(big));
        byte[] tooLong = new byte[WireLimits.MAX_GALLERY_BYTES + 1];
        tooLong[0] = (byte) 0xC3;
        tooLong[1] = 1;
        assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeGalleryFromTopic(Topics.gallery("north"), tooLong));
    }

    @Test
    void aGallerySignatureIsNeitherAControlSignatureNorAnotherSitesOrBody() {
        KeyPair kp = SignedControl.generate();
        byte[] body = FaceRecords.encode(gallery().build());
        var e = SignedControl.sign(SignedControl.GALLERY_DOMAIN, kp.getPrivate(), "recognizer-1", "north", "recognizer",
                7, body);
        assertTrue(SignedControl.verify(SignedControl.GALLERY_DOMAIN, kp.getPublic(), "north", e, body));
        assertFalse(SignedControl.verify(kp.getPublic(), "north", e, body), "not valid as a control record");
        assertFalse(SignedControl.verify(SignedControl.GALLERY_DOMAIN, kp.getPublic(), "south", e, body));
        byte[] tampered = body.clone();
        tampered[tampered.length - 1] ^= 1;
        assertFalse(SignedControl.verify(SignedControl.GALLERY_DOMAIN, kp.getPublic(), "north", e, tampered));
        assertFalse(SignedControl.verify(SignedControl.GALLERY_DOMAIN, SignedControl.generate().getPublic(), "north", e, body));
        assertThrows(IllegalArgumentException.class,
                () -> SignedControl.message("privface-other-v1", "north", "k", "o", 1, body));
    }
}
