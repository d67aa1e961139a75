package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.junit.jupiter.api.Test;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.AnswerEpsilonScope;
import org.privface.wire.avro.AnswerMechanism;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.GalleryRef;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/** The audit of {@link PrivacyAuditTest} flags what it must: each case here is one thing a leak would look like. */
class TopicAuditTest {
    private static final String QUERY = "privface.audit.query";
    private static final String STATUS = "privface.audit.status";

    private static TopicAudit audit() throws Exception {
        Path root = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
        return new TopicAudit(root.resolve("broker-config/schemas"), false);
    }

    private static byte[] face() {
        return FaceRecords.encode(PerturbedFace.newBuilder().setEventId("e-1").setSiteId("audit").setCameraId("cam-1")
                .setTrackId("trk-1").setCaptureTimestamp(Instant.ofEpochMilli(1_700_000_000_000L)).setKind(RecordKind.QUERY)
                .setMechanism(MechanismParams.newBuilder().setName("FISHER").setSensitivityMode("l1-clip")
                        .setEpsilonPerCoordinate(8 / 3.0).setEpsilonPerFace(8).setNoiseScale(40).setBasisId("fisher-k3")
                        .setDelta(0).setMu(null).build())
                .setDimension(3).setVector(List.of(1f, -2f, 3f)).build());
    }

    private static List<String> problems(String topic, byte[] key, byte[] value, List<Header> headers) throws Exception {
        TopicAudit a = audit();
        a.check(List.of(new TopicAudit.Captured(topic, 0, 0, key, value, headers)));
        return a.problems;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aValidFaceRecordPasses() throws Exception {
        assertEquals(List.of(), problems(QUERY, utf8("cam-1"), face(), List.of()));
    }

    @Test
    void bytesSmuggledAfterTheRecordAreFound() throws Exception {
        byte[] f = face();
        byte[] longer = Arrays.copyOf(f, f.length + 64);
        assertTrue(problems(QUERY, utf8("cam-1"), longer, List.of()).toString().contains("bytes after the end"));
    }

    @Test
    void aRecordOfAnUndeclaredSchemaIsFound() throws Exception {
        byte[] f = face();
        f[5] ^= 0x01; // another fingerprint
        assertTrue(problems(QUERY, utf8("cam-1"), f, List.of()).toString().contains("not a declared PerturbedFace schema"));
    }

    @Test
    void aControlRecordPassesOnlyWithASignatureThatVerifies() throws Exception {
        java.security.KeyPair k = org.privface.wire.control.SignedControl.generate();
        byte[] body = utf8("{\"epsilon\":8.0}");
        var headers = new org.apache.kafka.common.header.internals.RecordHeaders();
        org.privface.wire.control.SignedControl.sign(k.getPrivate(), "console", "audit", "alice", 1L, body).addTo(headers);
        List<Header> h = List.of(headers.toArray());
        TopicAudit a = audit();
        a.operatorKeys.put("console", k.getPublic());
        a.check(List.of(new TopicAudit.Captured("privface.audit.control", 0, 0, utf8("audit"), body, h)));
        assertEquals(List.of(), a.problems);
        // Unknown to the audit, the same 64 signature bytes could be anything a producer chose.
        assertTrue(problems("privface.audit.control", utf8("audit"), body, h).toString().contains("does not verify"));
        assertTrue(problems("privface.audit.control", utf8("audit"), body,
                List.of(new RecordHeader("privface.operator", utf8("eve")))).toString().contains("unsigned"));
    }

    private static final String ANSWER = "privface.audit.answer";

    private static byte[] answer() {
        long keep = (1L << 62) - (1L << 40);
        return FaceRecords.encode(FaceAnswer.newBuilder().setEventId("e-2").setSiteId("audit").setCameraId("cam-1")
                .setTrackId("trk-2").setCaptureTimestamp(Instant.ofEpochMilli(1_700_000_000_000L))
                .setGallery(GalleryRef.newBuilder().setVersion(1).setIdentities(3).setBasisId("fr_feature-x.k8").build())
                .setOutput(1).setLabel("bob")
                .setMechanism(AnswerMechanism.newBuilder().setName("RR").setKeepNumerator(keep)
                        .setEpsilonPerFace(Math.log((double) keep * 3 / (1L << 40)) * (1 + 1e-12))
                        .setEpsilonCovers(AnswerEpsilonScope.QUERY_FACE).build())
                .setTrack(null).build());
    }

    @Test
    void anAnswerRecordPassesAndAVectorOnTheAnswerTopicIsFound() throws Exception {
        assertEquals(List.of(), problems(ANSWER, utf8("cam-1"), answer(), List.of()));
        // A face with its vector, written where only answers may go: not a declared FaceAnswer.
        assertTrue(problems(ANSWER, utf8("cam-1"), face(), List.of()).toString().contains("not a declared FaceAnswer schema"));
        byte[] a = answer();
        byte[] longer = Arrays.copyOf(a, a.length + 64);
        assertTrue(problems(ANSWER, utf8("cam-1"), longer, List.of()).toString().contains("bytes after the end"));
        List<Header> h = List.of(new RecordHeader("embedding", new byte[] {1, 2, 3}));
        assertTrue(problems(ANSWER, utf8("cam-1"), answer(), h).toString().contains("header embedding is not allowed"));
    }

    @Test
    void aGalleryRecordPassesOnlyWithATrustedRecognizerSignature() throws Exception {
        double r = Math.sqrt(0.5);
        byte[] body = FaceRecords.encode(FaceGallery.newBuilder().setSiteId("audit").setVersion(1)
                .setBuiltAt(Instant.ofEpochMilli(1_700_000_000_000L)).setBasisId("fr_feature-x.k2").setK(2)
                .setLabels(List.of("alice", "bob")).setTemplates(List.of(1.0, 0.0, r, -r)).setThreshold(0.4)
                .setEnrollmentReleases(10).setCalibration(null).build());
        java.security.KeyPair k = org.privface.wire.control.SignedControl.generate();
        var headers = new org.apache.kafka.common.header.internals.RecordHeaders();
        org.privface.wire.control.SignedControl.sign(org.privface.wire.control.SignedControl.GALLERY_DOMAIN, k.getPrivate(),
                "recognizer-1", "audit", "recognizer", 1L, body).addTo(headers);
        List<Header> h = List.of(headers.toArray());
        TopicAudit a = audit();
        a.recognizerKeys.put("recognizer-1", k.getPublic());
        a.check(List.of(new TopicAudit.Captured("privface.audit.gallery", 0, 0, utf8("audit"), body, h)));
        assertEquals(List.of(), a.problems);
        assertTrue(problems("privface.audit.gallery", utf8("audit"), body, h).toString().contains("does not verify"));
    }

    @Test
    void anUnlistedHeaderIsFound() throws Exception {
        List<Header> h = List.of(new RecordHeader("thumbnail", new byte[] {1, 2, 3}));
        assertTrue(problems(QUERY, utf8("cam-1"), face(), h).toString().contains("header thumbnail is not allowed"));
    }

    @Test
    void statusWithAnUndeclaredFieldOrABase64BlobIsFound() throws Exception {
        String ok = "{\"gateway\":\"gw\",\"site\":\"audit\",\"policy\":{\"mechanism\":\"FISHER\",\"imageRelease\":false},"
                + "\"cameras\":{\"cam-1\":{\"state\":\"LIVE\",\"frames\":3}}}";
        assertEquals(List.of(), problems(STATUS, utf8("gw"), utf8(ok), List.of()));
        String extra = ok.replace("\"site\":\"audit\"", "\"site\":\"audit\",\"lastFace\":\"x\"");
        assertTrue(problems(STATUS, utf8("gw"), utf8(extra), List.of()).toString().contains("$.lastFace is not a declared field"));
        String blob = Base64.getEncoder().encodeToString(new byte[64]).replace('A', 'Q');
        String withBlob = ok.replace("\"LIVE\"", "\"" + blob + "\"");
        assertTrue(problems(STATUS, utf8("gw"), utf8(withBlob), List.of()).toString().contains("base64-like run"));
    }

    @Test
    void imageSignaturesInInternalRecordsAndUnknownTopicsAreFound() throws Exception {
        byte[] png = {(byte) 0x89, 'P', 'N', 'G', 13, 10, 26, 10};
        assertTrue(problems("__consumer_offsets", new byte[] {0, 1}, png, List.of()).toString().contains("PNG signature"));
        assertTrue(problems("faces.raw", null, new byte[] {1}, List.of()).toString().contains("a topic nobody declares"));
    }
}
