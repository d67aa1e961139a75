package org.privface.agent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.embed.FaceEmbedder;
import org.privface.agent.embed.OnnxEmbedder;
import org.privface.agent.policy.Mechanism;
import org.privface.agent.policy.SitePolicy;
import org.privface.agent.privacy.fisher.FisherBasis;
import org.privface.agent.privacy.embedding.EmbeddingBasis;
import org.privface.agent.privacy.embedding.EmbeddingMechanism;
import org.privface.agent.privacy.fisher.FisherMechanism;
import org.privface.agent.privacy.gdp.GaussianMechanism;
import org.privface.agent.privacy.gdp.MuGdp;
import org.privface.agent.privacy.gdp.SecureGaussian;
import org.privface.agent.track.TrackBudget;
import org.privface.agent.privacy.EigenBasis;
import org.privface.agent.privacy.FaceMechanism;
import org.privface.agent.privacy.PeepMechanism;
import org.privface.agent.privacy.SecureLaplace;
import org.privface.agent.privacy.SensitivityMode;
import org.privface.agent.privacy.rdp.RdpBasis;
import org.privface.agent.privacy.rdp.RdpFaceMechanism;
import org.privface.agent.privacy.rdp.RdpMechanism;
import org.privface.agent.privacy.rdp.RdpMode;

/**
 * Builds the mechanism a policy calls for at a given ε per release. Bases are fitted once, from
 * the gateway's enrollment folder (or, for PEEP, loaded from the basis file), and mechanisms are
 * cached per (mechanism, mode, ε, image release), since budget policies reuse a few ε values.
 */
final class Mechanisms {
    /** Haar levels for RDP's 64×64 crops: 8×8 approximation blocks. */
    static final int RDP_LEVELS = 3;

    private final AgentSettings settings;
    private final FaceFinder detector;
    private final SecureLaplace laplace = new SecureLaplace();
    private final SecureGaussian gaussian = new SecureGaussian();
    private final Map<FaceCrops.Shape, LabelledFaces> enrollment = new ConcurrentHashMap<>();
    private final Map<String, FaceMechanism> cache = new ConcurrentHashMap<>();
    private volatile EigenBasis peepBasis;
    private final Map<FisherMechanism.Preset, FisherBasis> fisher = new ConcurrentHashMap<>();
    private volatile RdpBasis rdpBasis;

    private volatile LabelledFaces enrolledEmbeddings;

    Mechanisms(AgentSettings settings, FaceFinder detector) {
        this.settings = settings;
        this.detector = detector;
    }

    /**
     * @param epsilonPerRelease ε of the release (PEEP, RDP)
     * @param muPerRelease      μ of the release (GAUSSIAN); NaN to derive it from ε at the default δ
     */
    FaceMechanism forRelease(SitePolicy p, double epsilonPerRelease, double muPerRelease) {
        double mu = p.mechanism() != Mechanism.GAUSSIAN ? Double.NaN
                : Double.isNaN(muPerRelease) ? MuGdp.muFor(epsilonPerRelease, MuGdp.DEFAULT_DELTA) : muPerRelease;
        // FISHER's basis follows the policy's nominal ε per release, not this release's ε: enrollment
        // (at the track's ε) and every query of a policy must land in one feature space, or the
        // queries wait for a model that is never trained.
        FisherMechanism.Preset preset = p.mechanism() != Mechanism.FISHER ? null
                : FisherMechanism.Preset.forEpsilon(p.budgetPolicy().epsilonPerRelease(p.epsilon()));
        String key = p.mechanism() + "/" + p.mode() + "/" + epsilonPerRelease + "/" + mu + "/" + p.imageRelease() + "/" + preset;
        return cache.computeIfAbsent(key, k -> switch (p.mechanism()) {
            case PEEP -> new PeepMechanism(peepBasis(), SensitivityMode.fromWireName(p.mode()), epsilonPerRelease, laplace);
            case RDP -> new RdpFaceMechanism(new RdpMechanism(rdpBasis(), RdpMode.parse(p.mode()), epsilonPerRelease, laplace),
                    p.imageRelease());
            // φ = the largest eigenvalue: Δ = τ/√λ₁ and every coordinate's noise is at most τ/μ (docs/mechanisms.md).
            case GAUSSIAN -> new GaussianMechanism(peepBasis(), mu, peepBasis().eigenvalues()[0], gaussian);
            case FISHER -> new FisherMechanism(fisherBasis(preset), epsilonPerRelease, laplace);
            // Takes the embedder's vector, not pixels (EmbeddingMechanism); the basis is the bundled public file.
            case EMBEDDING -> EmbeddingMechanism.publicPreset(EmbeddingBasis.DEFAULT_MODEL,
                    EmbeddingMechanism.Noise.parse(p.mode()), epsilonPerRelease,
                    p.budgetPolicy().epsilonPerRelease(p.epsilon()));
        });
    }

    FaceMechanism forRelease(SitePolicy p, double epsilonPerRelease) {
        return forRelease(p, epsilonPerRelease, Double.NaN);
    }

    /** How a policy's releases compose on a track. */
    static TrackBudget budget(SitePolicy p) {
        return new TrackBudget(p.budgetPolicy(), p.epsilon(), p.window(), TrackBudget.DEFAULT_MAX_TRACKS,
                p.mechanism() == Mechanism.GAUSSIAN ? TrackBudget.Accounting.GAUSSIAN_DP : TrackBudget.Accounting.PURE_EPSILON,
                MuGdp.DEFAULT_DELTA);
    }

    static FaceCrops.Shape shape(SitePolicy p) {
        return switch (p.mechanism()) {
            case PEEP -> FaceCrops.Shape.PEEP;
            case RDP -> FaceCrops.Shape.RDP;
            case GAUSSIAN, FISHER -> FaceCrops.Shape.PEEP;
            case EMBEDDING -> throw new IllegalArgumentException("EMBEDDING takes the deep embedding, not a pixel crop");
        };
    }

    /** A new embedder from agent.embedder, for one thread (a camera's, or enrollment's). */
    FaceEmbedder newEmbedder() {
        return new OnnxEmbedder(settings.getEmbedder().spec());
    }

    /** The enrollment folder as the policy's mechanism takes it (pixel crops or embeddings); null without a folder. */
    LabelledFaces enrollmentInputs(SitePolicy p) {
        if (!FaceInput.needsEmbedding(p)) {
            return enrollment(shape(p));
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
    LabelledFaces enrollment(FaceCrops.Shape shape) {
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

    synchronized EigenBasis peepBasis() {
        if (peepBasis == null) {
            try {
                Path file = settings.getBasisFile();
                if (file != null && Files.exists(file)) {
                    peepBasis = EigenBasis.load(file);
                } else {
                    LabelledFaces faces = required(FaceCrops.Shape.PEEP);
                    peepBasis = EigenBasis.fit(faces.faces(), settings.getComponents(), FaceCrops.WIDTH, FaceCrops.HEIGHT);
                    if (file != null) {
                        peepBasis.save(file);
                    }
                }
            } catch (IOException e) {
                throw new IllegalStateException("cannot load or save the PEEP basis: " + e.getMessage(), e);
            }
        }
        return peepBasis;
    }

    /** Fisher directions need the enrolled identities, so only the enrollment folder can fit them. */
    FisherBasis fisherBasis(FisherMechanism.Preset preset) {
        return fisher.computeIfAbsent(preset, pr -> {
            LabelledFaces faces = required(FaceCrops.Shape.PEEP);
            return FisherBasis.fit(faces.faces(), faces.labels(), faces.names().size(), FaceCrops.WIDTH, FaceCrops.HEIGHT,
                    pr.p(), pr.k(), pr.quantile());
        });
    }

    synchronized RdpBasis rdpBasis() {
        if (rdpBasis == null) {
            LabelledFaces faces = required(FaceCrops.Shape.RDP);
            rdpBasis = RdpBasis.fit(faces.faces(), settings.getComponents(), FaceCrops.Shape.RDP.width(),
                    FaceCrops.Shape.RDP.height(), RDP_LEVELS);
        }
        return rdpBasis;
    }

    private LabelledFaces required(FaceCrops.Shape shape) {
        LabelledFaces faces = enrollment(shape);
        if (faces == null) {
            throw new IllegalStateException("no basis: set agent.basis-file to an existing PEEP basis or agent.enroll-folder to fit one"
                    + (shape == FaceCrops.Shape.RDP ? " (RDP fits its basis from agent.enroll-folder)" : ""));
        }
        return faces;
    }
}
