package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class PeepMechanismTest {
    private final EigenBasis basis = EigenBasis.fit(EigenBasisTest.faces(30, 30, 9), 8, 6, 5);

    @Test
    void vectorModeSpendsTheConfiguredEpsilonPerFace() {
        PeepMechanism peep = new PeepMechanism(basis, SensitivityMode.VECTOR, 4.0, SecureLaplaceTest.seeded(1));
        Release r = peep.perturb(EigenBasisTest.faces(1, 30, 10)[0]);
        assertEquals(4.0, r.epsilonPerFace());
        assertEquals(0.5, r.epsilonPerCoordinate());
        assertEquals(2.0, r.noiseScale(), "Laplace(nc/eps) on [0,1]^nc");
        assertEquals(basis.id(), r.basisId());
        assertEquals(8, r.vector().length);
    }

    @Test
    void paperModeReportsTheHonestPerFaceEpsilon() {
        PeepMechanism peep = new PeepMechanism(basis, SensitivityMode.PAPER_PCA, 2.0, SecureLaplaceTest.seeded(2));
        Release r = peep.perturb(EigenBasisTest.faces(1, 30, 11)[0]);
        assertEquals(2.0, r.epsilonPerCoordinate());
        assertEquals(16.0, r.epsilonPerFace(), "nc * eps");
        assertEquals(0.5, r.noiseScale());
        assertEquals(16.0, peep.epsilonPerFace());
    }

    @Test
    void l1ClipSpendsTheConfiguredEpsilonWithSensitivityTwoC() {
        PeepMechanism peep = new PeepMechanism(basis, SensitivityMode.L1_CLIP, 5.0, SecureLaplaceTest.seeded(4));
        Release r = peep.perturb(EigenBasisTest.faces(1, 30, 13)[0]);
        assertEquals(5.0, r.epsilonPerFace());
        assertEquals(2 * basis.l1Radius() / 5.0, r.noiseScale(), 1e-12);
        // One coordinate can carry all of 2C: its worst case is the whole ε, not ε/nc.
        assertEquals(5.0, r.epsilonPerCoordinate());
    }

    @Test
    void l1ClipNeverExceedsItsRadiusBeforeNoise() {
        // With enormous epsilon the noise vanishes and the clipped projection shows through.
        PeepMechanism peep = new PeepMechanism(basis, SensitivityMode.L1_CLIP, 1e9, SecureLaplaceTest.seeded(5));
        double[] far = new double[30];
        java.util.Arrays.fill(far, 40.0);
        double norm = 0;
        for (double v : peep.perturb(far).vector()) {
            norm += Math.abs(v);
        }
        assertEquals(basis.l1Radius(), norm, 1e-3);
    }

    @Test
    void paperPixelReportsPixelsTimesEpsilon() {
        PeepMechanism peep = new PeepMechanism(basis, SensitivityMode.PAPER_PIXEL, 0.5, SecureLaplaceTest.seeded(6));
        Release r = peep.perturb(EigenBasisTest.faces(1, 30, 14)[0]);
        assertEquals(0.5, r.epsilonPerCoordinate());
        assertEquals(30 * 0.5, r.epsilonPerFace(), "d pixels * eps");
        assertEquals(8, r.vector().length, "published in the eigenspace");
        assertEquals(15.0, peep.epsilonPerFace());
    }

    @Test
    void neverReleasesTheCleanProjection() {
        PeepMechanism peep = new PeepMechanism(basis, SensitivityMode.VECTOR, 1000.0, SecureLaplaceTest.seeded(3));
        double[] face = EigenBasisTest.faces(1, 30, 12)[0];
        double[] clean = basis.clampAndScale(basis.project(face));
        Release r = peep.perturb(face);
        for (int k = 0; k < clean.length; k++) {
            assertNotEquals(clean[k], r.vector()[k]);
        }
    }

    @Test
    void rejectsBadEpsilonAndModes() {
        for (double eps : new double[] {0, -1, Double.NaN, Double.POSITIVE_INFINITY}) {
            assertThrows(IllegalArgumentException.class,
                    () -> new PeepMechanism(basis, SensitivityMode.VECTOR, eps, new SecureLaplace()));
        }
        assertThrows(IllegalArgumentException.class, () -> SensitivityMode.fromWireName("per-pixel-please"));
    }
}
