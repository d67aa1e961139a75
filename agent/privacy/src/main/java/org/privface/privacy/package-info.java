/**
 * The privacy library: the mechanisms that release a face (PEEP, {@link org.privface.privacy.PeepMechanism};
 * the shared eigenface basis), the exact secure Laplace sampler ({@link org.privface.privacy.SecureLaplace})
 * on the exact coins of {@link org.privface.privacy.ExactCoins}, and the precondition checks every
 * mechanism shares. No service, camera or broker code: numbers in, {@link org.privface.privacy.Release}s
 * out, each stating the ε it spent per face.
 *
 * <p>Proof notes: {@code docs/privacy.md} ("What one release guarantees", "How the noise is sampled,
 * and what that guarantees"), {@code docs/peep.md} (PEEP's sensitivity and modes). Subpackages:
 * {@code rdp} (RDP, {@code docs/privacy-rdp.md}), {@code gdp} (Gaussian mechanism, μ-GDP accounting,
 * {@code docs/mechanisms.md} §2), {@code fisher} (FISHER, {@code docs/privacy.md}), {@code latent}
 * (latent-space obfuscation and k-Same, {@code docs/mechanisms.md} §1), {@code aggregate} (central-DP
 * site aggregates and the K-norm gradient, {@code docs/mechanisms.md} §3), {@code embedding} (local DP
 * on a face embedding, {@code docs/mechanisms.md} §4).
 */
package org.privface.privacy;
