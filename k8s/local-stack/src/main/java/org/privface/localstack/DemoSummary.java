package org.privface.localstack;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.privface.localstack.Demo.Outcome;
import org.privface.localstack.Demo.Score;
import org.privface.recognizer.answer.PublicStrangers;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.topics.Topics;

/**
 * The demo's figures: each release form's score on the labelled query faces, the open set's
 * false-positive rate on unseen public strangers, and the summary it prints. Split from {@link Demo}
 * (issue 40); it prints what the run measured and computes nothing the run did not.
 */
final class DemoSummary {
    private DemoSummary() {
    }

    /**
     * Scores one form: its records among the labelled faces, right when the recognizer's result
     * names the image's person (an image folder's first path element).
     */
    static Score score(Map<String, String> originOf, Set<String> labelled, Map<String, RecognitionResult> results,
                       Set<String> records) {
        int correct = 0;
        int scored = 0;
        int unknown = 0;
        Map<String, Integer> perPerson = new HashMap<>();
        Set<String> faces = new HashSet<>();
        for (String id : records) {
            if (!labelled.contains(id)) {
                continue; // someone else in the photo: not the folder's person
            }
            String truth = Path.of(originOf.get(id)).getName(0).toString();
            if (truth.startsWith(DemoFaces.STRANGER)) {
                continue; // not enrolled: counted by strangersNamed
            }
            perPerson.merge(truth, 1, Integer::sum);
            scored++;
            faces.add(originOf.get(id));
            RecognitionResult r = results.get(id);
            if (r != null && truth.equals(r.getPredictedLabel())) {
                correct++;
            } else if (r == null || r.getPredictedLabel() == null) {
                unknown++;
            }
        }
        return new Score(correct, scored, perPerson.values().stream().max(Integer::compare).orElse(0), faces, unknown);
    }

    /**
     * The stranger clips' labelled tracks of one form ({@code records}) that the recognizer's result
     * gave an enrolled name: the false-positive rate of the shipped path, with its 95 % Wilson interval.
     */
    static String strangersNamed(Outcome o, Set<String> records) {
        long tracks = 0;
        long named = 0;
        for (String id : records) {
            String origin = o.originOfQuery().get(id);
            if (origin == null || !o.labelled().contains(id) || !Path.of(origin).getName(0).toString()
                    .startsWith(DemoFaces.STRANGER)) {
                continue;
            }
            tracks++;
            RecognitionResult r = o.results().get(id);
            named += r != null && r.getPredictedLabel() != null ? 1 : 0;
        }
        if (tracks == 0) {
            return "";
        }
        double[] w = org.privface.privacy.Proportions.wilson95(named, tracks);
        return String.format("%d of %d stranger tracks named (FPIR %.2f%%, 95%% [%.2f%%, %.2f%%])", named, tracks,
                100.0 * named / tracks, 100 * w[0], 100 * w[1]);
    }

    /**
     * The answers' accuracy by the photos in their clip ({@code <person>/c<n>-f<i>.<ext>}, DemoFaces.clips):
     * a person's last clip may hold fewer than the others, and the harness's tracks are all full.
     */
    static String byClipLength(Outcome o) {
        Map<Integer, int[]> by = new java.util.TreeMap<>();
        for (String id : o.answers().keySet()) {
            if (!o.labelled().contains(id)) {
                continue;
            }
            Path origin = Path.of(o.originOfQuery().get(id));
            if (origin.getName(0).toString().startsWith(DemoFaces.STRANGER)) {
                continue;
            }
            int photos = DemoFaces.clipPhotos(o.stack().query(), origin);
            RecognitionResult r = o.results().get(id);
            int[] a = by.computeIfAbsent(photos, x -> new int[2]);
            a[0] += r != null && origin.getName(0).toString().equals(r.getPredictedLabel()) ? 1 : 0;
            a[1]++;
        }
        return by.entrySet().stream().map(e -> String.format("%d photos %d/%d (%.1f%%)", e.getKey(), e.getValue()[0],
                e.getValue()[1], 100.0 * e.getValue()[0] / e.getValue()[1])).collect(java.util.stream.Collectors.joining(", "));
    }

    /**
     * Whether the two forms' scores compare at the same false-positive rate. On enrolled faces a
     * threshold only decides between a name and "unknown": at any threshold the vector names
     * correctly at most the faces it named correctly plus those it called unknown, so
     * (correct + unknown) / scored bounds its accuracy at every FPIR, the answer's measured one
     * included. Where the answer reaches that bound, it is not below the vector at equal FPIR; the
     * vector's own FPIR on strangers is not measured (no stranger's vector is released).
     */
    static String equalFpir(Score answer, Score vector) {
        double bound = (vector.correct() + vector.unknown()) / (double) Math.max(1, vector.scored());
        String why = vector.unknown() == 0
                ? String.format("the vector named all %d labelled faces, so no threshold gives it more than its %.1f%%",
                        vector.scored(), 100 * vector.accuracy())
                : String.format("the vector would score at most %.1f%% at any threshold (its %d correct names plus the %d"
                        + " labelled faces its open set called \"unknown\", of %d)", 100 * bound, vector.correct(),
                        vector.unknown(), vector.scored());
        return String.format("%s; the answer scores %.1f%% at its measured FPIR (unseen strangers, above): %s", why,
                100 * answer.accuracy(), answer.accuracy() >= bound ? "answer >= vector at equal FPIR"
                        : "not established (the answer is below that bound)");
    }

    /**
     * The false-positive rate on public strangers the calibration never saw: the decoder's (their
     * best cosine above the gallery's threshold) with its 95 % Wilson interval, and the answers'
     * (the exact k-RR channel on top: a stranger decoded as someone is released as someone with
     * probability κ + (1 − κ)(C − 1)/C, one decoded as unknown with 1 − κ).
     */
    static String unseenFpir(FaceGallery g, PublicStrangers unseen, double answerEpsilon) {
        org.privface.privacy.answer.Gallery model = new org.privface.privacy.answer.Gallery(g.getVersion(), g.getBasisId(),
                g.getLabels(), FaceRecords.templates(g), g.getThreshold());
        long named = java.util.Arrays.stream(unseen.directions()).filter(d -> model.decode(d) < model.identities()).count();
        int n = unseen.directions().length;
        double d = named / (double) n;
        double[] w = org.privface.privacy.Proportions.wilson95(named, n);
        org.privface.privacy.answer.RandomizedResponse rr =
                org.privface.privacy.answer.RandomizedResponse.forEpsilon(model.identities(), answerEpsilon);
        double kappa = rr.keepProbability();
        int c = model.identities();
        double fpir = d * (kappa + (1 - kappa) * (c - 1) / c) + (1 - d) * (1 - kappa);
        return String.format("decoder FPIR %.2f%% per face (%d of %d faces of lfw-public people outside the calibration half,"
                + " 95%% [%.2f%%, %.2f%%]); answer FPIR %.2f%% at epsilon %s (the exact k-RR channel on top)",
                100 * d, named, n, 100 * w[0], 100 * w[1], 100 * fpir, answerEpsilon);
    }

    static void print(Outcome o, Path root) {
        double epsFace = o.published().values().stream().filter(f -> f.getEnrollmentLabel() != null)
                .mapToDouble(f -> f.getMechanism().getEpsilonPerFace()).max().orElse(0);
        PerturbedFace any = o.published().values().iterator().next();
        int records = o.queryRecords();
        System.out.println();
        System.out.println("=== privface demo summary ===");
        System.out.printf("site id:              %s (topics %s, %s, %s)%n", o.stack().site(),
                Topics.enrollment(o.stack().site()), Topics.query(o.stack().site()), Topics.answer(o.stack().site()));
        o.stack().security().summary(o.stack().site()).forEach(System.out::println);
        for (String line : o.faceStack()) {
            System.out.println(line);
        }
        System.out.printf("mechanism:            %s, mode %s, %d components, basis %s%n",
                any.getMechanism().getName(), any.getMechanism().getSensitivityMode(), any.getDimension(), any.getMechanism().getBasisId());
        System.out.printf("epsilon per face:     %.3f (at most %.4f for one coordinate) on every enrollment record%n", epsFace,
                any.getMechanism().getEpsilonPerCoordinate());
        List<PerturbedFace> enrolled = o.published().values().stream().filter(f -> f.getEnrollmentLabel() != null).toList();
        long templateReleases = enrolled.stream()
                .filter(f -> f.getTrackId().startsWith(org.privface.recognizer.answer.GalleryBuilder.TEMPLATE_TRACK_PREFIX))
                .count();
        // Forms released per image: the vector's, the templates', or both (each charged).
        int forms = templateReleases > 0 && templateReleases < enrolled.size() ? 2 : 1;
        long enrolledImages = enrolled.stream().map(f -> f.getTrackId()).distinct().count() / forms;
        // The ledger's composed ε of an image after its last release, as each record states it.
        double perImage = enrolled.stream().filter(f -> f.getTrack() != null)
                .mapToDouble(f -> f.getTrack().getEpsilonSpentInWindow()).max().orElse(0);
        Map<String, Double> perPerson = new java.util.TreeMap<>();
        enrolled.forEach(f -> perPerson.merge(f.getEnrollmentLabel(), f.getMechanism().getEpsilonPerFace(), Double::sum));
        System.out.printf("enrollment:           %d release(s) of %d enrolled images, %d each%s%n", o.enrollmentReleases(),
                enrolledImages, o.enrollmentReleases() / Math.max(1, enrolledImages), forms == 2 ? String.format(
                        " (%d in the vector's form, %d in the templates': the two need different releases, so each"
                                + " image is charged both)", enrolled.size() - templateReleases, templateReleases) : "");
        long releasesPerImage = o.enrollmentReleases() / Math.max(1, enrolledImages);
        System.out.printf("epsilon per enrolled image: %.3f%s%n", perImage, forms == 2 ? " (vector + templates, composed)"
                : releasesPerImage == 1 ? " (one release: the per-face epsilon)"
                : String.format(" (%d releases of epsilon %.3f composed)", releasesPerImage, epsFace));
        System.out.printf("epsilon per enrolled person: %.1f at most (%s), over all of a person's images%n",
                perPerson.values().stream().mapToDouble(Double::doubleValue).max().orElse(0),
                perPerson.entrySet().stream().map(e -> e.getKey() + " " + String.format("%.0f", e.getValue()))
                        .collect(java.util.stream.Collectors.joining(", ")));
        System.out.printf("release:              %s%s%n", o.release(), switch (o.release()) {
            case "compare" -> " (two passes of the gateway over the same query images: k-RR answers, then sign-cap"
                    + " vectors, each at the whole per-face epsilon; a site runs one of them)";
            case "both" -> " (each query face: a k-RR answer and a sign-cap vector, each at half the face's grant;"
                    + " the vector keeps the whole epsilon's preset shape, so at half of it it is near chance)";
            case "answer" -> " (each query face: a k-RR answer only; no vector leaves the gateway)";
            default -> " (each query face: a vector)";
        });
        FaceGallery g = o.gallery();
        if (g != null) {
            System.out.printf("gallery:              version %d, C = %d people, class templates of %d enrollment releases,"
                    + " basis %s, signed by the recognizer%n", g.getVersion(), g.getLabels().size(), g.getEnrollmentReleases(),
                    g.getBasisId());
            System.out.printf("open set:             %s%n", o.openSet());
        }
        PerturbedFace query = o.published().values().stream().filter(f -> f.getEnrollmentLabel() == null)
                .findFirst().orElse(null);
        FaceAnswer answer = o.answers().values().stream().findFirst().orElse(null);
        double budget = query != null && query.getTrack() != null ? query.getTrack().getEpsilonBudget()
                : answer != null ? answer.getTrack().getEpsilonBudget() : 0;
        System.out.printf("per-track budget:     %s, epsilon %.3f per track (%s)%n",
                query != null && query.getTrack() != null ? query.getTrack().getBudgetPolicy()
                        : answer != null ? answer.getTrack().getBudgetPolicy() : "none", budget, o.clips() > 0
                        ? o.clips() + " clips; a clip is one track where the tracker follows its face from photo to photo,"
                                + " more where it loses it" : "each query image is its own track");
        if (o.clips() > 0) {
            System.out.println("linking:              off in the demo: each clip is scored as its own appearance (a site's"
                    + " gateway links a person's tracks and charges them to one budget per window)");
        }
        if (answer != null) {
            System.out.printf("answers:              one per track, its first %d faces decoded together"
                    + " (agent.answer.track-faces), released once at the track's epsilon%n",
                    new org.privface.agent.AgentSettings.Answer().getTrackFaces());
        }
        String unit = o.clips() > 0 ? "track" : "face";
        System.out.printf("query records:        %d from %d query images%s (%d vectors, %d answers); %d of them the labelled"
                + " face of their image%n", records, o.queryImages(), o.clips() > 0 ? " in " + o.clips() + " clips" : "",
                records - o.answers().size(), o.answers().size(), o.labelled().size());
        long unknown = o.results().values().stream().filter(r -> r.getPredictedLabel() == null).count();
        System.out.printf("records recognized:   %d of %d query records (%d answered \"unknown\")%n", o.results().size(),
                records, unknown);
        double answerEps = o.answers().values().stream().mapToDouble(a -> a.getMechanism().getEpsilonPerFace()).max().orElse(0);
        double vectorEps = o.published().values().stream().filter(f -> f.getEnrollmentLabel() == null)
                .mapToDouble(f -> f.getMechanism().getEpsilonPerFace()).max().orElse(0);
        double chance = 100.0 / Math.max(1, o.people());
        if (o.answerScore().scored() > 0) {
            System.out.printf("answer accuracy:      %.1f%% (%d/%d labelled %ss), k-RR over C+1 = %d outputs, epsilon %.4f"
                    + " per %s; chance %.1f%%, majority class %.1f%%%n", 100 * o.answerScore().accuracy(),
                    o.answerScore().correct(), o.answerScore().scored(), unit, g == null ? 0 : g.getLabels().size() + 1,
                    answerEps, unit, chance, 100.0 * o.answerScore().majority() / o.answerScore().scored());
        }
        if (o.answerScore().scored() > 0 && o.clips() > 0) {
            System.out.printf("answers by clip:      %s%n", byClipLength(o));
            String fp = strangersNamed(o, o.answers().keySet());
            if (!fp.isEmpty()) {
                System.out.printf("answer strangers:     %s%n", fp);
            }
        }
        if (o.vectors().scored() > 0) {
            System.out.printf("%s %.1f%% (%d/%d labelled %ss), %s, epsilon %.4f per %s; chance %.1f%%, majority"
                    + " class %.1f%%%n", o.answerScore().scored() > 0 ? "vector accuracy:     " : "accuracy:            ",
                    100 * o.vectors().accuracy(), o.vectors().correct(), o.vectors().scored(), unit,
                    any.getMechanism().getSensitivityMode(), vectorEps, unit, chance,
                    100.0 * o.vectors().majority() / o.vectors().scored());
        }
        Set<String> vectorIds = new java.util.HashSet<>();
        o.published().values().stream().filter(f -> f.getEnrollmentLabel() == null).forEach(f -> vectorIds.add(f.getEventId()));
        String vectorStrangers = strangersNamed(o, vectorIds);
        if (!vectorStrangers.isEmpty()) {
            System.out.printf("vector strangers:     %s%n", vectorStrangers);
        }
        if (o.release().equals("both")) {
            System.out.printf("vector open set:      off (recognizer.open-set-margin 0): its distance rule is fitted to"
                    + " enrollment releases at epsilon %.0f, which query vectors at half of it mostly fall outside%n", epsFace);
        }
        if (o.answerScore().scored() > 0 && o.vectors().scored() > 0) {
            boolean same = o.answerScore().faces().equals(o.vectors().faces());
            System.out.printf("same faces:           %s; each query " + unit + " spent epsilon %.4f in all (answer %.4f + vector %.4f%s)%n",
                    same ? "yes, the " + o.vectors().scored() + " labelled " + unit + "s each gave one answer and one vector"
                            : "NO: the two forms were scored on different faces", answerEps + vectorEps, answerEps, vectorEps,
                    o.release().equals("compare") ? ", one release in each pass" : ", halves of one grant");
            System.out.printf("equal FPIR:           %s%n", equalFpir(o.answerScore(), o.vectors()));
        }
        System.out.printf("labelled face:        %s%n", org.privface.agent.detect.LabelledFace.RULE);
        List<String> others = o.unlabelled();
        long othersUnknown = others.stream().map(o.results()::get)
                .filter(r -> r != null && r.getPredictedLabel() == null).count();
        System.out.printf("unlabelled records:   %d (other people in query images, not scored): %d answered \"unknown\", %d given"
                + " an enrolled name%n", others.size(), othersUnknown, others.stream().map(o.results()::get)
                .filter(r -> r != null && r.getPredictedLabel() != null).count());
        System.out.println("console password:     in " + o.stack().security().operatorPasswordFile() + " (mode 0600)");
        System.out.println("logs:                 " + root.relativize(root.resolve("k8s/local-stack/target/demo-logs")));
    }
}
