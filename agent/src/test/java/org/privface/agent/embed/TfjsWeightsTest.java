package org.privface.agent.embed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.FaceModels;

class TfjsWeightsTest {
    @TempDir
    Path dir;

    /** Group 1: two shards, a float32 tensor across their boundary, then uint8 and uint16; group 2: float16 and int32. */
    private Path writeModel(int trailing) throws IOException {
        ByteBuffer g1 = ByteBuffer.allocate(6 * 4 + 4 + 2 * 2 + trailing).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : new float[] {1.5f, -2f, 3.25f, 0f, 1e-3f, -7f}) {
            g1.putFloat(f);
        }
        g1.put(new byte[] {0, 1, (byte) 200, (byte) 255});
        g1.putShort((short) 0).putShort((short) 65535);
        byte[] b1 = g1.array();
        Files.write(dir.resolve("m-shard1of2.bin"), java.util.Arrays.copyOfRange(b1, 0, 10));
        Files.write(dir.resolve("m-shard2of2.bin"), java.util.Arrays.copyOfRange(b1, 10, b1.length));
        ByteBuffer g2 = ByteBuffer.allocate(3 * 2 + 4).order(ByteOrder.LITTLE_ENDIAN);
        g2.putShort((short) 0x3c00).putShort((short) 0xc000).putShort((short) 0x0001); // 1, -2, 2^-24
        g2.putInt(-12345);
        Files.write(dir.resolve("g2.bin"), g2.array());
        Files.writeString(dir.resolve("m.json"), """
                [{"paths": ["m-shard1of2.bin", "m-shard2of2.bin"], "weights": [
                   {"name": "a/filters", "shape": [2, 3], "dtype": "float32"},
                   {"name": "b", "shape": [4], "dtype": "float32", "quantization": {"dtype": "uint8", "scale": 0.5, "min": -1}},
                   {"name": "c", "shape": [2, 1], "dtype": "float32", "quantization": {"dtype": "uint16", "scale": 0.001, "min": 2}}]},
                 {"paths": ["g2.bin"], "weights": [
                   {"name": "d", "shape": [3], "dtype": "float32", "quantization": {"dtype": "float16"}},
                   {"name": "e", "shape": [], "dtype": "int32"}]}]
                """);
        return dir.resolve("m.json");
    }

    @Test
    void readsNamesShapesAndDequantizedValuesAcrossShardsAndGroups() throws IOException {
        TfjsWeights w = TfjsWeights.read(writeModel(0));
        assertEquals(java.util.List.of("a/filters", "b", "c", "d", "e"), java.util.List.copyOf(w.names()));
        TfjsWeights.Tensor a = w.get("a/filters", 2, 3);
        assertNull(a.quantization());
        assertArrayEquals(new float[] {1.5f, -2f, 3.25f, 0f, 1e-3f, -7f}, a.values());
        assertArrayEquals(new float[] {-1f, -0.5f, 99f, 126.5f}, w.get("b").values());
        assertEquals("uint8", w.get("b").quantization().dtype());
        assertArrayEquals(new float[] {2f, (float) (65535 * 0.001 + 2)}, w.get("c", 2, 1).values());
        assertArrayEquals(new float[] {1f, -2f, 0x1p-24f}, w.get("d").values());
        assertArrayEquals(new int[0], w.get("e").shape());
        assertArrayEquals(new float[] {-12345f}, w.get("e").values());
        assertThrows(IllegalArgumentException.class, () -> w.get("a/filters", 3, 2));
        assertThrows(IllegalArgumentException.class, () -> w.get("missing"));
    }

    @Test
    void shardBytesTheManifestDoesNotDescribeAreAnError() throws IOException {
        IOException e = assertThrows(IOException.class, () -> TfjsWeights.read(writeModel(3)));
        assertTrue(e.getMessage().contains("3 bytes"), e.getMessage());
    }

    @Test
    void aShortOrMissingShardIsAnError() throws IOException {
        Path m = writeModel(0);
        Files.write(dir.resolve("g2.bin"), new byte[7]);
        assertTrue(assertThrows(IOException.class, () -> TfjsWeights.read(m)).getMessage().contains("end inside weight e"));
        Files.delete(dir.resolve("g2.bin"));
        assertTrue(assertThrows(IOException.class, () -> TfjsWeights.read(m)).getMessage().contains("not found"));
    }

    @Test
    void halfPrecisionSpecialValues() {
        assertEquals(65504f, TfjsWeights.halfToFloat((short) 0x7bff));
        assertEquals(Float.NEGATIVE_INFINITY, TfjsWeights.halfToFloat((short) 0xfc00));
        assertTrue(Float.isNaN(TfjsWeights.halfToFloat((short) 0x7e00)));
        assertEquals(-0f, TfjsWeights.halfToFloat((short) 0x8000));
        assertEquals(0x1p-14f, TfjsWeights.halfToFloat((short) 0x0400));
    }

    /** face-api's dlib weights: 117 tensors in one 6,444,032-byte shard; values at known byte offsets. */
    @Test
    void readsDlibsWeightsAsTheManifestAndShardSay() throws IOException {
        DeepModels.faceapiOrSkip();
        TfjsWeights w = TfjsWeights.read(FaceModels.faceapi(FaceModels.DLIB_MANIFEST));
        byte[] bin = Files.readAllBytes(FaceModels.faceapi(FaceModels.DLIB_WEIGHTS));
        assertEquals(117, w.names().size());
        // First weight, offset 0: uint8 with the manifest's scale and min.
        TfjsWeights.Tensor stem = w.get("conv32_down/conv/filters", 7, 7, 3, 32);
        assertEquals(0.0005260649557207145, stem.quantization().scale());
        assertEquals((float) ((bin[0] & 0xff) * 0.0005260649557207145 - 0.07101876902229645), stem.values()[0]);
        assertEquals((float) ((bin[4703] & 0xff) * 0.0005260649557207145 - 0.07101876902229645), stem.values()[4703]);
        // An unquantized float32 weight at byte 60672.
        ByteBuffer le = ByteBuffer.wrap(bin).order(ByteOrder.LITTLE_ENDIAN);
        TfjsWeights.Tensor f32 = w.get("conv64_down/conv1/conv/filters", 3, 3, 32, 64);
        assertNull(f32.quantization());
        assertEquals(le.getFloat(60672), f32.values()[0]);
        assertEquals(le.getFloat(60672 + 4 * 18431), f32.values()[18431]);
        // The last weight, fc [256, 128], fills the last 32,768 bytes.
        TfjsWeights.Tensor fc = w.get("fc", 256, 128);
        assertEquals(6411264, bin.length - 256 * 128);
        for (int i : new int[] {0, 12345, 32767}) {
            assertEquals((float) ((bin[6411264 + i] & 0xff) * 0.000357687911566566 - 0.04578405268052045), fc.values()[i]);
        }
    }
}
