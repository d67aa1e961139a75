package org.privface.recognizer.answer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import org.privface.privacy.answer.Gallery;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.MechanismParams;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecordKind;

/** The gallery's open-set threshold under each calibration rule, on synthetic releases and strangers. */
class GalleryBuilderTest {
    static final int K = 8;
    static final String SPACE = "test-basis.k8";

    static PerturbedFace release(String label, int n, SplittableRandom r) {
        List<Float> v = new ArrayList<>();
        for (int i = 0; i < K; i++) {
            // Person p's code is the bits of p; about one bit in five flipped.
            boolean bit = ((label.hashCode() >> i) & 1) == 1 ^ r.nextInt(5) == 0;
            v.add((float) ((bit ? 1 : -1) / Math.sqrt(K)));
        }
        return PerturbedFace.newBuilder().setEventId("e" + label + n).setSiteId("s").setCameraId("c").setTrackId("t" + n)
                .setCaptureTimestamp(Instant.EPOCH).setKind(RecordKind.ENROLLMENT)
                .setMechanism(MechanismParams.newBuilder().setName("EMBEDDING").setSensitivityMode("sign-cap")
                        .setEpsilonPerCoordinate(10).setEpsilonPerFace(10).setNoiseScale(1).setBasisId(SPACE).build())
                .setDimension(K).setVector(v).setEnrollmentLabel(label).build();
    }

    static PublicStrangers strangers(int n, SplittableRandom r) {
        double[][] d = new double[n][K];
        for (double[] v : d) {
            for (int j = 0; j < K; j++) {
                v[j] = r.nextGaussian();
            }
        }
        return new PublicStrangers("public-test", SPACE, d);
    }

    @Test
    void theWilsonBoundNamesFewerStrangersAndNobodyWhenThereAreTooFew() {
        SplittableRandom r = new SplittableRandom(3);
        List<PerturbedFace> enrol = new ArrayList<>();
        for (String p : List.of("ann", "bob", "cyd")) {
            for (int i = 0; i < 6; i++) {
                enrol.add(release(p, i, r));
            }
        }
        PublicStrangers many = strangers(3000, r);
        FaceGallery estimate = GalleryBuilder.build("s", 1, SPACE, enrol, Optional.of(many), 10, 0.01,
                Gallery.Bound.ESTIMATE, Instant.EPOCH);
        FaceGallery wilson = GalleryBuilder.build("s", 1, SPACE, enrol, Optional.of(many), 10, 0.01,
                Gallery.Bound.WILSON, Instant.EPOCH);
        double target = RandomizedResponse.forEpsilon(3, 10).decoderFalsePositiveRate(0.01);
        assertEquals(Math.floor(target * 3000), estimate.getCalibration().getAccepted(), "estimate: ⌊rate·n⌋ through");
        assertTrue(wilson.getThreshold() > estimate.getThreshold(), wilson.getThreshold() + " vs " + estimate.getThreshold());
        int a = wilson.getCalibration().getAccepted();
        assertTrue(org.privface.privacy.Proportions.wilson95(a, 3000)[1] <= target && org.privface.privacy.Proportions.wilson95(a + 1, 3000)[1] > target,
                "the most strangers whose upper bound stays at the target: " + a);
        assertEquals(target, wilson.getCalibration().getTargetRate(), 1e-12);
        // The point estimate still names people on a small public set (e.g. a test's 60 strangers); Wilson cannot.
        PublicStrangers few = strangers(60, r);
        FaceGallery old = GalleryBuilder.build("s", 1, SPACE, enrol, Optional.of(few), 10, 0.01, Gallery.Bound.ESTIMATE,
                Instant.EPOCH);
        assertTrue(Double.isFinite(old.getThreshold()));
        assertEquals(Double.POSITIVE_INFINITY, GalleryBuilder.build("s", 1, SPACE, enrol, Optional.of(few), 10, 0.01,
                Gallery.Bound.WILSON, Instant.EPOCH).getThreshold(), "60 strangers cannot bound a 1 % rate");
        assertEquals(Gallery.Bound.WILSON, new AnswerSettings().getCalibrationBound(), "the service's default");
    }
}
