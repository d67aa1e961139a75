package org.privface.agent.privacy;

/**
 * PEEP (Chamikara et al., "Privacy Preserving Face Recognition Utilizing Differential Privacy",
 * Computers &amp; Security 2020): project a face onto an eigenface basis, clamp and scale the
 * coordinates with bounds fixed at fitting time, and add Laplace noise. Only the noisy
 * coordinates leave this class; the clean projection never does.
 */
public final class PeepMechanism {
    private final EigenBasis basis;
    private final SensitivityMode mode;
    private final double epsilon;
    private final SecureLaplace laplace;

    /**
     * @param epsilon per face in {@link SensitivityMode#VECTOR}, per coordinate in the paper modes
     */
    public PeepMechanism(EigenBasis basis, SensitivityMode mode, double epsilon, SecureLaplace laplace) {
        this.basis = basis;
        this.mode = mode;
        this.epsilon = Privacy.checkEpsilon(epsilon);
        this.laplace = laplace;
    }

    /** Perturbs one face given as pixels in [0,1], row-major, at the basis' size. */
    public Release perturb(double[] facePixels) {
        double[] scaled = basis.clampAndScale(basis.project(facePixels));
        int nc = scaled.length;
        return switch (mode) {
            case VECTOR -> {
                // [0,1]^nc has L1 diameter nc: the sensitivity holds by construction of the clamp.
                double[] noisy = laplace.addNoise(scaled, nc, epsilon);
                yield new Release(noisy, mode, epsilon / nc, epsilon, nc / epsilon, basis.id());
            }
            case PAPER_PCA -> {
                double[] noisy = new double[nc];
                for (int k = 0; k < nc; k++) {
                    noisy[k] = laplace.addNoise(new double[] {scaled[k]}, 1.0, epsilon)[0];
                }
                yield new Release(noisy, mode, epsilon, nc * epsilon, 1.0 / epsilon, basis.id());
            }
        };
    }

    public EigenBasis basis() {
        return basis;
    }

    public SensitivityMode mode() {
        return mode;
    }

    /** ε one release spends on a whole face. */
    public double epsilonPerFace() {
        return mode == SensitivityMode.VECTOR ? epsilon : basis.dimension() * epsilon;
    }
}
