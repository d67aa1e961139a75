package org.privface.agent.publish;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.privface.privacy.Release;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;
import org.privface.wire.avro.SanitizedImage;
import org.privface.wire.avro.TrackRelease;
import org.privface.wire.topics.Topics;

/**
 * Builds a site's wire records of releases: the only input is a {@link Release}, which holds
 * noisy coordinates and no pixels. Sends nothing ({@link FacePublisher} and the uplink send).
 */
public final class PerturbedRecords {
    private final String siteId;

    public PerturbedRecords(String siteId) {
        this.siteId = Topics.checkSite(siteId);
    }

    /** Builds the wire record for a release; a fresh event id per release. */
    public PerturbedFace of(Release r, String cameraId, String trackId, Instant capturedAt, String enrollmentLabel) {
        return of(r, cameraId, trackId, capturedAt, enrollmentLabel, null);
    }

    /**
     * Builds the wire record for a release; a fresh event id per release.
     *
     * @param track where the release stands in its track's budget, or null
     */
    public PerturbedFace of(Release r, String cameraId, String trackId, Instant capturedAt, String enrollmentLabel,
                            TrackRelease track) {
        List<Float> v = new ArrayList<>(r.vector().length);
        for (double x : r.vector()) {
            v.add((float) x);
        }
        return PerturbedFace.newBuilder()
                .setEventId(UUID.randomUUID().toString())
                .setSiteId(siteId)
                .setCameraId(cameraId)
                .setTrackId(trackId)
                .setCaptureTimestamp(capturedAt)
                .setKind(enrollmentLabel == null ? RecordKind.QUERY : RecordKind.ENROLLMENT)
                .setMechanism(MechanismParams.newBuilder()
                        .setName(r.mechanism())
                        .setSensitivityMode(r.mode())
                        .setEpsilonPerCoordinate(r.epsilonPerCoordinate())
                        .setEpsilonPerFace(r.epsilonPerFace())
                        .setNoiseScale(r.noiseScale())
                        .setBasisId(r.basisId())
                        .setDelta(r.delta())
                        .setMu(Double.isNaN(r.mu()) ? null : r.mu())
                        .build())
                .setDimension(v.size())
                .setVector(v)
                .setEnrollmentLabel(enrollmentLabel)
                .setTrack(track)
                .setSanitizedImage(r.image() == null ? null : image(r.image(), r))
                .build();
    }

    private static SanitizedImage image(double[] px, Release r) {
        List<Float> v = new ArrayList<>(px.length);
        for (double x : px) {
            v.add((float) x);
        }
        int side = (int) Math.round(Math.sqrt(px.length));
        if (side * side != px.length) {
            throw new IllegalArgumentException("sanitized images are square; got " + px.length + " pixels from " + r.mechanism());
        }
        return SanitizedImage.newBuilder().setWidth(side).setHeight(side).setPixels(v).build();
    }
}
