package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.avro.RecordKind;

class FaceRecordsTest {

    static PerturbedFace face(int dim) {
        List<Float> v = new ArrayList<>();
        for (int i = 0; i < dim; i++) {
            v.add(i / (float) dim);
        }
        return PerturbedFace.newBuilder()
                .setEventId("0b7f6a8e-0000-4000-8000-000000000001")
                .setSiteId("site-1").setCameraId("cam-1").setTrackId("t-1")
                .setCaptureTimestamp(Instant.ofEpochMilli(1_700_000_000_000L))
                .setKind(RecordKind.QUERY)
                .setMechanism(MechanismParams.newBuilder().setName("PEEP").setSensitivityMode("vector")
                        .setEpsilonPerCoordinate(0.5).setEpsilonPerFace(0.5 * dim).setNoiseScale(2.0)
                        .setBasisId("basis-abc").build())
                .setDimension(dim).setVector(v)
                .build();
    }

    @Test
    void roundTripsAFace() {
        PerturbedFace f = face(16);
        PerturbedFace back = FaceRecords.decodeFace(FaceRecords.encode(f));
        assertEquals(f, back);
    }

    @Test
    void roundTripsAResult() {
        RecognitionResult r = RecognitionResult.newBuilder().setEventId("e1").setSiteId("s").setCameraId("c")
                .setTrackId("t").setPredictedLabel("alice").setConfidence(0.9f).setModelVersion("m-1")
                .setEpsilonPerFace(8).setRecognizedAt(Instant.ofEpochMilli(5)).build();
        assertEquals(r, FaceRecords.decodeResult(FaceRecords.encode(r)));
    }

    @Test
    void schemaHasNoFieldThatCouldCarryPixels() {
        List<String> offending = new ArrayList<>();
        walk(PerturbedFace.getClassSchema(), "PerturbedFace", offending);
        assertTrue(offending.isEmpty(), "fields able to hold raw bytes: " + offending);
        // The vector is capped far below a 47x62 crop; the only other array is RDP's sanitized
        // image, which the validator admits only for RDP (whose noise protects the image itself).
        assertTrue(WireLimits.MAX_DIMENSION < 47 * 62);
        assertTrue(WireLimits.MAX_RECORD_BYTES < 47 * 62 * 4);
    }

    @Test
    void decodesRecordsWrittenWithRevisionOne() throws Exception {
        PerturbedFace f = face(8);
        PerturbedFace back = FaceRecords.decodeFace(encodeAsRevisionOne(f));
        assertEquals(f.getEventId(), back.getEventId());
        assertEquals(f.getVector(), back.getVector());
        assertEquals(null, back.getTrack());
        assertEquals(null, back.getSanitizedImage());
    }

    /** f as an old producer would write it: the same fields, under the revision-1 schema. */
    static byte[] encodeAsRevisionOne(PerturbedFace f) throws Exception {
        Schema r1;
        try (var in = FaceRecordsTest.class.getResourceAsStream("/org/privface/wire/schemas/history/PerturbedFace-r1.avsc")) {
            r1 = new Schema.Parser().parse(in);
        }
        var old = new org.apache.avro.generic.GenericData.Record(r1);
        for (Schema.Field field : r1.getFields()) {
            Object v = f.get(field.name());
            if (v instanceof Instant i) {
                v = i.toEpochMilli();
            } else if (v instanceof RecordKind k) {
                v = new org.apache.avro.generic.GenericData.EnumSymbol(field.schema(), k.name());
            } else if (v instanceof MechanismParams mp) {
                var m = new org.apache.avro.generic.GenericData.Record(field.schema());
                field.schema().getFields().forEach(x -> m.put(x.name(), mp.get(x.name())));
                v = m;
            }
            old.put(field.name(), v);
        }
        var enc = new org.apache.avro.message.BinaryMessageEncoder<org.apache.avro.generic.GenericRecord>(
                org.apache.avro.generic.GenericData.get(), r1);
        java.nio.ByteBuffer buf = enc.encode(old);
        byte[] bytes = new byte[buf.remaining()];
        buf.get(bytes);
        return bytes;
    }

    static org.privface.wire.avro.SanitizedImage image(int w, int h, float value) {
        List<Float> px = new ArrayList<>();
        for (int i = 0; i < w * h; i++) {
            px.add(value);
        }
        return org.privface.wire.avro.SanitizedImage.newBuilder().setWidth(w).setHeight(h).setPixels(px).build();
    }

    @Test
    void sanitizedImagesOnlyForRdpAndOnlyUpTo64By64() {
        PerturbedFace peep = face(16);
        peep.setSanitizedImage(image(64, 64, 0.5f));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(peep));
        PerturbedFace rdp = face(16);
        rdp.getMechanism().setName("RDP");
        rdp.setSanitizedImage(image(64, 64, 0.5f));
        assertEquals(rdp, FaceRecords.decodeFace(FaceRecords.encode(rdp)));
        rdp.setSanitizedImage(image(65, 64, 0.5f));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(rdp));
        rdp.setSanitizedImage(image(8, 8, 1.5f));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(rdp));
    }

    @Test
    void trackAccountingCannotExceedItsBudget() {
        PerturbedFace f = face(16);
        f.setTrack(org.privface.wire.avro.TrackRelease.newBuilder().setReleaseIndex(2).setEpsilonSpentInWindow(4)
                .setEpsilonBudget(8).setBudgetPolicy("max-k:k=2").setWindowStartMillis(Instant.ofEpochMilli(1)).build());
        assertEquals(f, FaceRecords.decodeFace(FaceRecords.encode(f)));
        f.getTrack().setEpsilonSpentInWindow(9);
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(f));
        f.getTrack().setEpsilonSpentInWindow(4);
        f.getTrack().setReleaseIndex(0);
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(f));
    }

    private static void walk(Schema s, String path, List<String> offending) {
        switch (s.getType()) {
            case BYTES, FIXED, MAP -> offending.add(path + ":" + s.getType());
            case RECORD -> s.getFields().forEach(f -> walk(f.schema(), path + "." + f.name(), offending));
            case UNION -> s.getTypes().forEach(t -> walk(t, path, offending));
            case ARRAY -> {
                if (!path.endsWith(".vector") && !path.endsWith(".sanitizedImage.pixels")) {
                    offending.add(path + ":unexpected array");
                }
                walk(s.getElementType(), path + "[]", offending);
            }
            default -> { }
        }
    }

    @Test
    void refusesAVectorTheSizeOfAFaceCrop() {
        PerturbedFace crop = face(47 * 62);
        InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(crop));
        assertTrue(e.getMessage().contains("dimension"), e.getMessage());
    }

    @Test
    void rejectsEachBrokenRule() {
        List<Consumer<PerturbedFace>> breakers = List.of(
                f -> f.setSchemaVersion(2),
                f -> f.setEventId(""),
                f -> f.setSiteId("a b"),
                f -> f.setSiteId("site.1"), // a fuzz finding: valid id, but no site's topic can carry it
                f -> f.setSiteId("s".repeat(65)),
                f -> f.setCameraId("x".repeat(WireLimits.MAX_ID_LENGTH + 1)),
                f -> f.getMechanism().setEpsilonPerCoordinate(0),
                f -> f.getMechanism().setEpsilonPerFace(Double.NaN),
                f -> f.getMechanism().setEpsilonPerFace(0.1),
                f -> f.getMechanism().setNoiseScale(-1),
                f -> f.setDimension(15),
                f -> f.getVector().set(3, Float.NaN),
                f -> f.getVector().set(3, Float.POSITIVE_INFINITY),
                f -> f.setEnrollmentLabel("alice"),
                f -> f.setKind(RecordKind.ENROLLMENT));
        for (int i = 0; i < breakers.size(); i++) {
            PerturbedFace f = face(16);
            breakers.get(i).accept(f);
            int rule = i;
            assertThrows(InvalidRecordException.class, () -> FaceRecords.validate(f), "rule " + rule);
        }
    }

    @Test
    void aRecordMustMatchTheTopicItWasReadFrom() {
        byte[] query = FaceRecords.encode(face(4));
        assertEquals(4, FaceRecords.decodeFromTopic("privface.site-1.query", query).getDimension());
        assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFromTopic("privface.site-1.enrollment", query));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFromTopic("privface.site-2.query", query));
        assertArrayEquals(new float[] {0f, 0.25f, 0.5f, 0.75f}, FaceRecords.vector(face(4)));
    }

    /** A length prefix claiming more than the record holds; Avro would allocate it before reading (a fuzz finding). */
    @Test
    void refusesLengthsAndCountsLargerThanTheRecord() {
        byte[] good = FaceRecords.encode(face(16));
        // Offset 10: schemaVersion (1 → 0x02), then eventId's length (36 → 0x48).
        assertEquals(0x48, good[11]);
        byte[] hugeString = splice(good, 11, 1, new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x08});
        InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFace(hugeString));
        assertTrue(e.getMessage().contains("exceeds"), e.getMessage());

        PerturbedFace one = face(1);
        one.getVector().set(0, 1.5f);
        byte[] b = FaceRecords.encode(one);
        // The vector block: count 1 (0x02), 1.5f little-endian, end of array (0x00).
        int at = indexOf(b, new byte[] {0x02, 0x00, 0x00, (byte) 0xC0, 0x3F, 0x00});
        assertTrue(at > 0);
        byte[] hugeArray = splice(b, at, 1, new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x08});
        e = assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFace(hugeArray));
        assertTrue(e.getMessage().contains("items"), e.getMessage());
    }

    private static byte[] splice(byte[] b, int at, int remove, byte[] insert) {
        byte[] out = new byte[b.length - remove + insert.length];
        System.arraycopy(b, 0, out, 0, at);
        System.arraycopy(insert, 0, out, at, insert.length);
        System.arraycopy(b, at + remove, out, at + insert.length, b.length - at - remove);
        return out;
    }

    private static int indexOf(byte[] b, byte[] pattern) {
        for (int i = 0; i + pattern.length <= b.length; i++) {
            if (java.util.Arrays.equals(b, i, i + pattern.length, pattern, 0, pattern.length)) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void rejectsGarbageAndTruncatedBytes() {
        byte[] good = FaceRecords.encode(face(16));
        byte[] truncated = java.util.Arrays.copyOf(good, good.length / 2);
        assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFace(truncated));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFace(new byte[0]));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFace("hello".getBytes()));
        assertThrows(InvalidRecordException.class,
                () -> FaceRecords.decodeFace(new byte[WireLimits.MAX_RECORD_BYTES + 1]));
        byte[] otherSchema = good.clone();
        otherSchema[5] ^= 0x55; // inside the fingerprint
        assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFace(otherSchema));
        assertArrayEquals(good, FaceRecords.encode(FaceRecords.decodeFace(good)));
    }
}
