package org.privface.privacy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;

/**
 * Each family's stated ε, asked without building a mechanism (the gateway's budget charges it),
 * is exactly what the built mechanism states on its releases.
 */
class StatedEpsilonTest {
    private final EigenBasis basis = EigenBasis.fit(EigenBasisTest.faces(30, 30, 9), 8, 6, 5);

    @Test
    void peepStatesWhatItsMechanismStates() {
        for (SensitivityMode mode : SensitivityMode.values()) {
            for (double eps : new double[] {0.5, 2, 8.25}) {
                double built = new PeepMechanism(basis, mode, eps, SecureLaplaceTest.seeded(1)).epsilonPerFace();
                assertEquals(built, PeepMechanism.statedEpsilon(mode, eps, basis.dimension(), basis.width() * basis.height()),
                        mode + " at " + eps);
            }
        }
    }

    @Test
    void embeddingStatesWhatItsPresetStates() {
        for (EmbeddingMechanism.Noise noise : EmbeddingMechanism.Noise.values()) {
            for (double share : new double[] {5, 10, 20, 36, 50, 100, 130}) {
                for (double nominal : new double[] {share, 2 * share}) {
                    double built = EmbeddingMechanism.publicPreset(EmbeddingBasis.DEFAULT_MODEL, noise, share, nominal)
                            .epsilonPerFace();
                    double stated = EmbeddingMechanism.statedEpsilon(noise, EmbeddingMechanism.Preset.forEpsilon(noise,
                            nominal), share);
                    assertEquals(built, stated, noise + " share " + share + " nominal " + nominal);
                }
            }
        }
    }
}
