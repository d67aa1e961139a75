package org.privface.recognizer.answer;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;

import org.privface.privacy.answer.Gallery;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.GalleryCalibration;
import org.privface.wire.avro.PerturbedFace;

/**
 * A site's gallery model from its enrollment releases only: per person the unit mean of its
 * releases in one release space ({@link Gallery#fromReleases}), and, given public strangers in
 * that space, the open-set threshold that lets the answers' false-positive rate be the target at
 * the answers' ε ({@link RandomizedResponse#decoderFalsePositiveRate}). Both are post-processing of
 * records already public under their own ε, and of public faces.
 *
 * <p>Templates, not the recognizer's MLP: on the same releases the MLP decodes worse at every ε
 * measured (docs/frontier.md, "Releasing the answer"), and the gallery record carries templates.
 */
public final class GalleryBuilder {
    private GalleryBuilder() {
    }

    /**
     * @param enrollments the site's enrollment records (any spaces; those of {@code basisId} are used)
     * @param strangers   public strangers in {@code basisId}'s space, or empty for a closed set
     * @param answerEpsilon the ε per answer the site's policy releases at, for the threshold
     * @param releasedRate  the false-positive rate answers should have for a stranger (e.g. 0.01)
     * @param bound       the rule that bounds the strangers' rate ({@link Gallery.Bound}; the service
     *                    uses {@link AnswerSettings#getCalibrationBound}). {@code WILSON} keeps the upper
     *                    end of the rate's 95 % interval at the target, so it needs at least about 4/rate
     *                    strangers to name anyone; the public file has no person ids, so {@code PEOPLE}
     *                    counts each face as its own person.
     */
    public static FaceGallery build(String site, long version, String basisId, List<PerturbedFace> enrollments,
                                    Optional<PublicStrangers> strangers, double answerEpsilon, double releasedRate,
                                    Gallery.Bound bound, Instant now) {
        Map<String, List<double[]>> byPerson = new TreeMap<>();
        int used = 0;
        for (PerturbedFace f : enrollments) {
            if (f.getSiteId().equals(site) && f.getMechanism().getBasisId().equals(basisId)) {
                double[] v = new double[f.getDimension()];
                List<Float> x = f.getVector();
                for (int i = 0; i < v.length; i++) {
                    v[i] = x.get(i);
                }
                byPerson.computeIfAbsent(f.getEnrollmentLabel(), l -> new ArrayList<>()).add(v);
                used++;
            }
        }
        if (byPerson.isEmpty()) {
            throw new IllegalArgumentException("site " + site + " has no enrollment in space " + basisId);
        }
        List<String> labels = new ArrayList<>(new TreeSet<>(byPerson.keySet()));
        double[][] releases = new double[used][];
        int[] owner = new int[used];
        int n = 0;
        for (int c = 0; c < labels.size(); c++) {
            for (double[] v : byPerson.get(labels.get(c))) {
                releases[n] = v;
                owner[n++] = c;
            }
        }
        Gallery g = Gallery.fromReleases(version, basisId, labels, releases, owner);
        GalleryCalibration cal = null;
        if (strangers.isPresent()) {
            PublicStrangers s = strangers.get();
            if (!s.basisId().equals(basisId)) {
                throw new IllegalArgumentException("public strangers of set " + s.setId() + " are in space " + s.basisId()
                        + ", the enrollments in " + basisId);
            }
            RandomizedResponse rr = RandomizedResponse.forEpsilon(g.identities(), answerEpsilon);
            double rate = rr.decoderFalsePositiveRate(releasedRate);
            Gallery.Threshold t = g.calibrate(s.directions(), null, rate, bound);
            g = g.withThreshold(t.value());
            cal = GalleryCalibration.newBuilder().setStrangerSet(s.setId()).setStrangers((int) t.strangers())
                    .setAccepted((int) t.accepted()).setTargetRate(Math.max(0, Math.min(1, t.target())))
                    .setEpsilon(answerEpsilon).setRule(bound.name().toLowerCase(java.util.Locale.ROOT)).build();
        }
        return FaceGallery.newBuilder().setSiteId(site).setVersion(version).setBuiltAt(now).setBasisId(basisId)
                .setK(g.k()).setLabels(labels).setTemplates(FaceRecords.flatTemplates(g.templates()))
                .setThreshold(g.threshold()).setEnrollmentReleases(used).setCalibration(cal).build();
    }

    /** trackId prefix a gateway gives the enrollment releases it makes for templates (docs/wire.md). */
    public static final String TEMPLATE_TRACK_PREFIX = "enroll-templates-";

    /**
     * The release space a gallery is built in: of the site's enrollment releases for templates (those
     * whose trackId starts with {@link #TEMPLATE_TRACK_PREFIX}) where there are any, else of all its
     * EMBEDDING enrollment releases, the space with the most records.
     */
    public static Optional<String> mainSpace(String site, List<PerturbedFace> enrollments) {
        Map<String, Integer> count = new TreeMap<>();
        boolean templates = enrollments.stream().anyMatch(f -> f.getTrackId().startsWith(TEMPLATE_TRACK_PREFIX));
        for (PerturbedFace f : enrollments) {
            if (f.getSiteId().equals(site) && "EMBEDDING".equals(f.getMechanism().getName())
                    && (!templates || f.getTrackId().startsWith(TEMPLATE_TRACK_PREFIX))) {
                count.merge(f.getMechanism().getBasisId(), 1, Integer::sum);
            }
        }
        return count.entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey);
    }
}
