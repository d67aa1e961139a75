package org.privface.privacy;

/** A local-DP mechanism the agent can run on a face crop; PEEP, RDP and the Gaussian (GDP) mechanism implement it. */
public interface FaceMechanism {
    /** Crop width the mechanism expects, in pixels. */
    int width();

    int height();

    /** Perturbs one face, row-major pixels in [0,1] at width × height. */
    Release perturb(double[] face);

    /** ε one release spends on a whole face. */
    double epsilonPerFace();
}
