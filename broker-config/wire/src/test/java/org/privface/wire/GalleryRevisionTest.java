package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;

import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.GalleryCalibration;

/**
 * FaceGallery revision 2 adds the calibration's ε and rule (issue 38); a revision-1 record, which a
 * compacted gallery topic may still hold, decodes with both null, and a revision-2 one keeps them.
 */
class GalleryRevisionTest {
    @Test
    void aRevisionOneGalleryDecodesWithoutEpsilonAndRevisionTwoKeepsIt() throws Exception {
        Schema r1;
        try (InputStream in = getClass().getResourceAsStream("/org/privface/wire/schemas/history/FaceGallery-r1.avsc")) {
            r1 = new Schema.Parser().parse(in);
        }
        GenericRecord cal = new GenericData.Record(r1.getField("calibration").schema().getTypes().get(1));
        cal.put("strangerSet", "lfw-public");
        cal.put("strangers", 2380);
        cal.put("accepted", 14);
        cal.put("targetRate", 0.01);
        GenericRecord g = new GenericData.Record(r1);
        g.put("schemaVersion", 1);
        g.put("siteId", "north");
        g.put("version", 3L);
        g.put("builtAt", 1_700_000_000_000L);
        g.put("basisId", "dlib-x.k2");
        g.put("k", 2);
        g.put("labels", List.of("alice"));
        g.put("templates", List.of(1.0, 0.0));
        g.put("threshold", 0.4);
        g.put("enrollmentReleases", 3);
        g.put("calibration", cal);
        ByteBuffer b = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), r1).encode(g);
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        FaceGallery old = FaceRecords.decodeGalleryFromTopic("privface.north.gallery", bytes);
        assertEquals(2380, old.getCalibration().getStrangers());
        assertNull(old.getCalibration().getEpsilon());
        assertNull(old.getCalibration().getRule());

        FaceGallery now = FaceGallery.newBuilder(old).setCalibration(GalleryCalibration.newBuilder(old.getCalibration())
                .setEpsilon(20.0).setRule("wilson").build()).build();
        FaceGallery back = FaceRecords.decodeGalleryFromTopic("privface.north.gallery", FaceRecords.encode(now));
        assertEquals(20.0, back.getCalibration().getEpsilon());
        assertEquals("wilson", back.getCalibration().getRule());
        FaceGallery bad = FaceGallery.newBuilder(now).setCalibration(GalleryCalibration.newBuilder(now.getCalibration())
                .setEpsilon(-1.0).build()).build();
        assertThrows(InvalidRecordException.class, () -> FaceRecords.encode(bad));
    }
}
