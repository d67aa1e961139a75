package org.privface.agent.answer;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.privface.privacy.answer.Gallery;
import org.privface.privacy.answer.RandomizedResponse;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.wire.WireLimits;
import org.privface.wire.avro.AnswerEpsilonScope;
import org.privface.wire.avro.AnswerMechanism;
import org.privface.wire.avro.AnswerTrack;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.GalleryRef;

/**
 * Answers who a query face is instead of releasing its vector: the face's raw public projection (its unit
 * direction in the gallery's release space, which never leaves the gateway) is decoded against the
 * gallery, and the answer goes out by exact k-ary randomized response at the release's ε over the
 * gallery's C people plus unknown. The record states the ε computed from the sampler's integers.
 */
public final class AnswerSampler {
    private final String site;
    /** One sampler per (C, ε): finding the keep numerator is a search over exact logarithms. */
    private final Map<String, RandomizedResponse> samplers = new ConcurrentHashMap<>();

    public AnswerSampler(String site) {
        this.site = site;
    }

    /**
     * The gallery's k, when it is in the mechanism's basis ({@code <basis id>.k<k>}, k within the
     * basis); else refused: its cosines would mean nothing. The k may differ from the mechanism's
     * own: templates are released at their own preset (TemplatePresets), and the query is decoded
     * in the templates' space, on the gateway, whatever the vector's shape.
     */
    public static int checkSpace(Gallery g, EmbeddingMechanism m) {
        String prefix = m.basis().id() + ".k";
        int k = -1;
        if (g.basisId().startsWith(prefix)) {
            try {
                k = Integer.parseInt(g.basisId().substring(prefix.length()));
            } catch (NumberFormatException e) {
                k = -1;
            }
        }
        if (k != g.k() || k < 1 || k > m.basis().maxDirections()) {
            throw new IllegalStateException("gallery " + g.version() + " is in space " + g.basisId()
                    + ", this gateway projects into " + prefix + "1.." + m.basis().maxDirections());
        }
        return k;
    }

    /** The embedding's unit direction in the first k public coordinates of the mechanism's basis (as EmbeddingMechanism.direction). */
    static double[] direction(EmbeddingMechanism m, int k, double[] embedding) {
        if (k == m.k()) {
            return m.direction(embedding);
        }
        for (double v : embedding) {
            if (!Double.isFinite(v)) {
                throw new IllegalArgumentException("embedding holds a non-finite value");
            }
        }
        return EmbeddingMechanism.unit(m.basis().project(EmbeddingMechanism.unit(embedding.clone()), k));
    }

    /**
     * The face's unit direction in the gallery's space: what is held on the gateway until its track's
     * answer is decoded. Refused ({@link IllegalStateException}) where the gallery is not in the
     * mechanism's basis.
     */
    public static double[] query(Gallery g, EmbeddingMechanism m, double[] embedding) {
        return direction(m, checkSpace(g, m), embedding);
    }

    /**
     * One answer for a track: its faces' directions ({@link #query}) decoded together as their unit
     * mean ({@link Gallery#trackDirection}) and released once.
     *
     * @param directions the track's held faces (they stay here)
     * @param epsilon    the ε this release may spend (the track's grant)
     */
    public FaceAnswer answer(Gallery g, List<double[]> directions, double epsilon, String camera,
                             String trackId, Instant capturedAt, AnswerTrack track) {
        int answer = g.decode(Gallery.trackDirection(directions.toArray(double[][]::new)));
        RandomizedResponse rr = sampler(g.identities(), epsilon);
        int out = rr.release(answer);
        return FaceAnswer.newBuilder().setEventId(UUID.randomUUID().toString()).setSiteId(site).setCameraId(camera)
                .setTrackId(trackId).setCaptureTimestamp(capturedAt == null ? Instant.now() : capturedAt)
                .setGallery(GalleryRef.newBuilder().setVersion(g.version()).setIdentities(g.identities())
                        .setBasisId(g.basisId()).build())
                .setOutput(out).setLabel(out == rr.unknown() ? null : g.labels().get(out))
                .setMechanism(AnswerMechanism.newBuilder().setName(WireLimits.ANSWER_MECHANISM)
                        .setKeepNumerator(rr.keepNumerator()).setEpsilonPerFace(rr.epsilon())
                        .setEpsilonCovers(AnswerEpsilonScope.QUERY_FACE).build())
                .setTrack(track).build();
    }

    /** One query face's answer: {@link #answer(Gallery, List, double, String, String, Instant, AnswerTrack)} of one face. */
    public FaceAnswer answer(Gallery g, EmbeddingMechanism m, double[] embedding, double epsilon, String camera,
                             String trackId, Instant capturedAt, AnswerTrack track) {
        return answer(g, List.of(query(g, m, embedding)), epsilon, camera, trackId, capturedAt, track);
    }

    /** The exact sampler that spends at most {@code epsilon} over C + 1 outputs. */
    public RandomizedResponse sampler(int identities, double epsilon) {
        return samplers.computeIfAbsent(identities + "/" + Double.doubleToLongBits(epsilon),
                k -> RandomizedResponse.forEpsilon(identities, epsilon));
    }
}
