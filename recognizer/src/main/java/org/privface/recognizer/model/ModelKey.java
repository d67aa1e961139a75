package org.privface.recognizer.model;

import org.privface.wire.avro.PerturbedFace;

/** Vectors from different sites, bases or mechanisms are not comparable, so each gets its own model. */
public record ModelKey(String site, String basisId, String mechanism) {
    public static ModelKey of(PerturbedFace f) {
        return new ModelKey(f.getSiteId(), f.getMechanism().getBasisId(), f.getMechanism().getName());
    }

    @Override
    public String toString() {
        return site + "/" + basisId + "/" + mechanism;
    }
}
