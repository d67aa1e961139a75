package org.privface.privacy;

/**
 * PEEP (Chamikara et al., "Privacy Preserving Face Recognition Utilizing Differential Privacy",
 * Computers &amp; Security 2020): project a face onto an eigenface basis, clamp and scale the
 * coordinates with bounds fixed at fitting time, and add Laplace noise. Only the noisy
 * coordinates leave this class; the clean projection never does.
 */
public final class PeepMechanism implements FaceMechanism {
    private final EigenBasis basis;
    private final SensitivityMode mode;
    private final double epsilon;
    private final SecureLaplace laplace;
    /** What one release costs, fixed by mode, ε and basis: stated in every record, computed once. */
    private final double epsilonPerCoordinate;
    private final double epsilonPerFace;
    private final double noiseScale;

    /**
     * @param epsilon per face in the per-face modes, per coordinate (or pixel) in the paper modes
     */
    public PeepMechanism(EigenBasis basis, SensitivityMode mode, double epsilon, SecureLaplace laplace) {
        this.basis = basis;
        this.mode = mode;
        this.epsilon = Privacy.checkEpsilon(epsilon);
        this.laplace = laplace;
        int nc = basis.dimension();
        int d = basis.width() * basis.height();
        switch (mode) {
            case VECTOR -> {
                epsilonPerCoordinate = epsilon / nc;
                epsilonPerFace = statedEpsilon(mode, epsilon, nc, d);
                noiseScale = nc / epsilon;
            }
            case L1_CLIP -> {
                // One coordinate can carry the whole L1 distance 2C, so one coordinate can cost the whole ε.
                epsilonPerCoordinate = epsilon;
                epsilonPerFace = statedEpsilon(mode, epsilon, nc, d);
                noiseScale = 2 * basis.l1Radius() / epsilon;
            }
            case PAPER_PCA -> {
                epsilonPerCoordinate = epsilon;
                epsilonPerFace = statedEpsilon(mode, epsilon, nc, d);
                noiseScale = 1.0 / epsilon;
            }
            case PAPER_PIXEL -> {
                epsilonPerCoordinate = epsilon;
                epsilonPerFace = statedEpsilon(mode, epsilon, nc, d);
                noiseScale = 1.0 / epsilon;
            }
            default -> throw new IllegalArgumentException("unsupported mode " + mode);
        }
    }

    /**
     * The ε per face a release in this mode states, from the basis' shape alone: the whole ε in the
     * per-face modes, nc·ε (paper-pca) or d·ε (paper-pixel) in the paper modes.
     *
     * @param components the basis' nc
     * @param pixels     the crop's d
     */
    public static double statedEpsilon(SensitivityMode mode, double epsilon, int components, int pixels) {
        Privacy.checkEpsilon(epsilon);
        return switch (mode) {
            case VECTOR, L1_CLIP -> epsilon;
            case PAPER_PCA -> components * epsilon;
            case PAPER_PIXEL -> pixels * epsilon;
        };
    }

    @Override
    public int width() {
        return basis.width();
    }

    @Override
    public int height() {
        return basis.height();
    }

    /** Perturbs one face given as pixels in [0,1], row-major, at the basis' size. */
    @Override
    public Release perturb(double[] facePixels) {
        int nc = basis.dimension();
        return switch (mode) {
            case VECTOR -> {
                double[] scaled = basis.clampAndScale(basis.project(facePixels));
                // [0,1]^nc has L1 diameter nc: the sensitivity holds by construction of the clamp.
                double[] noisy = laplace.addNoise(scaled, nc, epsilon);
                yield release(noisy);
            }
            case L1_CLIP -> {
                double c1 = basis.l1Radius();
                // Radial projection onto the L1 ball: any two clipped vectors differ by at most 2C in L1.
                double[] c = L1Ball.clipInPlace(basis.project(facePixels), c1);
                double[] noisy = laplace.addNoise(c, 2 * c1, epsilon);
                yield release(noisy);
            }
            case PAPER_PIXEL -> {
                // Pixels are already in [0,1]; centring keeps each one in a range of width 1.
                double[] mean = basis.mean();
                double[] centred = new double[facePixels.length];
                for (int j = 0; j < centred.length; j++) {
                    centred[j] = Math.max(0, Math.min(1, facePixels[j])) - mean[j];
                }
                double[] noisyPixels = laplace.addNoisePerCoordinate(centred, 1.0, epsilon);
                for (int j = 0; j < noisyPixels.length; j++) {
                    noisyPixels[j] += mean[j];
                }
                yield release(basis.clampAndScale(basis.project(noisyPixels)));
            }
            case PAPER_PCA -> {
                double[] scaled = basis.clampAndScale(basis.project(facePixels));
                double[] noisy = laplace.addNoisePerCoordinate(scaled, 1.0, epsilon);
                yield release(noisy);
            }
        };
    }

    private Release release(double[] noisy) {
        return new Release(noisy, "PEEP", mode.wireName(), epsilonPerCoordinate, epsilonPerFace, noiseScale, basis.id(),
                null);
    }

    public EigenBasis basis() {
        return basis;
    }

    public SensitivityMode mode() {
        return mode;
    }

    /** ε one release spends on a whole face. */
    @Override
    public double epsilonPerFace() {
        return epsilonPerFace;
    }

    /**
     * ε each released coordinate (or, in paper-pixel, each pixel) can cost at worst: ε/nc in vector
     * mode (each coordinate spans 1 of the L1 diameter nc), the whole ε in l1-clip (one coordinate
     * can carry all of Δ), ε in the paper modes.
     */
    public double epsilonPerCoordinate() {
        return epsilonPerCoordinate;
    }
}
