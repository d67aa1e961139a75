package org.privface.privacy.latent;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.EigenBasisTest;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.SeededRandom;

class LatentAndKSameTest {
    static final double[][] FACES = EigenBasisTest.faces(40, 400, 3);
    static final EigenBasis BASIS = EigenBasis.fit(FACES, 12, 20, 20);

    static SecureLaplace seeded(long seed) {
        return new SecureLaplace(SeededRandom.of(seed));
    }

    @Test
    void privacyLossNeverExceedsEpsilonTimesTheNormalisedDistance() {
        double eps = 3.0;
        LatentObfuscation m = new LatentObfuscation(BASIS, eps, seeded(1));
        Random r = new Random(5);
        int n = BASIS.dimension();
        double worst = 0;
        for (int trial = 0; trial < 20_000; trial++) {
            double[] c = new double[n];
            double[] c2 = new double[n];
            double[] y = new double[n];
            for (int i = 0; i < n; i++) {
                double lo = BASIS.lower(i);
                double w = BASIS.upper(i) - lo;
                c[i] = lo + w * r.nextDouble();
                c2[i] = trial % 2 == 0 ? lo : lo + w * r.nextDouble(); // extremes included
                y[i] = lo + w * (3 * r.nextDouble() - 1);
            }
            // Exact log density ratio of the Laplace noise at output y for inputs c and c2.
            double loss = 0;
            for (int i = 0; i < n; i++) {
                loss += (Math.abs(y[i] - c2[i]) - Math.abs(y[i] - c[i])) / m.scale(i);
            }
            double bound = eps * m.distance(c, c2);
            assertTrue(loss <= bound + 1e-9, "loss " + loss + " > " + bound);
            worst = Math.max(worst, loss / eps);
        }
        assertTrue(worst > 0.3, "the bound is approached, so the check has teeth: " + worst);
    }

    @Test
    void releasesStayInTheFittedRangesAndSpendEpsilonPerFace() {
        LatentObfuscation m = new LatentObfuscation(BASIS, 2.0, seeded(2));
        for (double[] f : FACES) {
            double[] c = m.obfuscate(f);
            for (int i = 0; i < c.length; i++) {
                assertTrue(c[i] >= BASIS.lower(i) && c[i] <= BASIS.upper(i));
            }
            assertEquals(400, m.decode(c).length);
        }
        assertEquals(2.0, m.perturb(FACES[0]).epsilonPerFace());
    }

    @Test
    void everyClusterHasAtLeastKMembersAndEachOutputIsItsClusterMean() {
        for (KSame.Variant v : KSame.Variant.values()) {
            for (int k : new int[] {2, 3, 7}) {
                KSame.Result res = KSame.apply(FACES, k, v, BASIS);
                int[] size = new int[res.clusters()];
                for (int c : res.cluster()) {
                    size[c]++;
                }
                for (int s : size) {
                    assertTrue(s >= k && s < 2 * k, v + " k=" + k + ": cluster of " + s);
                }
                for (int c = 0; c < res.clusters(); c++) {
                    double[] sum = new double[FACES[0].length];
                    int count = 0;
                    int first = -1;
                    for (int i = 0; i < FACES.length; i++) {
                        if (res.cluster()[i] == c) {
                            first = first < 0 ? i : first;
                            double[] src = v == KSame.Variant.PIXEL ? FACES[i] : BASIS.reconstruct(BASIS.project(FACES[i]));
                            for (int j = 0; j < sum.length; j++) {
                                sum[j] += src[j];
                            }
                            count++;
                        }
                    }
                    for (int j = 0; j < sum.length; j++) {
                        assertEquals(sum[j] / count, res.faces()[first][j], 1e-4, v + " output is the cluster mean");
                    }
                }
            }
        }
    }

    @Test
    void kOfOneReturnsTheInput() {
        KSame.Result res = KSame.apply(FACES, 1, KSame.Variant.PIXEL, BASIS);
        for (int i = 0; i < FACES.length; i++) {
            assertArrayEquals(FACES[i], res.faces()[i], 1e-12);
        }
    }

    @Test
    void kSameEigenAtFullRankEqualsKSamePixel() {
        double[][] few = java.util.Arrays.copyOf(FACES, 15);
        EigenBasis full = EigenBasis.fit(few, few.length - 1, 20, 20);
        KSame.Result pixel = KSame.apply(few, 3, KSame.Variant.PIXEL, full);
        KSame.Result eigen = KSame.apply(few, 3, KSame.Variant.EIGEN, full);
        assertArrayEquals(pixel.cluster(), eigen.cluster());
        for (int i = 0; i < few.length; i++) {
            assertArrayEquals(pixel.faces()[i], eigen.faces()[i], 1e-4);
        }
    }
}
