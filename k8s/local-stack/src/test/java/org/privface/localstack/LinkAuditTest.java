package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.specific.SpecificDatumWriter;
import org.junit.jupiter.api.Test;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.avro.TrackRelease;

/**
 * {@link LinkAudit} on LinkingAuditTest's scene as each revision writes it: the four releases (P on
 * camera 0, P on camera 1, P back on camera 0, the stranger S on camera 1), once with the gateway
 * linking all four and once linking none. Revision 3's records, with the person spend the gateway
 * put in track.person, fail the audit; revision 4's pass. The records are built the way each
 * revision's CameraWorker built them, and round-trip through the wire codec.
 */
class LinkAuditTest {
    private static final double EPSILON = 2;
    private static final Instant T0 = Instant.parse("2026-11-26T12:00:00Z");
    /** Camera and capture second of each release; the positions of the scene. */
    private static final String[] CAMERA = {"cam0", "cam1", "cam0", "cam1"};
    private static final int[] SECOND = {0, 3, 6, 10};

    @Test
    void revisionFourRecordsCarryNothingOfTheLinks() {
        List<String> problems = LinkAudit.compare(run(true, false), run(false, false));
        assertTrue(problems.isEmpty(), String.join("\n", problems));
    }

    @Test
    void revisionThreeRecordsFailTheAudit() {
        List<String> problems = LinkAudit.compare(run(true, true), run(false, true));
        System.out.println("LINK-AUDIT revision 3:\n" + String.join("\n", problems));
        for (String field : List.of("track.person.windowStartMillis", "track.person.linkedAppearances",
                "track.person.epsilonSpentInWindow")) {
            assertTrue(problems.stream().anyMatch(p -> p.startsWith(field)), field + " is caught: " + problems);
        }
        assertTrue(problems.stream().noneMatch(p -> !p.startsWith("track.person.")), "and nothing else is: " + problems);
    }

    @Test
    void aFieldThatOnlyGroupsIsCaughtToo() {
        // The same values in both runs but grouped differently, as a person id would be.
        Map<String, IndexedRecord> a = run(true, false);
        Map<String, IndexedRecord> b = run(false, false);
        ((PerturbedFace) a.get("p1")).setTrackId(((PerturbedFace) a.get("p0")).getTrackId());
        List<String> problems = LinkAudit.compare(a, b);
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("trackId groups p0 and p1 with links only"), problems.toString());
    }

    /** The scene's four records; {@code linkAll}: one person, else four; {@code revision3}: with track.person. */
    private static Map<String, IndexedRecord> run(boolean linkAll, boolean revision3) {
        Map<String, IndexedRecord> out = new LinkedHashMap<>();
        for (int i = 0; i < CAMERA.length; i++) {
            Instant at = T0.plusSeconds(SECOND[i]).plusMillis(linkAll ? 17 : 503); // another run, another time
            PerturbedFace f = PerturbedFace.newBuilder()
                    .setEventId(UUID.randomUUID().toString()).setSiteId("link-audit").setCameraId(CAMERA[i])
                    .setTrackId("trk-" + UUID.randomUUID()).setCaptureTimestamp(at).setKind(RecordKind.QUERY)
                    .setMechanism(MechanismParams.newBuilder().setName("EMBEDDING").setSensitivityMode("sign-cap-every-face")
                            .setEpsilonPerCoordinate(EPSILON / 4).setEpsilonPerFace(EPSILON / 4).setNoiseScale(0.3)
                            .setBasisId("b0").build())
                    .setDimension(2).setVector(List.of((float) Math.random(), (float) Math.random()))
                    .setTrack(TrackRelease.newBuilder().setReleaseIndex(1).setEpsilonSpentInWindow(EPSILON / 4)
                            .setEpsilonBudget(EPSILON).setBudgetPolicy("max-k").setWindowStartMillis(at)
                            .setLinking(!revision3 ? true : null).setPersonEpsilonBudget(!revision3 ? EPSILON : null)
                            .build())
                    .build();
            f = FaceRecords.decodeFace(FaceRecords.encode(f));
            if (!revision3) {
                out.put("p" + i, f);
                continue;
            }
            // What revision 3's CameraWorker added: the linked person's charge.
            GenericRecord old = asRevision3(f);
            GenericRecord track = (GenericRecord) old.get("track");
            GenericRecord person = new GenericData.Record(track.getSchema().getField("person").schema().getTypes().get(1));
            int appearance = linkAll ? i + 1 : 1;
            person.put("epsilonSpentInWindow", appearance * EPSILON / 4);
            person.put("epsilonBudget", EPSILON);
            person.put("linkedAppearances", appearance);
            person.put("windowStartMillis", (linkAll ? T0.plusMillis(17) : at).toEpochMilli());
            track.put("person", person);
            out.put("p" + i, old);
        }
        return out;
    }

    private static GenericRecord asRevision3(PerturbedFace f) {
        try (InputStream in = FaceRecords.class.getResourceAsStream("/org/privface/wire/schemas/history/PerturbedFace-r3.avsc")) {
            Schema r3 = new Schema.Parser().parse(in);
            ByteArrayOutputStream raw = new ByteArrayOutputStream();
            var enc = EncoderFactory.get().binaryEncoder(raw, null);
            new SpecificDatumWriter<PerturbedFace>(PerturbedFace.getClassSchema()).write(f, enc);
            enc.flush();
            return new GenericDatumReader<GenericRecord>(PerturbedFace.getClassSchema(), r3)
                    .read(null, DecoderFactory.get().binaryDecoder(raw.toByteArray(), null));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
