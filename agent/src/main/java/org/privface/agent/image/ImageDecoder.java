package org.privface.agent.image;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import org.opencv.core.Mat;
import org.opencv.core.MatOfByte;
import org.opencv.imgcodecs.Imgcodecs;

/**
 * Turns image bytes into a BGR frame, or refuses them with an {@link IOException} that says why.
 * Only PNG, JPEG, BMP, PNM and TIFF reach OpenCV's native decoders, and only after their header's
 * width and height were read here: a few kilobytes of PNG can declare a gigapixel image, which
 * OpenCV would allocate (up to its own 2^30-pixel limit) before finding out the data is not there.
 */
public final class ImageDecoder {
    /** Refuses files that could not be a camera frame, before reading them. */
    public static final long MAX_FILE_BYTES = 64L << 20;
    /** 8192 × 8192: twice a 4K frame's width, and at most 192 MiB once decoded to BGR. */
    public static final long MAX_PIXELS = 1L << 26;

    private ImageDecoder() {
    }

    /** Reads and decodes an image file; the message of a refusal names the file and the reason. */
    public static Mat read(Path file) throws IOException {
        return read(file, Imgcodecs.IMREAD_COLOR);
    }

    /** {@link #read(Path)} with OpenCV's {@code imread} flags (IMREAD_GRAYSCALE gives the pixels imread would). */
    public static Mat read(Path file, int imreadFlags) throws IOException {
        long size = Files.size(file);
        if (size == 0 || size > MAX_FILE_BYTES) {
            throw new IOException(file.getFileName() + ": file size " + size + " outside (0, " + MAX_FILE_BYTES + "]");
        }
        try {
            return decode(Files.readAllBytes(file), imreadFlags);
        } catch (IOException e) {
            throw new IOException(file.getFileName() + ": " + e.getMessage(), e);
        }
    }

    /** Decodes an encoded image to an 8-bit, 3-channel BGR Mat that the caller releases. */
    public static Mat decode(byte[] bytes) throws IOException {
        return decode(bytes, Imgcodecs.IMREAD_COLOR);
    }

    /** {@link #decode(byte[])} with OpenCV's {@code imdecode} flags. */
    public static Mat decode(byte[] bytes, int imreadFlags) throws IOException {
        if (bytes == null || bytes.length == 0) {
            throw new IOException("empty image");
        }
        if (bytes.length > MAX_FILE_BYTES) {
            throw new IOException("image of " + bytes.length + " bytes exceeds " + MAX_FILE_BYTES);
        }
        long[] wh = dimensions(bytes);
        if (wh[0] < 1 || wh[1] < 1 || wh[0] * wh[1] > MAX_PIXELS) {
            throw new IOException("image of " + wh[0] + "x" + wh[1] + " pixels outside [1, " + MAX_PIXELS + "]");
        }
        if ((bytes[0] & 0xff) == 0xFF && (bytes[1] & 0xff) == 0xD8 && !jpegEnds(bytes)) {
            // libjpeg decodes a cut-off JPEG with a warning and grey rows in place of the lost ones.
            throw new IOException("JPEG truncated: no end-of-image marker after its scan");
        }
        OpenCv.load();
        Mat m;
        MatOfByte buf = new MatOfByte(bytes);
        try {
            m = Imgcodecs.imdecode(buf, imreadFlags);
        } catch (RuntimeException e) {
            throw new IOException("not a decodable image: " + e.getClass().getSimpleName(), e);
        } finally {
            buf.release();
        }
        if (m == null || m.empty()) {
            if (m != null) {
                m.release();
            }
            throw new IOException("not a decodable image");
        }
        return m;
    }

    /**
     * Width and height from the header of a PNG, JPEG, BMP, PNM or TIFF file; any other format, or a
     * header too short to say, is refused.
     */
    static long[] dimensions(byte[] b) throws IOException {
        if (b.length >= 24 && (b[0] & 0xff) == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G') {
            if (!"IHDR".equals(new String(b, 12, 4, StandardCharsets.US_ASCII))) {
                throw new IOException("PNG without IHDR header");
            }
            return new long[] {u32be(b, 16), u32be(b, 20)};
        }
        if (b.length >= 4 && (b[0] & 0xff) == 0xFF && (b[1] & 0xff) == 0xD8) {
            return jpeg(b);
        }
        if (b.length >= 26 && b[0] == 'B' && b[1] == 'M') {
            long header = u32le(b, 14);
            if (header == 12) {
                return new long[] {u16le(b, 18), u16le(b, 20)};
            }
            // A negative height means top-down rows; the size is its magnitude.
            return new long[] {Math.abs((long) (int) u32le(b, 18)), Math.abs((long) (int) u32le(b, 22))};
        }
        if (b.length >= 3 && b[0] == 'P' && b[1] >= '1' && b[1] <= '6') {
            int[] pos = {2};
            return new long[] {pnmNumber(b, pos), pnmNumber(b, pos)};
        }
        if (b.length >= 8 && (b[0] == 'I' && b[1] == 'I' && b[2] == 42 && b[3] == 0
                || b[0] == 'M' && b[1] == 'M' && b[2] == 0 && b[3] == 42)) {
            return tiff(b, b[0] == 'I');
        }
        throw new IOException("unsupported image format (PNG, JPEG, BMP, PNM and TIFF are read)");
    }

    /** The frame size from the first start-of-frame segment, walking the segments before it. */
    private static long[] jpeg(byte[] b) throws IOException {
        int pos = 2;
        while (pos + 4 <= b.length) {
            if ((b[pos] & 0xff) != 0xFF) {
                throw new IOException("JPEG segment without marker");
            }
            int marker = b[pos + 1] & 0xff;
            if (marker == 0xFF) {
                pos++; // fill byte
                continue;
            }
            if (marker == 0x01 || marker >= 0xD0 && marker <= 0xD8) {
                pos += 2; // stand-alone markers carry no length
                continue;
            }
            int length = u16be(b, pos + 2);
            if (length < 2) {
                throw new IOException("JPEG segment of length " + length);
            }
            boolean sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
            if (sof) {
                if (pos + 9 > b.length) {
                    break;
                }
                return new long[] {u16be(b, pos + 7), u16be(b, pos + 5)};
            }
            if (marker == 0xDA || marker == 0xD9) {
                throw new IOException("JPEG without a frame header before its scan");
            }
            pos += 2 + length;
        }
        throw new IOException("JPEG truncated before its frame header");
    }

    /**
     * Whether an end-of-image marker follows the first scan. Inside entropy-coded data a 0xFF byte is
     * always followed by 0x00 or a restart marker, so FF D9 there can only be the end; an EXIF
     * thumbnail's own end marker sits in a segment before the scan and is stepped over.
     */
    private static boolean jpegEnds(byte[] b) {
        int pos = 2;
        while (pos + 4 <= b.length) {
            int marker = b[pos + 1] & 0xff;
            if ((b[pos] & 0xff) != 0xFF) {
                return false;
            }
            if (marker == 0xFF) {
                pos++;
                continue;
            }
            if (marker == 0x01 || marker >= 0xD0 && marker <= 0xD8) {
                pos += 2;
                continue;
            }
            if (marker == 0xDA) {
                for (int i = pos + 2; i + 1 < b.length; i++) {
                    if ((b[i] & 0xff) == 0xFF && (b[i + 1] & 0xff) == 0xD9) {
                        return true;
                    }
                }
                return false;
            }
            pos += 2 + ((b[pos + 2] & 0xff) << 8 | (b[pos + 3] & 0xff));
        }
        return false;
    }

    private static long[] tiff(byte[] b, boolean little) throws IOException {
        long ifd = little ? u32le(b, 4) : u32be(b, 4);
        if (ifd < 8 || ifd + 2 > b.length) {
            throw new IOException("TIFF directory outside the file");
        }
        int at = (int) ifd;
        int entries = little ? u16le(b, at) : u16be(b, at);
        long w = -1;
        long h = -1;
        for (int i = 0; i < entries; i++) {
            int e = at + 2 + 12 * i;
            if (e + 12 > b.length) {
                throw new IOException("TIFF directory truncated");
            }
            int tag = little ? u16le(b, e) : u16be(b, e);
            int type = little ? u16le(b, e + 2) : u16be(b, e + 2);
            long value;
            if (type == 3) {
                value = little ? u16le(b, e + 8) : u16be(b, e + 8);
            } else if (type == 4) {
                value = little ? u32le(b, e + 8) : u32be(b, e + 8);
            } else {
                continue;
            }
            if (tag == 256) {
                w = value;
            } else if (tag == 257) {
                h = value;
            }
        }
        if (w < 0 || h < 0) {
            throw new IOException("TIFF without width and height");
        }
        return new long[] {w, h};
    }

    private static long pnmNumber(byte[] b, int[] pos) throws IOException {
        int i = pos[0];
        while (i < b.length && (Character.isWhitespace(b[i]) || b[i] == '#')) {
            if (b[i] == '#') {
                while (i < b.length && b[i] != '\n' && b[i] != '\r') {
                    i++;
                }
            } else {
                i++;
            }
        }
        long v = 0;
        int digits = 0;
        while (i < b.length && b[i] >= '0' && b[i] <= '9' && digits < 10) {
            v = v * 10 + (b[i] - '0');
            i++;
            digits++;
        }
        if (digits == 0) {
            throw new IOException("PNM header without a size");
        }
        pos[0] = i;
        return v;
    }

    private static int u16be(byte[] b, int i) throws IOException {
        need(b, i, 2);
        return (b[i] & 0xff) << 8 | (b[i + 1] & 0xff);
    }

    private static int u16le(byte[] b, int i) throws IOException {
        need(b, i, 2);
        return (b[i + 1] & 0xff) << 8 | (b[i] & 0xff);
    }

    private static long u32be(byte[] b, int i) throws IOException {
        need(b, i, 4);
        return (long) u16be(b, i) << 16 | u16be(b, i + 2);
    }

    private static long u32le(byte[] b, int i) throws IOException {
        need(b, i, 4);
        return (long) u16le(b, i + 2) << 16 | u16le(b, i);
    }

    private static void need(byte[] b, int i, int n) throws IOException {
        if (i < 0 || i + n > b.length) {
            throw new IOException("image header truncated");
        }
    }
}
