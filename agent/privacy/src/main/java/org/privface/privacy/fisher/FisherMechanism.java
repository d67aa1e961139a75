package org.privface.privacy.fisher;

import org.privface.privacy.FaceMechanism;
import org.privface.privacy.L1Ball;
import org.privface.privacy.Privacy;
import org.privface.privacy.Release;
import org.privface.privacy.SecureLaplace;

/**
 * The frontier's best vector release (issue 11, docs/frontier.md): a face's k Fisher coordinates,
 * clipped to an L1 ball of radius R fixed from the enrollment faces, plus Laplace(2R/ε) noise on
 * each coordinate.
 *
 * <p>Proof sketch: any two clipped vectors differ by at most 2R in L1, so Laplace(2R/ε) per
 * coordinate is ε-DP for the whole vector (basic Laplace mechanism); with the grid's rounding
 * charged as in {@link SecureLaplace#addNoise}. The projection and R depend only on the
 * enrollment faces, which the agent treats as public, as it does its eigenbasis.
 */
public final class FisherMechanism implements FaceMechanism {
    /** The recommended presets per ε band, chosen on validation in docs/frontier.md (lfw5). */
    public record Preset(int p, int k, double quantile) {
        public static Preset forEpsilon(double epsilon) {
            Privacy.checkEpsilon(epsilon);
            if (epsilon <= 10) {
                return new Preset(128, 3, 0.25);
            }
            if (epsilon <= 20) {
                return new Preset(64, 3, 0.25);
            }
            return new Preset(64, 4, 0.9);
        }
    }

    private final FisherBasis basis;
    private final double epsilon;
    private final SecureLaplace laplace;

    public FisherMechanism(FisherBasis basis, double epsilon, SecureLaplace laplace) {
        this.basis = basis;
        this.epsilon = Privacy.checkEpsilon(epsilon);
        this.laplace = laplace;
    }

    @Override
    public Release perturb(double[] face) {
        double r = basis.l1Radius();
        double[] z = L1Ball.clipInPlace(basis.project(face), r);
        double[] noisy = laplace.addNoise(z, 2 * r, epsilon);
        // Per coordinate the worst case is the whole ε: under an L1 clip one coordinate can carry all of 2R.
        return new Release(noisy, "FISHER", "l1-clip", epsilon, epsilon, 2 * r / epsilon, basis.id(), null);
    }

    @Override
    public int width() {
        return basis.eigen().width();
    }

    @Override
    public int height() {
        return basis.eigen().height();
    }

    @Override
    public double epsilonPerFace() {
        return epsilon;
    }
}
