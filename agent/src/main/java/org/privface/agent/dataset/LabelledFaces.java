package org.privface.agent.dataset;

import java.util.List;

/**
 * Face vectors (47×62 grey pixels in [0,1], row-major) with integer labels.
 *
 * @param names   label index to person name
 * @param origins where each face came from, relative to the dataset root
 * @param skipped what the loader left out and why (non-image files, empty person folders, images
 *                without a face), relative to the dataset root
 */
public record LabelledFaces(List<String> names, double[][] faces, int[] labels, List<String> origins, List<String> skipped) {
    public LabelledFaces {
        if (faces.length != labels.length || faces.length != origins.size()) {
            throw new IllegalArgumentException("faces, labels and origins differ in length");
        }
    }

    public int size() {
        return faces.length;
    }
}
