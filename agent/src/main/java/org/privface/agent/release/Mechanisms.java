package org.privface.agent.release;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.privface.agent.AgentSettings;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;
import org.privface.privacy.fisher.FisherBasis;
import org.privface.privacy.embedding.EmbeddingBasis;
import org.privface.privacy.embedding.EmbeddingMechanism;
import org.privface.privacy.fisher.FisherMechanism;
import org.privface.privacy.gdp.GaussianMechanism;
import org.privface.privacy.gdp.MuGdp;
import org.privface.privacy.gdp.SecureGaussian;
import org.privface.agent.track.TrackBudget;
import org.privface.privacy.EigenBasis;
import org.privface.privacy.FaceMechanism;
import org.privface.privacy.PeepMechanism;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.Release;
import org.privface.privacy.SensitivityMode;
import org.privface.privacy.aggregate.PrivateCovariance;
import org.privface.privacy.aggregate.PrivateEigenfaces;
import org.privface.privacy.aggregate.PrivateMean;
import org.privface.privacy.rdp.RdpBasis;
import org.privface.privacy.rdp.RdpFaceMechanism;
import org.privface.privacy.rdp.RdpMechanism;
import org.privface.privacy.rdp.RdpMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the mechanism a policy calls for at a given ε per release, and the bases behind it.
 * Mechanisms are cached per (mechanism, mode, ε, image release), since budget policies reuse a few
 * ε values.
 *
 * <p>No enrolled face shapes the release of itself unpaid ({@link BasisFit}): the PEEP and
 * GAUSSIAN eigenbasis and RDP's ranking come from a private fit charged to every enrolled image in
 * the ledger, or from a public basis file; their clamp ranges and clip radii come with them. FISHER
 * still fits on the enrolled identities, and its records say so. Every record's basisId ends in
 * whom its ε covers: {@code .every-face} or {@code .query-faces-only}.
 */
public final class Mechanisms {
    private static final Logger LOG = LoggerFactory.getLogger(Mechanisms.class);
    /** Haar levels for RDP's 64×64 crops: 8×8 approximation blocks. */
    static final int RDP_LEVELS = 3;
    /** basisId suffix of a private fit: every face's record ε holds, and enrolled faces paid the fit in the ledger. */
    public static final String PRIVATE_FIT = ".dp-fit.every-face";
    /** basisId suffix of a basis from an operator's public file. */
    public static final String PUBLIC_FILE = ".public-file.every-face";
    /** basisId suffix of FISHER, whose directions are fitted on the enrolled identities without privacy. */
    public static final String QUERY_FACES_ONLY = ".query-faces-only";

    /** Where the pixel mechanisms' basis comes from: {@code agent.basis-fit}. */
    public enum BasisFit {
        /** Fitted on the enrollment folder at μ-GDP, charged to each image it was fitted on. */
        PRIVATE,
        /** Loaded from {@code agent.basis-file}, fitted elsewhere on faces that are not enrolled here. */
        PUBLIC_FILE;

        public static BasisFit parse(String s) {
            String v = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
            return switch (v) {
                case "private" -> PRIVATE;
                case "public-file" -> PUBLIC_FILE;
                case "enrollment" -> throw new IllegalArgumentException("agent.basis-fit=enrollment is refused: a basis"
                        + " fitted on the enrolled faces without privacy would make their records' epsilon untrue"
                        + " (docs/privacy.md, 'Who a stated epsilon covers'); use private or public-file");
                default -> throw new IllegalArgumentException("unknown agent.basis-fit '" + s + "'; use private or public-file");
            };
        }
    }

    private final AgentSettings settings;
    private final FaceFinder detector;
    private final BasisFit basisFit;
    /** Charged for private fits; null where none is open (a private fit then fails). */
    private final EnrollmentLedger ledger;
    private final SecureLaplace laplace = new SecureLaplace();
    private final SecureGaussian gaussian = new SecureGaussian();
    private final Map<FaceCrops.Shape, LabelledFaces> enrollment = new ConcurrentHashMap<>();
    private final Map<String, FaceMechanism> cache = new ConcurrentHashMap<>();
    private volatile EigenBasis peepBasis;
    private final Map<FisherMechanism.Preset, FisherBasis> fisher = new ConcurrentHashMap<>();
    private volatile RdpBasis rdpBasis;

    private volatile LabelledFaces enrolledEmbeddings;

    /**
     * @param ledger the enrollment ledger that private fits are charged to; null when there is none
     * @throws IllegalArgumentException when {@code agent.basis-fit} is unknown or refused
     */
    public Mechanisms(AgentSettings settings, FaceFinder detector, EnrollmentLedger ledger) {
        this.settings = settings;
        this.detector = detector;
        this.basisFit = BasisFit.parse(settings.getBasisFit());
        this.ledger = ledger;
        if (basisFit == BasisFit.PRIVATE && settings.getBasisFile() != null) {
            LOG.warn("agent.basis-file {} is not read: agent.basis-fit is private (set public-file to use it)",
                    settings.getBasisFile());
        }
    }

    /**
     * An enrolled image's cap when local configuration sets none: enroll-releases releases at the
     * floor's highest ε, plus, with a private basis, one fit, so the fit does not crowd out the
     * enrollment it exists for.
     */
    public static double defaultEnrollmentCap(AgentSettings s, double epsilonMax) {
        double fitMu = BasisFit.parse(s.getBasisFit()) == BasisFit.PRIVATE ? s.getBasisFitMu() : 0;
        // Each form an image may be released in (enrollmentForms): the vector's at the policy's ε, at most the
        // floor's, and the templates' at their own.
        String forms = s.getAnswer().enrollmentForms();
        double vector = forms.equals("templates") ? 0 : s.getEnrollReleases() * epsilonMax;
        double templates = forms.equals("vector") ? 0
                : s.getAnswer().getTemplateReleases() * s.getAnswer().getTemplateEpsilon();
        return MuGdp.combinedEpsilon(vector + templates, fitMu, MuGdp.DEFAULT_DELTA);
    }

    /**
     * @param epsilonPerRelease ε of the release (PEEP, RDP)
     * @param muPerRelease      μ of the release (GAUSSIAN); NaN to derive it from ε at the default δ
     */
    public FaceMechanism forRelease(SitePolicy p, double epsilonPerRelease, double muPerRelease) {
        double mu = p.mechanism() != Mechanism.GAUSSIAN ? Double.NaN
                : Double.isNaN(muPerRelease) ? MuGdp.muFor(epsilonPerRelease, MuGdp.DEFAULT_DELTA) : muPerRelease;
        // FISHER's basis follows the policy's nominal ε per release, not this release's ε: enrollment
        // (at the track's ε) and every query of a policy must land in one feature space, or the
        // queries wait for a model that is never trained.
        FisherMechanism.Preset preset = p.mechanism() != Mechanism.FISHER ? null
                : FisherMechanism.Preset.forEpsilon(p.budgetPolicy().epsilonPerRelease(p.epsilon()));
        String key = p.mechanism() + "/" + p.mode() + "/" + epsilonPerRelease + "/" + mu + "/" + p.imageRelease() + "/" + preset;
        String covers = basisFit == BasisFit.PRIVATE ? PRIVATE_FIT : PUBLIC_FILE;
        return cache.computeIfAbsent(key, k -> switch (p.mechanism()) {
            case PEEP -> labelled(new PeepMechanism(peepBasis(), SensitivityMode.fromWireName(p.mode()), epsilonPerRelease,
                    laplace), covers);
            case RDP -> labelled(new RdpFaceMechanism(new RdpMechanism(rdpBasis(), RdpMode.parse(p.mode()), epsilonPerRelease,
                    laplace), p.imageRelease()), covers);
            // φ = the largest eigenvalue: Δ = τ/√λ₁ and every coordinate's noise is at most τ/μ (docs/mechanisms.md).
            case GAUSSIAN -> labelled(new GaussianMechanism(peepBasis(), mu, peepBasis().eigenvalues()[0], gaussian), covers);
            case FISHER -> labelled(new FisherMechanism(fisherBasis(preset), epsilonPerRelease, laplace), QUERY_FACES_ONLY);
            // Takes the embedder's vector, not pixels (EmbeddingMechanism); the basis is the network's bundled public file.
            case EMBEDDING -> EmbeddingMechanism.publicPreset(settings.getEmbedder().getNetwork(),
                    EmbeddingMechanism.Noise.parse(p.mode()), epsilonPerRelease,
                    p.budgetPolicy().epsilonPerRelease(p.epsilon()));
        });
    }

    public FaceMechanism forRelease(SitePolicy p, double epsilonPerRelease) {
        return forRelease(p, epsilonPerRelease, Double.NaN);
    }

    /**
     * The releases each enrolled image needs under a policy: the vector's form, and where the
     * site answers ({@code agent.answer.release} answer or both) with an EMBEDDING sign-cap, the
     * templates' form ({@link EmbeddingMechanism#templatePreset}) for {@code people} enrolled people.
     * An answer-only site needs no vector enrollment; with both, each image is charged both forms.
     */
    public List<EnrollmentForm> enrollmentForms(SitePolicy p, int people) {
        FaceMechanism vector = forRelease(p, p.epsilon());
        String forms = settings.getAnswer().enrollmentForms();
        int vectorReleases = settings.getEnrollReleases();
        if (!answers(p)) {
            return List.of(new EnrollmentForm(vector, vectorReleases, false));
        }
        int templateReleases = settings.getAnswer().getTemplateReleases();
        FaceMechanism templates = templateForm(p, people);
        if (forms.equals("templates")) {
            return List.of(new EnrollmentForm(templates, templateReleases, true));
        }
        double te = settings.getAnswer().getTemplateEpsilon();
        boolean same = te == p.epsilon() && EmbeddingMechanism.Preset.forEpsilon(EmbeddingMechanism.Noise.SIGN_CAP,
                p.epsilon()).equals(org.privface.privacy.embedding.TemplatePresets.forGallery(
                        settings.getEmbedder().getNetwork(), te, people).preset());
        return same ? List.of(new EnrollmentForm(vector, Math.max(vectorReleases, templateReleases), true))
                : List.of(new EnrollmentForm(vector, vectorReleases, false), new EnrollmentForm(templates, templateReleases, true));
    }

    /**
     * One form an enrolled image is released in: its mechanism, how many times
     * ({@code agent.enroll-releases} for the vector's, {@code agent.answer.template-releases} for the
     * templates', the more of the two for a form serving both), and whether the gallery's templates
     * are built from it.
     */
    public record EnrollmentForm(FaceMechanism mechanism, int releases, boolean templates) {
    }

    /** Whether the site answers with templates under this policy: answer or both, EMBEDDING sign-cap. */
    public boolean answers(SitePolicy p) {
        return !settings.getAnswer().enrollmentForms().equals("vector") && p.mechanism() == Mechanism.EMBEDDING
                && EmbeddingMechanism.Noise.parse(p.mode()) == EmbeddingMechanism.Noise.SIGN_CAP;
    }

    /** The templates' form of a policy for C enrolled people (cached like the others). */
    EmbeddingMechanism templateForm(SitePolicy p, int people) {
        String network = settings.getEmbedder().getNetwork();
        // At agent.answer.template-epsilon, whatever the policy's ε: local configuration only.
        double e = settings.getAnswer().getTemplateEpsilon();
        return (EmbeddingMechanism) cache.computeIfAbsent("templates/" + network + "/" + e + "/" + people,
                k -> EmbeddingMechanism.templatePreset(network, e, people));
    }

    /**
     * How a policy's releases compose on a track, each pure-ε release charged the ε its mechanism
     * states (never more than the share asked for), so the ledgers and the records agree.
     */
    public TrackBudget chargedBudget(SitePolicy p) {
        TrackBudget b = budget(p);
        if (b.accounting() != TrackBudget.Accounting.PURE_EPSILON) {
            return b;
        }
        double stated;
        try {
            stated = statedEpsilon(p, b.unitsPerRelease());
        } catch (RuntimeException e) {
            // Not known yet (no basis, say): nothing is released until it is, and the share,
            // charged meanwhile, is at least what any release at it states.
            LOG.debug("stated epsilon of {} not known yet: the ledger charges the share", p.mechanism(), e);
            return b;
        }
        return b.charging(stated);
    }

    /**
     * The ε per face that {@link #forRelease} at this share would state, asked of the mechanism's
     * family without building a mechanism: only PEEP's paper modes and RDP read their basis.
     */
    public double statedEpsilon(SitePolicy p, double share) {
        return switch (p.mechanism()) {
            case PEEP -> {
                SensitivityMode mode = SensitivityMode.fromWireName(p.mode());
                boolean paper = mode == SensitivityMode.PAPER_PCA || mode == SensitivityMode.PAPER_PIXEL;
                EigenBasis basis = paper ? peepBasis() : null;
                yield PeepMechanism.statedEpsilon(mode, share, paper ? basis.dimension() : 0,
                        paper ? basis.width() * basis.height() : 0);
            }
            case RDP -> RdpMechanism.statedEpsilon(rdpBasis(), RdpMode.parse(p.mode()), share);
            case GAUSSIAN -> MuGdp.epsilonFor(MuGdp.muFor(share, MuGdp.DEFAULT_DELTA), MuGdp.DEFAULT_DELTA);
            case FISHER -> org.privface.privacy.Privacy.checkEpsilon(share);
            case EMBEDDING -> {
                EmbeddingMechanism.Noise noise = EmbeddingMechanism.Noise.parse(p.mode());
                yield EmbeddingMechanism.statedEpsilon(noise,
                        EmbeddingMechanism.Preset.forEpsilon(noise, p.budgetPolicy().epsilonPerRelease(p.epsilon())), share);
            }
        };
    }

    /** How a policy's releases compose on a track. */
    public static TrackBudget budget(SitePolicy p) {
        return new TrackBudget(p.budgetPolicy(), p.epsilon(), p.window(), TrackBudget.DEFAULT_MAX_TRACKS,
                p.mechanism() == Mechanism.GAUSSIAN ? TrackBudget.Accounting.GAUSSIAN_DP : TrackBudget.Accounting.PURE_EPSILON,
                MuGdp.DEFAULT_DELTA);
    }

    /** A new embedder from agent.embedder, for one thread (a camera's, or enrollment's). */
    public FaceEmbedder newEmbedder() {
        return settings.getEmbedder().create();
    }

    /**
     * Drops the enrollment faces read so far (after an erasure removed a person's files), so the
     * next publication reads the folder again. Bases already fitted stay: see docs/operations.md,
     * "What erasure cannot reach".
     */
    public synchronized void forgetEnrollment() {
        enrollment.clear();
        enrolledEmbeddings = null;
    }

    /** The enrollment folder as the policy's mechanism takes it (pixel crops or embeddings); null without a folder. */
    public LabelledFaces enrollmentInputs(SitePolicy p) {
        if (!FaceInput.needsEmbedding(p)) {
            return enrollment(FaceInput.shape(p));
        }
        if (settings.getEnrollFolder() == null) {
            return null;
        }
        synchronized (this) {
            if (enrolledEmbeddings == null) {
                try (FaceEmbedder e = newEmbedder()) {
                    enrolledEmbeddings = FaceDatasets.embedded(settings.getEnrollFolder(), detector, e);
                } catch (IOException e) {
                    throw new IllegalStateException("cannot read the enrollment folder: " + e.getMessage(), e);
                }
            }
            return enrolledEmbeddings;
        }
    }

    /** The enrollment folder's faces at a shape; null when no folder is configured. */
    public LabelledFaces enrollment(FaceCrops.Shape shape) {
        if (settings.getEnrollFolder() == null) {
            return null;
        }
        return enrollment.computeIfAbsent(shape, s -> {
            try {
                return FaceDatasets.detected(settings.getEnrollFolder(), detector, s);
            } catch (IOException e) {
                throw new IllegalStateException("cannot read the enrollment folder: " + e.getMessage(), e);
            }
        });
    }

    /**
     * The PEEP and GAUSSIAN eigenbasis: the operator's public file, or a private fit on the
     * enrollment kept in the data directory, so a restart reuses it and charges nothing again.
     */
    synchronized EigenBasis peepBasis() {
        if (peepBasis == null) {
            peepBasis = basisFit == BasisFit.PUBLIC_FILE ? publicFile() : privateFit(FaceCrops.Shape.PEEP);
        }
        return peepBasis;
    }

    private EigenBasis publicFile() {
        Path file = settings.getBasisFile();
        if (file == null || !Files.isRegularFile(file)) {
            throw new IllegalStateException("agent.basis-fit is public-file but agent.basis-file " + file
                    + " is not a file: fit one on faces that are not enrolled here (BasisTool fit --faces DIR)");
        }
        try {
            return EigenBasis.load(file);
        } catch (IOException e) {
            throw new IllegalStateException("cannot load the PEEP basis " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * A μ-GDP eigenbasis of the enrolled faces at a crop shape, charged to each image before it
     * shapes any release. Images whose cap cannot take the charge are left out of the fit, so they
     * shape nothing. Only the fitted basis is kept, at {@link #privateBasisFile}.
     */
    private EigenBasis privateFit(FaceCrops.Shape shape) {
        Path kept = privateBasisFile(shape);
        try {
            if (Files.isRegularFile(kept)) {
                return EigenBasis.load(kept);
            }
            if (ledger == null) {
                throw new IllegalStateException("agent.basis-fit is private, but no enrollment ledger is open to charge the"
                        + " fit to (set agent.enroll-folder; see the log for a damaged ledger)");
            }
            LabelledFaces faces = required(shape);
            double mu = settings.getBasisFitMu();
            List<double[]> included = new ArrayList<>();
            List<String> hashes = new ArrayList<>();
            for (int i = 0; i < faces.size(); i++) {
                String hash = EnrollmentLedger.sha256(settings.getEnrollFolder().resolve(faces.origins().get(i)));
                if (ledger.fitFits(hash, mu)) {
                    included.add(faces.faces()[i]);
                    hashes.add(hash);
                } else {
                    LOG.warn("enrollment image {} is left out of the private {}x{} basis fit: mu {} would pass its cap {}",
                            faces.origins().get(i), shape.width(), shape.height(), mu, ledger.cap());
                }
            }
            int nc = Math.min(settings.getComponents(), included.size() - 1);
            if (nc < 1) {
                throw new IllegalStateException("a private basis fit needs at least 2 enrollment faces within their cap, had "
                        + included.size());
            }
            PrivateEigenfaces.Fit fit = PrivateEigenfaces.fit(included.toArray(double[][]::new), shape.width(),
                    shape.height(), nc, mu, new PrivateMean(), new PrivateCovariance());
            Instant now = Instant.now();
            for (String h : hashes) {
                ledger.chargeFit(h, fit.mu(), now);
            }
            Files.createDirectories(kept.getParent());
            fit.basis().save(kept);
            LOG.info("private {}x{} basis {} fitted at mu {} on {} enrollment image(s), each charged in the ledger; kept at {}",
                    shape.width(), shape.height(), fit.basis().id(), fit.mu(), fit.n(), kept);
            return fit.basis();
        } catch (IOException e) {
            throw new IllegalStateException("cannot fit or keep the private basis " + kept + ": " + e.getMessage(), e);
        }
    }

    /** Where a private fit at a shape, nc and μ is kept: another setting is another fit, charged again. */
    public Path privateBasisFile(FaceCrops.Shape shape) {
        return settings.getDataDir().resolve(String.format(Locale.ROOT, "private-basis-%dx%d-nc%d-mu%s.eigf", shape.width(),
                shape.height(), settings.getComponents(), Double.toString(settings.getBasisFitMu())));
    }

    /**
     * Fisher directions need the enrolled identities, so only the enrollment folder can fit them,
     * without privacy: FISHER's records are labelled {@link #QUERY_FACES_ONLY}.
     */
    FisherBasis fisherBasis(FisherMechanism.Preset preset) {
        return fisher.computeIfAbsent(preset, pr -> {
            LabelledFaces faces = required(FaceCrops.Shape.PEEP);
            return FisherBasis.fit(faces.faces(), faces.labels(), faces.names().size(), FaceCrops.WIDTH, FaceCrops.HEIGHT,
                    pr.p(), pr.k(), pr.quantile());
        });
    }

    /**
     * RDP's basis: its ranking from a private fit at 64×64 (RDP has no public basis file) and its
     * clamp ranges the full range of every coefficient, so no face shapes them.
     */
    synchronized RdpBasis rdpBasis() {
        if (rdpBasis == null) {
            if (basisFit != BasisFit.PRIVATE) {
                throw new IllegalStateException("RDP has no public basis file: use agent.basis-fit=private");
            }
            rdpBasis = RdpBasis.withFullRanges(privateFit(FaceCrops.Shape.RDP), RDP_LEVELS);
        }
        return rdpBasis;
    }

    /** The mechanism with its records' basisId suffixed by whom their ε covers; the recognizer keys models by it. */
    private static FaceMechanism labelled(FaceMechanism m, String covers) {
        return new FaceMechanism() {
            @Override
            public int width() {
                return m.width();
            }

            @Override
            public int height() {
                return m.height();
            }

            @Override
            public Release perturb(double[] face) {
                Release r = m.perturb(face);
                return new Release(r.vector(), r.mechanism(), r.mode(), r.epsilonPerCoordinate(), r.epsilonPerFace(),
                        r.noiseScale(), r.basisId() + covers, r.image(), r.delta(), r.mu());
            }

            @Override
            public double epsilonPerFace() {
                return m.epsilonPerFace();
            }
        };
    }

    private LabelledFaces required(FaceCrops.Shape shape) {
        LabelledFaces faces = enrollment(shape);
        if (faces == null) {
            throw new IllegalStateException("no basis: set agent.enroll-folder to fit one privately, or agent.basis-fit="
                    + "public-file with agent.basis-file (PEEP and GAUSSIAN only)");
        }
        return faces;
    }
}
