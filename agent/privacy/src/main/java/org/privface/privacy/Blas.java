package org.privface.privacy;

import org.bytedeco.javacpp.FloatPointer;
import org.bytedeco.javacpp.Loader;
import org.bytedeco.openblas.global.openblas;

/**
 * Matrix-vector products through OpenBLAS, which ships with the OpenCV package. Projection is the
 * hot loop of every perturbation (128 × 2,914 multiply-adds per face): OpenBLAS' AVX2 sgemv does
 * it in about a tenth of the time of the best plain-Java loop measured here.
 */
final class Blas {
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    static {
        Loader.load(openblas.class);
        // One gateway thread per camera: a multi-threaded gemv on 1.5 MB only adds hand-offs.
        openblas.blas_set_num_threads(1);
    }

    private Blas() {
    }

    /** Off-heap copy of a row-major matrix, kept for the life of its owner. */
    static FloatPointer matrix(double[][] rows) {
        int cols = rows[0].length;
        float[] flat = new float[rows.length * cols];
        for (int r = 0; r < rows.length; r++) {
            for (int c = 0; c < cols; c++) {
                flat[r * cols + c] = (float) rows[r][c];
            }
        }
        return new FloatPointer(flat);
    }

    /** y = A·x for a row-major rows×cols matrix A. */
    static void gemv(FloatPointer a, int rows, int cols, float[] x, float[] y) {
        Scratch s = SCRATCH.get();
        FloatPointer px = s.x(cols);
        FloatPointer py = s.y(rows);
        px.put(x, 0, cols);
        openblas.cblas_sgemv(openblas.CblasRowMajor, openblas.CblasNoTrans, rows, cols, 1f, a, cols, px, 1, 0f, py, 1);
        py.get(y, 0, rows);
    }

    /** Per-thread input and output buffers, grown on demand, so no call allocates off-heap memory. */
    private static final class Scratch {
        private FloatPointer x = new FloatPointer(0);
        private FloatPointer y = new FloatPointer(0);

        FloatPointer x(int n) {
            if (x.capacity() < n) {
                x.close();
                x = new FloatPointer(n);
            }
            return x;
        }

        FloatPointer y(int n) {
            if (y.capacity() < n) {
                y.close();
                y = new FloatPointer(n);
            }
            return y;
        }
    }
}
