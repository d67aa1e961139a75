package org.privface.recognizer.model;

import java.time.Instant;
import java.util.List;

/**
 * A trained classifier for one {@link ModelKey}, with the label of each class index.
 *
 * @param version unique per training run; copied into every result
 */
public record TrainedModel(ModelKey key, String version, MlpModel mlp, List<String> labels, int trainingSize,
                           Instant trainedAt, double trainingAccuracy) {
}
