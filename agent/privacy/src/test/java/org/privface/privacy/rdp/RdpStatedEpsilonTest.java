package org.privface.privacy.rdp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.privface.privacy.SecureLaplace;

/** RDP's stated ε, worked out from its basis without building the mechanism, is what the mechanism states. */
class RdpStatedEpsilonTest {
    @Test
    void statesWhatItsMechanismStates() {
        RdpBasis basis = RdpBasis.fit(RdpMechanismTest.syntheticFaces(40, 5), 16, 64, 64, 3);
        for (RdpMode mode : RdpMode.values()) {
            for (double eps : new double[] {0.5, 4, 20}) {
                double built = new RdpMechanism(basis, mode, eps, new SecureLaplace()).epsilonPerFace();
                assertEquals(built, RdpMechanism.statedEpsilon(basis, mode, eps), mode + " at " + eps);
            }
        }
    }
}
