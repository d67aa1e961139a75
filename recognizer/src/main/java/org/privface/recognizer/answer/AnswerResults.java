package org.privface.recognizer.answer;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.privface.privacy.ExactDraws;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.RecognitionResult;

/**
 * What the recognizer does with answer records: each becomes a result on the results topic (the
 * released label, its keep probability as the confidence, the record's ε), and per site and
 * gallery version it counts the outputs and estimates how many answered faces each person had
 * without bias, from the known randomized-response channel ({@link RandomizedResponse#estimateCounts}).
 */
public final class AnswerResults {
    /** Output counts per (site, gallery version), with the channel they were released through. */
    private final Map<String, Tally> tallies = new ConcurrentHashMap<>();

    private static final class Tally {
        final String site;
        final long galleryVersion;
        final RandomizedResponse channel;
        final double[] counts;
        /** The label each output index was released with (the records name them); unknown last. */
        final String[] labels;

        Tally(String site, long galleryVersion, RandomizedResponse channel) {
            this.site = site;
            this.galleryVersion = galleryVersion;
            this.channel = channel;
            this.counts = new double[channel.identities() + 1];
            this.labels = new String[channel.identities() + 1];
        }
    }

    /** Drops a site's tallies (its new owner rebuilds them from the answer topic). */
    public synchronized void forget(String site) {
        tallies.values().removeIf(t -> t.site.equals(site));
    }

    /** The result record for one answer. */
    public static RecognitionResult result(FaceAnswer a, Instant now) {
        long keep = a.getMechanism().getKeepNumerator();
        return RecognitionResult.newBuilder().setEventId(a.getEventId()).setSiteId(a.getSiteId())
                .setCameraId(a.getCameraId()).setTrackId(a.getTrackId()).setPredictedLabel(a.getLabel())
                .setConfidence((float) (keep / (double) (1L << RandomizedResponse.KEEP_BITS)))
                .setModelVersion("gallery-" + a.getGallery().getVersion())
                .setEpsilonPerFace(a.getMechanism().getEpsilonPerFace()).setRecognizedAt(now).build();
    }

    /**
     * Counts one answer. Answers of one gallery version released at different ε have different
     * channels; they are tallied apart, by keep numerator.
     */
    public synchronized void add(FaceAnswer a) {
        String key = a.getSiteId() + "/" + a.getGallery().getVersion() + "/" + a.getMechanism().getKeepNumerator();
        Tally t = tallies.computeIfAbsent(key, k -> new Tally(a.getSiteId(), a.getGallery().getVersion(),
                new RandomizedResponse(a.getGallery().getIdentities(), a.getMechanism().getKeepNumerator(),
                        ExactDraws.secure()))); // a fresh Drbg: the library's one source of randomness
        t.counts[a.getOutput()]++;
        if (a.getLabel() != null) {
            t.labels[a.getOutput()] = a.getLabel();
        }
    }

    /**
     * Unbiased estimates of how many answered faces each person (index; the last is unknown) had,
     * per tally key {@code site/galleryVersion/keepNumerator}, with the raw counts.
     */
    public synchronized Map<String, Estimate> estimates() {
        Map<String, Estimate> out = new LinkedHashMap<>();
        tallies.forEach((k, t) -> out.put(k, new Estimate(t.site, t.galleryVersion, t.channel.identities(),
                t.channel.epsilon(), t.labels.clone(), t.counts.clone(), t.channel.estimateCounts(t.counts))));
        return out;
    }

    /**
     * One channel's tally: the gallery version and its C, the ε each answer stated, the labels the
     * outputs were released with (null for an identity no answer named yet, and for unknown, last),
     * the released counts and their unbiased estimates.
     */
    public record Estimate(String site, long galleryVersion, int identities, double epsilon, String[] labels,
                           double[] released, double[] estimated) {
        public long answers() {
            long n = 0;
            for (double c : released) {
                n += (long) c;
            }
            return n;
        }
    }

    /** The estimates of one site and gallery version summed over ε, with labels (unknown last). */
    public static Map<String, Double> labelled(double[] estimated, List<String> labels) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (int i = 0; i < labels.size(); i++) {
            m.put(labels.get(i), estimated[i]);
        }
        m.put("unknown", estimated[labels.size()]);
        return m;
    }
}
