package org.privface.agent;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.PerturbedRecords;
import org.privface.agent.publish.Uplink;
import org.privface.agent.release.Mechanisms;
import org.privface.agent.release.ReleaseDesk;
import org.privface.privacy.FaceMechanism;
import org.privface.wire.avro.TrackRelease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes the enrollment folder, each image in every form a policy releases it
 * ({@link Mechanisms#enrollmentForms}: the vector's {@code enroll-releases} times, the templates'
 * {@code answer.template-releases} times), as far as the {@link EnrollmentLedger} allows. An image already released that many
 * times in the same form is not released again, whatever happened in between (restarts, policy
 * changes that leave the form as it was); an image whose cap would be exceeded is not released.
 */
final class Enrollment {
    private static final Logger LOG = LoggerFactory.getLogger(Enrollment.class);
    /** trackId prefix of the enrollment releases a gallery's templates are built from (docs/wire.md). */
    static final String TEMPLATE_TRACK_PREFIX = "enroll-templates-";

    private final Path folder;
    private final Mechanisms mechanisms;
    /** Mechanism → release → record → uplink; the grants are this ledger's. */
    private final ReleaseDesk desk;
    private final EnrollmentLedger ledger;
    /** The site's pseudonym secret: each record's key is its person's pseudonym, image tag and index. */
    private final org.privface.wire.erasure.PersonKeys keys;
    private final String site;
    /** Image hashes by origin, worked out once: the folder is read once per shape too. */
    private final Map<String, String> hashes = new LinkedHashMap<>();
    final AtomicLong published = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    /** Releases withheld because the ledger could not record their charge (a full or failing disk). */
    final AtomicLong unrecorded = new AtomicLong();

    Enrollment(Path folder, Mechanisms mechanisms, FacePublisher publisher, Uplink uplink,
               EnrollmentLedger ledger, String site, org.privface.wire.erasure.PersonKeys keys) {
        this.folder = folder;
        this.mechanisms = mechanisms;
        this.desk = ReleaseDesk.enrollment(mechanisms, new PerturbedRecords(publisher.site()), uplink);
        this.ledger = ledger;
        this.site = site;
        this.keys = keys;
    }

    /** Releases what the policy's form still lacks; returns the number of releases made. */
    synchronized long publish(SitePolicy policy) {
        LabelledFaces faces = mechanisms.enrollmentInputs(policy);
        if (faces == null || faces.size() == 0) {
            return 0;
        }
        java.util.List<Mechanisms.EnrollmentForm> forms = mechanisms.enrollmentForms(policy, faces.names().size());
        if (forms.size() > 1 || forms.get(0).releases() > 1) {
            LOG.info("enrollment: each enrolled image is released {}: epsilon {} in all", forms.stream().map(f ->
                    f.releases() + " x epsilon " + f.mechanism().epsilonPerFace() + (f.templates() ? " (templates"
                            + (f.mechanism() instanceof org.privface.privacy.embedding.EmbeddingMechanism e
                            ? ", " + e.releaseSpace() : "") + ")" : " (vector)")).toList(),
                    forms.stream().mapToDouble(f -> f.releases() * f.mechanism().epsilonPerFace()).sum());
        }
        // The ledger keeps one form per image, the latest: forms go out in this order, so an image whose
        // entry is complete in the last form has all of them, and a restart does not release it again.
        Mechanisms.EnrollmentForm lastForm = forms.get(forms.size() - 1);
        EnrollmentLedger.Form last = EnrollmentLedger.Form.of(lastForm.mechanism().perturb(faces.faces()[0]));
        long made = 0;
        for (int f = 0; f < forms.size(); f++) {
            made += publish(policy, faces, forms.get(f), f, last, lastForm.releases());
        }
        return made;
    }

    /** Releases one form of the enrollment: what each image still lacks of it, within the ledger's cap. */
    private long publish(SitePolicy policy, LabelledFaces faces, Mechanisms.EnrollmentForm ef, int formIndex,
                         EnrollmentLedger.Form last, int lastReleases) {
        FaceMechanism m = ef.mechanism();
        int releasesPerImage = ef.releases();
        // The form (its basis id above all) is read off a release; this one is never published.
        EnrollmentLedger.Form form = EnrollmentLedger.Form.of(m.perturb(faces.faces()[0]));
        long made = 0;
        long refusedNow = 0;
        int skipped = 0;
        for (int i = 0; i < faces.size(); i++) {
            String hash = hash(faces.origins().get(i));
            if (ledger.erased(hash)) {
                skipped++; // an erased person's image, enrolled again as the same file: never released again
                continue;
            }
            int have = ledger.releasesInForm(hash, form);
            if (have >= releasesPerImage || !form.equals(last) && ledger.releasesInForm(hash, last) >= lastReleases) {
                skipped++;
                continue;
            }
            EnrollmentLedger.Charge c;
            try {
                c = ledger.charge(hash, form, releasesPerImage - have, Instant.now());
            } catch (java.io.UncheckedIOException e) {
                // Not recorded, so not released; the next publication asks again.
                unrecorded.addAndGet(releasesPerImage - have);
                LOG.error("enrollment image {}: {} release(s) withheld, the ledger cannot record them: {}",
                        faces.origins().get(i), releasesPerImage - have, e.getCause() == null ? e : e.getCause().toString());
                continue;
            }
            if (c.refused() > 0) {
                refusedNow += c.refused();
                LOG.warn("enrollment image {}: {} release(s) refused, its composed epsilon {} would pass the cap {}",
                        faces.origins().get(i), c.refused(), c.entry().composedEpsilon(), ledger.cap());
            }
            String label = faces.names().get(faces.labels()[i]);
            String pseudonym = keys.pseudonym(site, label);
            String tag = keys.imageTag(hash, formIndex);
            // The templates' form is marked so the recognizer builds the gallery in its space (docs/wire.md).
            String track = (ef.templates() ? TEMPLATE_TRACK_PREFIX : "enroll-") + UUID.randomUUID();
            for (int r = 0; r < c.granted(); r++) {
                desk.send(m, faces.faces()[i], track, Instant.now(), label,
                        TrackRelease.newBuilder().setReleaseIndex(have + r + 1).setEpsilonSpentInWindow(c.composedAfter()[r])
                                .setEpsilonBudget(ledger.cap()).setBudgetPolicy("enrollment:k=" + releasesPerImage)
                                .setWindowStartMillis(c.entry().first()).build(),
                        org.privface.wire.erasure.PersonKeys.recordKey(pseudonym, tag, have + r + 1), null);
                made++;
            }
        }
        published.addAndGet(made);
        refused.addAndGet(refusedNow);
        LOG.info("enrollment: {} image(s) of {} people; {} release(s) made at epsilon {} ({} {}), {} image(s) already"
                        + " released in this form, {} release(s) refused by the cap {}", faces.size(), faces.names().size(),
                made, form.epsilonPerFace(), policy.mechanism(), policy.mode(), skipped, refusedNow, ledger.cap());
        return made;
    }

    /**
     * Forgets a person here (GatewayErasure), holding the lock {@link #publish} holds, so no
     * publication of the person runs meanwhile; the faces read from the folder are read again next time.
     */
    synchronized Map<String, String> erase(org.privface.agent.erase.GatewayErasure erasure, String pseudonym,
                                           Instant issuedAt) throws Exception {
        try {
            return erasure.erase(pseudonym, issuedAt);
        } finally {
            hashes.clear();
            mechanisms.forgetEnrollment();
        }
    }

    private String hash(String origin) {
        return hashes.computeIfAbsent(origin, o -> {
            try {
                return EnrollmentLedger.sha256(folder.resolve(o));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read enrollment image " + o, e);
            }
        });
    }

    /** The ledger's own figures, for a gateway's report whether or not it publishes enrollments this run. */
    static Map<String, Object> ledgerReport(EnrollmentLedger.Stats s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("images", s.images());
        m.put("releases", s.releases());
        m.put("refusedReleases", s.refused());
        m.put("maxComposedEpsilon", s.maxComposedEpsilon());
        m.put("totalComposedEpsilon", s.totalComposedEpsilon());
        m.put("epsilonCap", s.cap());
        return m;
    }

    /** The status report's "enrollment" section. */
    Map<String, Object> report() {
        Map<String, Object> m = ledgerReport(ledger.stats());
        m.put("releasedThisRun", published.get());
        m.put("refusedThisRun", refused.get());
        m.put("withheldUnrecordedThisRun", unrecorded.get());
        return m;
    }
}
