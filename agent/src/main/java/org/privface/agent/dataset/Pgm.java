package org.privface.agent.dataset;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.privface.agent.image.OpenCv;

/**
 * Binary PGM (P5, 8-bit) reader. The header may hold comments, so it is parsed token by token
 * and exactly width×height bytes follow a single white-space byte; the pixel block is never split
 * on white space.
 */
public final class Pgm {
    private Pgm() {
    }

    public static Mat read(Path file) throws IOException {
        return decode(Files.readAllBytes(file), file.toString());
    }

    /** Decodes PGM bytes; {@code name} only labels the error messages. */
    public static Mat decode(byte[] b, String name) throws IOException {
        int[] pos = {0};
        if (!"P5".equals(token(b, pos))) {
            throw new IOException(name + ": not a binary PGM (P5)");
        }
        int w = number(b, pos, name);
        int h = number(b, pos, name);
        int max = number(b, pos, name);
        if (w < 1 || h < 1 || (long) w * h > 1 << 26 || max < 1 || max > 255) {
            throw new IOException(name + ": unsupported PGM header " + w + "x" + h + " max " + max);
        }
        int start = pos[0] + 1; // the single white-space byte after maxval
        if (start + (long) w * h > b.length) {
            throw new IOException(name + ": truncated, expected " + w * h + " pixel bytes");
        }
        OpenCv.load();
        Mat m = new Mat(h, w, CvType.CV_8UC1);
        byte[] px = new byte[w * h];
        System.arraycopy(b, start, px, 0, px.length);
        if (max != 255) {
            for (int i = 0; i < px.length; i++) {
                int v = px[i] & 0xff;
                if (v > max) {
                    m.release();
                    throw new IOException(name + ": pixel value " + v + " above maxval " + max);
                }
                px[i] = (byte) Math.round(v * 255.0 / max);
            }
        }
        m.put(0, 0, px);
        return m;
    }

    private static int number(byte[] b, int[] pos, String file) throws IOException {
        String t = token(b, pos);
        try {
            return Integer.parseInt(t);
        } catch (NumberFormatException e) {
            throw new IOException(file + ": bad PGM header field '" + t + "'");
        }
    }

    private static String token(byte[] b, int[] pos) {
        int i = pos[0];
        while (i < b.length) {
            if (b[i] == '#') {
                while (i < b.length && b[i] != '\n' && b[i] != '\r') {
                    i++;
                }
            } else if (Character.isWhitespace(b[i])) {
                i++;
            } else {
                break;
            }
        }
        int start = i;
        while (i < b.length && !Character.isWhitespace(b[i]) && b[i] != '#') {
            i++;
        }
        pos[0] = i;
        return new String(b, start, i - start, java.nio.charset.StandardCharsets.US_ASCII);
    }
}
