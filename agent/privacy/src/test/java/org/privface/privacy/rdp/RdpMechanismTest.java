package org.privface.privacy.rdp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.IntStream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SeededRandom;

class RdpMechanismTest {
    static double[][] faces;
    static RdpBasis basis;

    /** Smooth random 64×64 "faces": a few Gaussian blobs on a grey background. */
    static double[][] syntheticFaces(int n, long seed) {
        Random r = new Random(seed);
        double[][] out = new double[n][64 * 64];
        for (int i = 0; i < n; i++) {
            double[][] blobs = new double[5][];
            for (int b = 0; b < blobs.length; b++) {
                blobs[b] = new double[] {16 + r.nextDouble() * 32, 16 + r.nextDouble() * 32, 4 + r.nextDouble() * 8,
                        r.nextDouble() - 0.5};
            }
            for (int y = 0; y < 64; y++) {
                for (int x = 0; x < 64; x++) {
                    double v = 0.5;
                    for (double[] b : blobs) {
                        double d2 = (x - b[0]) * (x - b[0]) + (y - b[1]) * (y - b[1]);
                        v += b[3] * Math.exp(-d2 / (2 * b[2] * b[2]));
                    }
                    out[i][y * 64 + x] = Math.max(0, Math.min(1, v));
                }
            }
        }
        return out;
    }

    static SecureLaplace seeded(long seed) {
        return new SecureLaplace(SeededRandom.of(seed));
    }

    @BeforeAll
    static void fit() {
        faces = syntheticFaces(60, 11);
        basis = RdpBasis.fit(faces, 16, 64, 64, 3);
    }

    @Test
    void weightsAreTheEigenProjectionOfTheWaveletBasis() {
        // F = W (C − H μ) must equal the eigenface projection of the image itself.
        double[] x = faces[3];
        double[] c = basis.wavelet().forward(x);
        double[] f = basis.eigen().project(x);
        for (int i = 0; i < f.length; i++) {
            double s = 0;
            for (int k = 0; k < c.length; k++) {
                s += basis.weight(i, k) * (c[k] - basis.meanCoefficient(k));
            }
            assertEquals(f[i], s, 1e-4, "feature " + i);
        }
        // Haar sensitivities are 2^level: 8 for the coarsest level, 2 for the finest, for 3 levels.
        assertEquals(8.0, basis.sensitivity(0), 1e-9);
        assertEquals(2.0, basis.sensitivity(64 * 64 - 1), 1e-9);
    }

    @Test
    void rankingSortsByMagnitude() {
        double[] c = basis.wavelet().forward(faces[0]);
        int[] expected = IntStream.range(0, c.length).boxed()
                .sorted(Comparator.comparingDouble((Integer k) -> -Math.abs((float) c[k])).thenComparing(k -> k))
                .mapToInt(Integer::intValue).toArray();
        assertArrayEquals(expected, RdpMechanism.rankByMagnitude(c));
    }

    @Test
    void paperModesReportAnUnboundedPerFaceEpsilon() {
        for (RdpMode mode : new RdpMode[] {RdpMode.NA, RdpMode.LMGD, RdpMode.UNIFORM}) {
            RdpMechanism m = new RdpMechanism(basis, mode, 0.6, 0.02, 512, seeded(1), RdpMechanism.LmgdSettings.DEFAULT);
            RdpRelease r = m.sanitize(faces[1], true);
            assertEquals(Double.POSITIVE_INFINITY, r.epsilonPerFace(), mode + " releases clean coefficients");
            assertTrue(r.noised() >= 1 && r.noised() <= 512);
            assertTrue(Double.isFinite(r.epsilonNoised()) && r.epsilonNoised() > 0);
            assertEquals(64 * 64, r.image().length);
            assertTrue(Arrays.stream(r.image()).allMatch(v -> v >= 0 && v <= 1));
            assertEquals(16, r.features().length);
        }
    }

    @Test
    void paperModesNoiseOnlyTheTopKRanksAndCopyTheRest() {
        // Algorithm 1: nothing is zeroed; every coefficient below rank K leaves exactly as it came.
        double[] c = basis.wavelet().forward(faces[2]);
        int[] rank = RdpMechanism.rankByMagnitude(c);
        for (RdpMode mode : new RdpMode[] {RdpMode.UNIFORM, RdpMode.NA, RdpMode.NA_RESCALED, RdpMode.LMGD}) {
            RdpMechanism.Ranked r = RdpMechanism.ranked(c, basis.weightRows(), basis.featureRanges(),
                    basis.sensitivities(), mode, 0.2, 0.02, c.length, seeded(5), RdpMechanism.LmgdSettings.DEFAULT);
            int changed = 0;
            int deepest = -1;
            for (int j = 0; j < rank.length; j++) {
                if (r.coefficients()[rank[j]] != c[rank[j]]) {
                    changed++;
                    deepest = j;
                }
            }
            assertTrue(changed <= r.noised(), mode + ": " + changed + " changed, " + r.noised() + " noised");
            assertTrue(deepest < 1000, mode + ": rank " + deepest + " changed");
            assertTrue(r.noised() >= 1);
        }
    }

    @Test
    void paperModesAtAHugeBudgetReturnTheFaceItself() {
        RdpMechanism m = new RdpMechanism(basis, RdpMode.UNIFORM, 1e9, seeded(6));
        double[] image = m.sanitize(faces[4], true).image();
        for (int j = 0; j < image.length; j++) {
            assertEquals(Math.max(0, Math.min(1, faces[4][j])), image[j], 1e-4, "pixel " + j);
        }
    }

    @Test
    void realNoiseVarianceMatchesTheTheory() {
        // Averaged over many releases, the noise energy added equals Σ q_r 2 b_r².
        // NA's scales span four orders of magnitude (1/|w_ik|), so 3000 draws cannot estimate its
        // mean energy: the sum is dominated by rare deep ranks. Plain RDP's single scale can.
        for (RdpMode mode : new RdpMode[] {RdpMode.UNIFORM, RdpMode.STRICT}) {
            RdpMechanism m = new RdpMechanism(basis, mode, 0.8, 0.02, mode == RdpMode.STRICT ? 64 : 512, seeded(2),
                    RdpMechanism.LmgdSettings.DEFAULT);
            double real = 0;
            double theory = 0;
            int n = 3000;
            for (int i = 0; i < n; i++) {
                RdpRelease r = m.sanitize(faces[i % faces.length], false);
                real += r.realNoiseEnergy();
                theory += r.expectedNoiseEnergy();
            }
            assertEquals(1.0, real / theory, 0.06, mode + ": real/theoretical variance");
        }
    }

    @Test
    void strictSpendsExactlyEpsilonAndConvergesToTheClampedFaceAtHugeEpsilon() {
        RdpMechanism m = new RdpMechanism(basis, RdpMode.STRICT, 1e7, 0.02, basis.size(), seeded(3),
                RdpMechanism.LmgdSettings.DEFAULT);
        RdpRelease r = m.sanitize(faces[5], true);
        // The stated ε is Σ Δ_k/b_k rounded up: at most ε, within a few ulps of it.
        assertTrue(r.epsilonPerFace() <= 1e7 && r.epsilonPerFace() >= 1e7 * (1 - 1e-12), "stated " + r.epsilonPerFace());
        double[] clean = basis.eigen().project(faces[5]);
        for (int i = 0; i < clean.length; i++) {
            assertEquals(clean[i], r.features()[i], 1e-3, "feature " + i);
        }
        RdpMechanism honest = new RdpMechanism(basis, RdpMode.STRICT, 2.0, seeded(4));
        assertEquals(2.0, honest.sanitize(faces[6], false).epsilonPerFace(), 1e-12);
        assertTrue(honest.epsilonPerFace() <= 2.0);
        assertEquals(honest.epsilonPerFace(), honest.sanitize(faces[6], false).epsilonPerFace());
    }
}
