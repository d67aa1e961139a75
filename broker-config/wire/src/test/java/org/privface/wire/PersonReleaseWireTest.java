package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.time.Instant;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.Test;
import org.privface.wire.avro.PersonRelease;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.TrackRelease;

/** Revision 3's track.person: round trip, checks, and revision-2 records still decoding. */
class PersonReleaseWireTest {

    static PerturbedFace withPerson(double spent, double budget, int appearances) {
        PerturbedFace f = FaceRecordsTest.face(8);
        f.setTrack(TrackRelease.newBuilder().setReleaseIndex(1).setEpsilonSpentInWindow(2).setEpsilonBudget(2)
                .setBudgetPolicy("once").setWindowStartMillis(Instant.ofEpochMilli(1))
                .setPerson(PersonRelease.newBuilder().setEpsilonSpentInWindow(spent).setEpsilonBudget(budget)
                        .setLinkedAppearances(appearances).setWindowStartMillis(Instant.ofEpochMilli(1)).build())
                .build());
        return f;
    }

    @Test
    void thePersonSpendRoundTripsAndIsChecked() {
        PerturbedFace f = withPerson(2, 2, 3);
        assertEquals(f, FaceRecords.decodeFace(FaceRecords.encode(f)));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(withPerson(2.5, 2, 3)));
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(withPerson(2, 2, 0)));
    }

    @Test
    void aRevisionTwoRecordDecodesWithoutAPerson() throws Exception {
        PerturbedFace f = withPerson(2, 2, 1);
        f.getTrack().setPerson(null);
        Schema r2;
        try (var in = getClass().getResourceAsStream("/org/privface/wire/schemas/history/PerturbedFace-r2.avsc")) {
            r2 = new Schema.Parser().parse(in);
        }
        // f as a revision-2 writer holds it: resolved from revision 3 to revision 2 (track.person dropped).
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        var enc = EncoderFactory.get().binaryEncoder(raw, null);
        new SpecificDatumWriter<PerturbedFace>(PerturbedFace.getClassSchema()).write(f, enc);
        enc.flush();
        GenericRecord old = new GenericDatumReader<GenericRecord>(PerturbedFace.getClassSchema(), r2)
                .read(null, DecoderFactory.get().binaryDecoder(raw.toByteArray(), null));
        var buf = new org.apache.avro.message.BinaryMessageEncoder<GenericRecord>(
                org.apache.avro.generic.GenericData.get(), r2).encode(old);
        byte[] bytes = new byte[buf.remaining()];
        buf.get(bytes);
        PerturbedFace back = FaceRecords.decodeFace(bytes);
        assertEquals(f.getEventId(), back.getEventId());
        assertEquals(2.0, back.getTrack().getEpsilonSpentInWindow());
        assertNull(back.getTrack().getPerson());
    }
}
