package org.privface.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.junit.jupiter.api.Test;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/**
 * docs/wire.md is what a vendor implements from, so its fingerprint table is recomputed here from
 * the schema files: a schema added, changed or removed without the table fails the build.
 */
class WireContractTest {
    private static final Path ROOT = Path.of(System.getProperty("privface.root", "../..")).toAbsolutePath().normalize();
    /** A table row: | `broker-config/schemas/X.avsc` | `0x…` | `aa bb …` |. */
    private static final Pattern ROW = Pattern.compile(
            "^\\| `(broker-config/schemas/[^`]+\\.avsc)` \\| `0x([0-9a-f]{16})` \\| `((?:[0-9a-f]{2} ){7}[0-9a-f]{2})` \\|$");

    record Row(long fingerprint, String littleEndian) {
    }

    private static Map<String, Row> table() throws IOException {
        Map<String, Row> rows = new TreeMap<>();
        for (String line : Files.readAllLines(ROOT.resolve("docs/wire.md"))) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                rows.put(m.group(1), new Row(Long.parseUnsignedLong(m.group(2), 16), m.group(3)));
            }
        }
        return rows;
    }

    private static String littleEndian(long fp) {
        List<String> bytes = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            bytes.add(String.format("%02x", (fp >>> (8 * i)) & 0xff));
        }
        return String.join(" ", bytes);
    }

    @Test
    void everySchemaFileIsInTheTableWithItsFingerprint() throws IOException {
        Map<String, Row> expected = new TreeMap<>();
        try (Stream<Path> files = Files.walk(ROOT.resolve("broker-config/schemas"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".avsc")).toList()) {
                long fp = SchemaNormalization.parsingFingerprint64(new Schema.Parser().parse(f.toFile()));
                expected.put(ROOT.relativize(f).toString().replace('\\', '/'), new Row(fp, littleEndian(fp)));
            }
        }
        assertTrue(expected.size() >= 3, "schema files found: " + expected.keySet());
        Map<String, Row> documented = table();
        StringBuilder wanted = new StringBuilder();
        expected.forEach((file, r) -> wanted.append(String.format("| `%s` | `0x%016x` | `%s` |%n", file,
                r.fingerprint(), r.littleEndian())));
        assertEquals(expected, documented, "docs/wire.md's fingerprint table must read:\n" + wanted);
    }

    /** The table's byte column is what really follows C3 01 in an encoded record. */
    @Test
    void anEncodedRecordStartsWithTheMarkerAndTheDocumentedFingerprint() throws IOException {
        PerturbedFace face = PerturbedFace.newBuilder()
                .setEventId("e-1").setSiteId("north").setCameraId("enrollment").setTrackId("t-1")
                .setCaptureTimestamp(Instant.ofEpochMilli(1_700_000_000_000L)).setKind(RecordKind.ENROLLMENT)
                .setMechanism(MechanismParams.newBuilder().setName("PEEP").setSensitivityMode("vector")
                        .setEpsilonPerCoordinate(0.5).setEpsilonPerFace(4).setNoiseScale(2).setBasisId("b-1").build())
                .setDimension(2).setVector(List.of(0.25f, -1f)).setEnrollmentLabel("alice").build();
        byte[] bytes = FaceRecords.encode(face);
        assertEquals("c301", HexFormat.of().formatHex(bytes, 0, 2));
        String header = HexFormat.ofDelimiter(" ").formatHex(bytes, 2, 10);
        assertEquals(table().get("broker-config/schemas/PerturbedFace.avsc").littleEndian(), header);
    }
}
