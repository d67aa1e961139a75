package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.junit.jupiter.api.Test;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.avro.TrackRelease;
import org.privface.wire.topics.Topics;

/**
 * Fuzzes the decoder the recognizer runs on every record it consumes. Property: any bytes either
 * decode into a record that passes validation and round-trips, or are refused with
 * {@link InvalidRecordException}; nothing else escapes (no Avro runtime exception, no
 * OutOfMemoryError, no hang).
 *
 * <p>In a normal build Jazzer replays the corpus in test-data/fuzz/face-record (regression mode);
 * {@code JAZZER_FUZZ=1} runs a campaign (docs/reliability.md, Fuzzing).
 */
class FaceRecordsFuzzTest {
    static final Path CORPUS = Path.of(System.getProperty("privface.root", "../..")).resolve("test-data/fuzz/face-record");

    @FuzzTest(maxDuration = "2m")
    void decodeFace(byte[] bytes) {
        PerturbedFace f;
        try {
            f = FaceRecords.decodeFace(bytes);
        } catch (InvalidRecordException e) {
            assertNotNull(e.getMessage(), "a refusal says which rule");
            return;
        }
        FaceRecords.validate(f);
        assertTrue(bytes.length <= WireLimits.MAX_RECORD_BYTES_WITH_IMAGE);
        // What decodes is a record this build would itself write, and reads back the same.
        assertEquals(f, FaceRecords.decodeFace(FaceRecords.encode(f)));
        String own = f.getKind() == RecordKind.ENROLLMENT ? Topics.enrollment(f.getSiteId()) : Topics.query(f.getSiteId());
        String other = f.getKind() == RecordKind.ENROLLMENT ? Topics.query(f.getSiteId()) : Topics.enrollment(f.getSiteId());
        assertEquals(f, FaceRecords.decodeFromTopic(own, bytes));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFromTopic(other, bytes));
    }

    /**
     * The corpus must keep records of the schema this build reads, or regression mode would only
     * replay refusals. {@code -Dprivface.fuzz.write-seeds=true} rewrites it from {@link #seeds()}.
     */
    @Test
    void corpusHoldsRecordsOfTheCurrentSchema() throws Exception {
        if (Boolean.getBoolean("privface.fuzz.write-seeds")) {
            Files.createDirectories(CORPUS);
            for (var e : seeds().entrySet()) {
                Files.write(CORPUS.resolve(e.getKey()), e.getValue());
            }
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(CORPUS)) {
            files = s.filter(Files::isRegularFile).sorted().toList();
        }
        int valid = 0;
        for (Path p : files) {
            byte[] b = Files.readAllBytes(p);
            decodeFace(b);
            try {
                FaceRecords.decodeFace(b);
                valid++;
            } catch (InvalidRecordException refused) {
                // Refusals are seeds too: they start the fuzzer next to each rule.
            }
        }
        assertTrue(valid >= 3, valid + " of " + files.size() + " corpus files decode; regenerate the seeds");
        assertTrue(files.size() > valid, "the corpus also holds inputs that must be refused");
    }

    /** Small seeds made by the project's own encoder: valid records, then broken variants of them. */
    static Map<String, byte[]> seeds() throws Exception {
        Map<String, byte[]> s = new LinkedHashMap<>();
        PerturbedFace query = FaceRecordsTest.face(16);
        s.put("query-16.bin", FaceRecords.encode(query));

        PerturbedFace enrol = FaceRecordsTest.face(8);
        enrol.setKind(RecordKind.ENROLLMENT);
        enrol.setEnrollmentLabel("person-a");
        enrol.setTrack(TrackRelease.newBuilder().setReleaseIndex(2).setEpsilonSpentInWindow(4).setEpsilonBudget(8)
                .setBudgetPolicy("max-k:k=2").setWindowStartMillis(Instant.ofEpochMilli(1)).build());
        s.put("enrollment-8-track.bin", FaceRecords.encode(enrol));

        PerturbedFace rdp = FaceRecordsTest.face(4);
        rdp.getMechanism().setName("RDP");
        rdp.setSanitizedImage(FaceRecordsTest.image(8, 8, 0.5f));
        s.put("rdp-image-8x8.bin", FaceRecords.encode(rdp));

        PerturbedFace gdp = FaceRecordsTest.face(4);
        gdp.getMechanism().setName("GAUSSIAN");
        gdp.getMechanism().setSensitivityMode("gdp");
        gdp.getMechanism().setDelta(1e-6);
        gdp.getMechanism().setMu(0.5);
        s.put("gaussian-mu.bin", FaceRecords.encode(gdp));

        s.put("revision-1-query.bin", FaceRecordsTest.encodeAsRevisionOne(FaceRecordsTest.face(8)));

        byte[] good = FaceRecords.encode(query);
        s.put("truncated-half.bin", Arrays.copyOf(good, good.length / 2));
        s.put("truncated-header.bin", Arrays.copyOf(good, 7));
        byte[] fingerprint = good.clone();
        fingerprint[5] ^= 0x55;
        s.put("unknown-fingerprint.bin", fingerprint);
        // Valid Avro, invalid record: the validator, not the decoder, must refuse these.
        PerturbedFace nan = FaceRecordsTest.face(4);
        nan.getVector().set(1, Float.NaN);
        s.put("nan-vector.bin", unchecked(PerturbedFace.getEncoder().encode(nan)));
        PerturbedFace dim = FaceRecordsTest.face(4);
        dim.setDimension(5);
        s.put("dimension-mismatch.bin", unchecked(PerturbedFace.getEncoder().encode(dim)));
        RecognitionResult result = RecognitionResult.newBuilder().setEventId("e1").setSiteId("s").setCameraId("c")
                .setTrackId("t").setPredictedLabel("alice").setConfidence(0.9f).setModelVersion("m-1")
                .setEpsilonPerFace(8).setRecognizedAt(Instant.ofEpochMilli(5)).build();
        s.put("wrong-schema-result.bin", FaceRecords.encode(result));
        return s;
    }

    private static byte[] unchecked(ByteBuffer buf) {
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        assertFalse(out.length == 0);
        return out;
    }
}
