package org.privface.evaluation.papers;

import java.util.Locale;

import org.privface.privacy.rdp.RdpBasis;

/**
 * One reading of what the RDP paper leaves unstated (docs/privacy-rdp.md, "Readings"): the image
 * geometry, the number of Haar levels, the pixel scale and Δ_i.
 *
 * <p>Where 2^levels does not divide a side, the face is padded by repeating its last row and
 * column (what PyWavelets' default symmetric mode does for Haar at an odd length), every method
 * runs on the padded face, and the release is cropped back before it is measured.
 *
 * <p>The [0, 255] scale runs as [0, 1] with Δ_i / 255: Eq. 3's scales are linear in Δ_i and
 * clipping commutes with scaling, so the noise relative to the image is the same. What differs is
 * what the text does not scale: the unit L1 bound is ‖u_i‖₁ whatever the pixels, and the release
 * is a saved 8-bit image, so noise under half a grey level rounds away.
 *
 * @param source what the pixels are: "150" (the data set's funneled frame) or "250 (upsampled)"
 */
record RdpReading(String source, int width, int height, int levels, Pixels pixels, Delta delta) {

    /** Pixel scale of the faces the mechanism sees. */
    enum Pixels {
        UNIT("[0,1]"), BYTE("[0,255]");

        final String label;

        Pixels(String label) {
            this.label = label;
        }
    }

    /** Δ_i (Def. 2), never given a value in the paper. */
    enum Delta {
        /** The range of feature i over the fitting faces, at the pixel scale in use. */
        RANGE("data range"),
        /** ‖u_i‖₁: the worst case over every image whose pixels span one unit, at either scale. */
        UNIT_L1("unit L1 bound");

        final String label;

        Delta(String label) {
            this.label = label;
        }
    }

    RdpReading {
        if (levels < 1 || levels > 6) {
            throw new IllegalArgumentException("levels must be in [1, 6], was " + levels);
        }
        if (width < 2 || height < 2) {
            throw new IllegalArgumentException("image too small: " + width + "x" + height);
        }
    }

    int paddedWidth() {
        return roundUp(width, 1 << levels);
    }

    int paddedHeight() {
        return roundUp(height, 1 << levels);
    }

    int pixelCount() {
        return width * height;
    }

    private static int roundUp(int n, int m) {
        return (n + m - 1) / m * m;
    }

    /** The face at the padded size, its last row and column repeated. */
    double[] pad(double[] face) {
        check(face, pixelCount());
        int pw = paddedWidth();
        int ph = paddedHeight();
        if (pw == width && ph == height) {
            return face.clone();
        }
        double[] out = new double[pw * ph];
        for (int y = 0; y < ph; y++) {
            int sy = Math.min(y, height - 1);
            for (int x = 0; x < pw; x++) {
                out[y * pw + x] = face[sy * width + Math.min(x, width - 1)];
            }
        }
        return out;
    }

    /** A padded image cropped back to width × height, and saved at the pixel scale (8-bit: rounded). */
    double[] release(double[] padded) {
        int pw = paddedWidth();
        check(padded, pw * paddedHeight());
        double[] out = new double[pixelCount()];
        for (int y = 0; y < height; y++) {
            System.arraycopy(padded, y * pw, out, y * width, width);
        }
        if (pixels == Pixels.BYTE) {
            for (int j = 0; j < out.length; j++) {
                out[j] = Math.round(255 * out[j]) / 255.0;
            }
        }
        return out;
    }

    /** Δ_i for the mechanism, which works on [0, 1] pixels (see the class comment for [0, 255]). */
    double[] delta(RdpBasis basis) {
        double[] d = delta == Delta.RANGE ? basis.featureRanges() : basis.featureBounds();
        if (pixels == Pixels.BYTE && delta == Delta.UNIT_L1) {
            for (int i = 0; i < d.length; i++) {
                d[i] /= 255;
            }
        }
        return d;
    }

    RdpReading withLevels(int l) {
        return new RdpReading(source, width, height, l, pixels, delta);
    }

    RdpReading with(Pixels p, Delta d) {
        return new RdpReading(source, width, height, levels, p, d);
    }

    /** One line for tables and logs. */
    String describe() {
        String size = width == height ? width + "x" + width : width + "x" + height;
        String pad = paddedWidth() == width && paddedHeight() == height ? ""
                : " padded to " + paddedWidth() + "x" + paddedHeight();
        return String.format(Locale.ROOT, "%s (%s)%s, %d Haar level%s, grey %s, Δ_i = %s", size, source, pad, levels,
                levels == 1 ? "" : "s", pixels.label, delta.label);
    }

    private static void check(double[] a, int n) {
        if (a.length != n) {
            throw new IllegalArgumentException("expected " + n + " values, got " + a.length);
        }
    }
}
