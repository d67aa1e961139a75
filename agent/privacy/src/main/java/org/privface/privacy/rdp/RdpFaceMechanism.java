package org.privface.privacy.rdp;

import org.privface.privacy.FaceMechanism;
import org.privface.privacy.Release;

/**
 * RDP as the agent runs it: STRICT only, because the paper modes release coefficients without
 * noise and so have no finite per-face ε to state on a record. Publishes F′, and the sanitized
 * image only when the gateway's own configuration enables image release.
 */
public final class RdpFaceMechanism implements FaceMechanism {
    private final RdpMechanism rdp;
    private final boolean imageRelease;

    public RdpFaceMechanism(RdpMechanism rdp, boolean imageRelease) {
        if (rdp.mode().paperReproduction()) {
            throw new IllegalArgumentException("RDP mode " + rdp.mode().wireName()
                    + " releases coefficients without noise, so its per-face epsilon is unbounded; the agent publishes RDP in mode "
                    + RdpMode.STRICT.wireName() + " only (docs/privacy-rdp.md)");
        }
        this.rdp = rdp;
        this.imageRelease = imageRelease;
    }

    @Override
    public int width() {
        return rdp.basis().eigen().width();
    }

    @Override
    public int height() {
        return rdp.basis().eigen().height();
    }

    @Override
    public Release perturb(double[] face) {
        RdpRelease r = rdp.sanitize(face, imageRelease);
        return new Release(r.features(), "RDP", rdp.mode().wireName(), r.epsilonPerFace() / r.noised(),
                r.epsilonPerFace(), r.meanScale(), rdp.basis().id(), imageRelease ? r.image() : null);
    }

    @Override
    public double epsilonPerFace() {
        return rdp.epsilonPerFace();
    }
}
