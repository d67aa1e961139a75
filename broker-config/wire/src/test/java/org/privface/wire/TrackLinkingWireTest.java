package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.time.Instant;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.Test;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.TrackRelease;

/**
 * Revision 4's track: the linking flag and the policy's per-person cap round trip and are checked,
 * and records of revisions 2 and 3 (the latter with the person spend it no longer carries) still decode.
 */
class TrackLinkingWireTest {

    static PerturbedFace withLinking(Boolean linking, Double personCap) {
        PerturbedFace f = FaceRecordsTest.face(8);
        f.setTrack(TrackRelease.newBuilder().setReleaseIndex(1).setEpsilonSpentInWindow(2).setEpsilonBudget(2)
                .setBudgetPolicy("once").setWindowStartMillis(Instant.ofEpochMilli(1))
                .setLinking(linking).setPersonEpsilonBudget(personCap).build());
        return f;
    }

    @Test
    void theLinkingFlagAndThePersonCapRoundTripAndAreChecked() {
        PerturbedFace on = withLinking(true, 2.0);
        assertEquals(on, FaceRecords.decodeFace(FaceRecords.encode(on)));
        PerturbedFace off = withLinking(false, null);
        assertEquals(off, FaceRecords.decodeFace(FaceRecords.encode(off)));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(withLinking(true, null)));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(withLinking(false, 2.0)));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(withLinking(null, 2.0)));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(withLinking(true, -1.0)));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(withLinking(true, Double.NaN)));
    }

    @Test
    void aRevisionThreeRecordDecodesWithoutItsPersonSpend() throws Exception {
        Schema r3 = history("PerturbedFace-r3.avsc");
        GenericRecord old = asWrittenBy(withLinking(null, null), r3);
        GenericRecord track = (GenericRecord) old.get("track");
        Schema personSchema = track.getSchema().getField("person").schema().getTypes().get(1);
        GenericRecord person = new GenericData.Record(personSchema);
        person.put("epsilonSpentInWindow", 2.0);
        person.put("epsilonBudget", 2.0);
        person.put("linkedAppearances", 3);
        person.put("windowStartMillis", 1L);
        track.put("person", person);

        PerturbedFace back = FaceRecords.decodeFace(singleObject(old, r3));
        assertEquals(old.get("eventId").toString(), back.getEventId());
        assertEquals(2.0, back.getTrack().getEpsilonSpentInWindow());
        assertNull(back.getTrack().getLinking(), "a revision-3 record does not say whether its gateway linked");
        assertNull(back.getTrack().getPersonEpsilonBudget());
    }

    @Test
    void aRevisionTwoRecordDecodes() throws Exception {
        Schema r2 = history("PerturbedFace-r2.avsc");
        PerturbedFace f = withLinking(null, null);
        PerturbedFace back = FaceRecords.decodeFace(singleObject(asWrittenBy(f, r2), r2));
        assertEquals(f.getEventId(), back.getEventId());
        assertEquals(2.0, back.getTrack().getEpsilonSpentInWindow());
        assertNull(back.getTrack().getLinking());
    }

    static Schema history(String file) throws Exception {
        try (var in = TrackLinkingWireTest.class.getResourceAsStream("/org/privface/wire/schemas/history/" + file)) {
            return new Schema.Parser().parse(in);
        }
    }

    /** f as an older writer holds it: resolved from the current schema to {@code old}. */
    static GenericRecord asWrittenBy(PerturbedFace f, Schema old) throws Exception {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        var enc = EncoderFactory.get().binaryEncoder(raw, null);
        new SpecificDatumWriter<PerturbedFace>(PerturbedFace.getClassSchema()).write(f, enc);
        enc.flush();
        return new GenericDatumReader<GenericRecord>(PerturbedFace.getClassSchema(), old)
                .read(null, DecoderFactory.get().binaryDecoder(raw.toByteArray(), null));
    }

    static byte[] singleObject(GenericRecord r, Schema writer) throws Exception {
        var buf = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), writer).encode(r);
        byte[] bytes = new byte[buf.remaining()];
        buf.get(bytes);
        return bytes;
    }
}
