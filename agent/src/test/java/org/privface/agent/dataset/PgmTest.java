package org.privface.agent.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opencv.core.Mat;

class PgmTest {

    private static byte[] pgm(String header, byte[] pixels) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(header.getBytes(StandardCharsets.US_ASCII));
        out.write(pixels);
        return out.toByteArray();
    }

    @Test
    void readsHeaderCommentsAndPixelBytesThatLookLikeWhiteSpace(@TempDir Path dir) throws Exception {
        // Pixel values 10 (\n), 32 (space) and '#' must be read as pixels, not header syntax.
        byte[] px = {10, 32, '#', (byte) 255, 0, 9};
        Path f = dir.resolve("a.pgm");
        Files.write(f, pgm("P5\n# made by a test\n3 # width\n2\n255\n", px));
        Mat m = Pgm.read(f);
        assertEquals(3, m.cols());
        assertEquals(2, m.rows());
        byte[] back = new byte[6];
        m.get(0, 0, back);
        assertEquals(java.util.Arrays.toString(px), java.util.Arrays.toString(back));
    }

    @Test
    void rejectsTruncatedAndForeignFiles(@TempDir Path dir) throws Exception {
        Path truncated = dir.resolve("t.pgm");
        Files.write(truncated, pgm("P5 4 4 255\n", new byte[5]));
        assertThrows(java.io.IOException.class, () -> Pgm.read(truncated));
        Path ascii = dir.resolve("p2.pgm");
        Files.write(ascii, "P2 1 1 255\n7\n".getBytes(StandardCharsets.US_ASCII));
        assertThrows(java.io.IOException.class, () -> Pgm.read(ascii));
        Path empty = dir.resolve("e.pgm");
        Files.write(empty, new byte[0]);
        assertThrows(java.io.IOException.class, () -> Pgm.read(empty));
        // A pixel above maxval would otherwise wrap round to a dark value after scaling to 255.
        var above = assertThrows(java.io.IOException.class, () -> Pgm.decode(pgm("P5 2 1 100\n", new byte[] {50, (byte) 200}), "m.pgm"));
        assertTrue(above.getMessage().contains("above maxval"), above.getMessage());
        var huge = assertThrows(java.io.IOException.class, () -> Pgm.decode(pgm("P5 100000 100000 255\n", new byte[8]), "h.pgm"));
        assertTrue(huge.getMessage().contains("unsupported PGM header"), huge.getMessage());
    }
}
