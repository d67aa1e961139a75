package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EigenStatsTest {

    private static void assertSameBasis(EigenBasis a, EigenBasis b) {
        assertEquals(a.dimension(), b.dimension());
        double[] ea = a.eigenvalues();
        double[] eb = b.eigenvalues();
        for (int k = 0; k < ea.length; k++) {
            assertEquals(ea[k], eb[k], 1e-9 * Math.max(1, ea[k]), "eigenvalue " + k);
        }
        double[] ma = a.mean();
        double[] mb = b.mean();
        for (int j = 0; j < ma.length; j++) {
            assertEquals(ma[j], mb[j], 1e-9);
        }
        for (int k = 0; k < a.dimension(); k++) {
            double[] e = new double[a.dimension()];
            e[k] = 1;
            double[] ua = a.reconstruct(e);
            double[] ub = b.reconstruct(e);
            for (int j = 0; j < ua.length; j++) {
                assertEquals(ua[j], ub[j], 1e-9, "component " + k + " pixel " + j);
            }
        }
    }

    @Test
    void mergingPartitionsEqualsFittingTheirUnion() {
        double[][] all = EigenBasisTest.faces(60, 30, 21);
        EigenBasis union = EigenBasis.fit(all, 5, 6, 5);
        EigenStats merged = EigenStats.of(Arrays.copyOfRange(all, 0, 7), 6, 5)
                .merge(EigenStats.of(Arrays.copyOfRange(all, 7, 31), 6, 5))
                .merge(EigenStats.of(Arrays.copyOfRange(all, 31, 60), 6, 5));
        assertEquals(60, merged.count());
        assertSameBasis(union, merged.basis(5, all));
    }

    @Test
    void mergeOrderDoesNotMatter() {
        double[][] all = EigenBasisTest.faces(45, 20, 22);
        EigenStats a = EigenStats.of(Arrays.copyOfRange(all, 0, 10), 5, 4);
        EigenStats b = EigenStats.of(Arrays.copyOfRange(all, 10, 12), 5, 4);
        EigenStats c = EigenStats.of(Arrays.copyOfRange(all, 12, 45), 5, 4);
        assertSameBasis(a.merge(b).merge(c).basis(4, all), c.merge(a.merge(b)).basis(4, all));
        assertSameBasis(a.merge(b).merge(c).basis(4, all), b.merge(c).merge(a).basis(4, all));
    }

    @Test
    void gramRouteAndStatisticsRouteAgreeWithFewerFacesThanPixels() {
        double[][] all = EigenBasisTest.faces(12, 40, 23);
        EigenBasis gram = EigenBasis.fit(all, 4, 8, 5);
        EigenStats s = EigenStats.of(Arrays.copyOfRange(all, 0, 5), 8, 5).merge(EigenStats.of(Arrays.copyOfRange(all, 5, 12), 8, 5));
        assertSameBasis(gram, s.basis(4, all));
    }

    @Test
    void roundTripsThroughAFile(@TempDir Path dir) throws Exception {
        double[][] all = EigenBasisTest.faces(20, 30, 24);
        EigenStats s = EigenStats.of(all, 6, 5);
        s.save(dir.resolve("p.stats"));
        assertSameBasis(s.basis(3, all), EigenStats.load(dir.resolve("p.stats")).basis(3, all));
    }
}
