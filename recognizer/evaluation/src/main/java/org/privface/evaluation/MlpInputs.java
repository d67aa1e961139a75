package org.privface.evaluation;

/** The recognizer's MLP takes floats; every study that trains one copies its doubles here. */
public final class MlpInputs {
    private MlpInputs() {
    }

    public static float[][] floats(double[][] x) {
        float[][] f = new float[x.length][];
        for (int i = 0; i < x.length; i++) {
            f[i] = new float[x[i].length];
            for (int j = 0; j < x[i].length; j++) {
                f[i][j] = (float) x[i][j];
            }
        }
        return f;
    }
}
