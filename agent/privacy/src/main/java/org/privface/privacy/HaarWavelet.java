package org.privface.privacy;

/**
 * Multi-level 2D orthonormal Haar wavelet transform (Mallat layout) for RDP (Ou et al.).
 *
 * <p>Written here rather than taken from a library: the only wavelet jars that resolve are
 * JWave 1.0.3 (unmaintained since 2013, object-heavy 2D API) and BoofCV (5 MB for this one
 * transform). Haar is a few lines: each level maps a pair (a, b) to ((a+b)/√2, (a-b)/√2) along
 * rows, then columns, on the top-left approximation block, which keeps the transform orthonormal
 * (Hᵀ H = I, so energy is preserved and the inverse is the transpose).
 *
 * <p>Size rule: width and height must each be divisible by 2^levels; RDP resizes face crops to
 * 64×64 before transforming, so nothing is ever padded or cropped inside the transform.
 */
public final class HaarWavelet {
    private static final double INV_SQRT2 = 1.0 / Math.sqrt(2.0);

    private final int width;
    private final int height;
    private final int levels;

    public HaarWavelet(int width, int height, int levels) {
        if (levels < 1) {
            throw new IllegalArgumentException("levels must be >= 1, was " + levels);
        }
        if (width < 2 || height < 2 || width % (1 << levels) != 0 || height % (1 << levels) != 0) {
            throw new IllegalArgumentException("a " + width + "x" + height + " image cannot take " + levels
                    + " Haar levels: both sides must be divisible by " + (1 << levels));
        }
        this.width = width;
        this.height = height;
        this.levels = levels;
    }

    /** Coefficients of a row-major image; the input is untouched. */
    public double[] forward(double[] image) {
        check(image);
        double[] c = image.clone();
        double[] tmp = new double[Math.max(width, height)];
        int w = width;
        int h = height;
        for (int l = 0; l < levels; l++) {
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w / 2; x++) {
                    double a = c[y * width + 2 * x];
                    double b = c[y * width + 2 * x + 1];
                    tmp[x] = (a + b) * INV_SQRT2;
                    tmp[w / 2 + x] = (a - b) * INV_SQRT2;
                }
                System.arraycopy(tmp, 0, c, y * width, w);
            }
            for (int x = 0; x < w; x++) {
                for (int y = 0; y < h / 2; y++) {
                    double a = c[2 * y * width + x];
                    double b = c[(2 * y + 1) * width + x];
                    tmp[y] = (a + b) * INV_SQRT2;
                    tmp[h / 2 + y] = (a - b) * INV_SQRT2;
                }
                for (int y = 0; y < h; y++) {
                    c[y * width + x] = tmp[y];
                }
            }
            w /= 2;
            h /= 2;
        }
        return c;
    }

    /** The image whose coefficients these are; the input is untouched. */
    public double[] inverse(double[] coefficients) {
        check(coefficients);
        double[] c = coefficients.clone();
        double[] tmp = new double[Math.max(width, height)];
        for (int l = levels - 1; l >= 0; l--) {
            int w = width >> l;
            int h = height >> l;
            for (int x = 0; x < w; x++) {
                for (int y = 0; y < h / 2; y++) {
                    double s = c[y * width + x];
                    double d = c[(h / 2 + y) * width + x];
                    tmp[2 * y] = (s + d) * INV_SQRT2;
                    tmp[2 * y + 1] = (s - d) * INV_SQRT2;
                }
                for (int y = 0; y < h; y++) {
                    c[y * width + x] = tmp[y];
                }
            }
            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w / 2; x++) {
                    double s = c[y * width + x];
                    double d = c[y * width + w / 2 + x];
                    tmp[2 * x] = (s + d) * INV_SQRT2;
                    tmp[2 * x + 1] = (s - d) * INV_SQRT2;
                }
                System.arraycopy(tmp, 0, c, y * width, w);
            }
        }
        return c;
    }

    public int width() {
        return width;
    }

    public int height() {
        return height;
    }

    public int levels() {
        return levels;
    }

    private void check(double[] a) {
        if (a.length != width * height) {
            throw new IllegalArgumentException("expected " + width * height + " values, got " + a.length);
        }
    }
}
