package org.privface.recognizer.answer;

import java.util.List;

import org.privface.wire.avro.PerturbedFace;

/**
 * Where the gallery's enrollment releases are held: the model registry (one copy per replica, of
 * its own sites only). An interface here so that the gallery service does not import the model
 * layer above it.
 */
public interface EnrollmentReleases {
    /** Every enrollment release of a site this replica holds. */
    List<PerturbedFace> enrollments(String site);
}
