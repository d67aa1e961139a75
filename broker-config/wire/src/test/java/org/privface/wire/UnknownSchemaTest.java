package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;

/**
 * A record of a schema revision this build does not know is told apart from bad input: consumers
 * park it (UnknownSchemaException) rather than dead-letter it; a known schema of another kind on the
 * wrong topic stays bad input.
 */
class UnknownSchemaTest {
    @Test
    void aNewerRevisionIsUnknownNotBad() throws Exception {
        ObjectNode s = (ObjectNode) new ObjectMapper().readTree(PerturbedFace.getClassSchema().toString());
        ObjectNode extra = ((ArrayNode) s.get("fields")).addObject();
        extra.put("name", "capturedBy");
        extra.putArray("type").add("null").add("string");
        extra.putNull("default");
        Schema newer = new Schema.Parser().parse(s.toString());
        BinaryMessageDecoder<GenericRecord> d = new BinaryMessageDecoder<>(GenericData.get(), newer);
        d.addSchema(PerturbedFace.getClassSchema());
        GenericRecord r = d.decode(FaceRecords.encode(FaceRecordsTest.face(8)));
        ByteBuffer buf = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), newer).encode(r);
        byte[] bytes = new byte[buf.remaining()];
        buf.get(bytes);
        assertThrows(UnknownSchemaException.class, () -> FaceRecords.decodeFace(bytes));
    }

    @Test
    void anotherKindsSchemaIsBadInput() {
        byte[] result = FaceRecords.encode(RecognitionResult.newBuilder().setEventId("e1").setSiteId("s").setCameraId("c")
                .setTrackId("t").setPredictedLabel("ann").setConfidence(0.9f).setModelVersion("m-1")
                .setEpsilonPerFace(1).setRecognizedAt(java.time.Instant.now()).build());
        InvalidRecordException e = assertThrows(InvalidRecordException.class, () -> FaceRecords.decodeFace(result));
        assertFalse(e instanceof UnknownSchemaException, e.getMessage());
        assertTrue(e.getMessage().contains("RecognitionResult"), e.getMessage());
    }
}
