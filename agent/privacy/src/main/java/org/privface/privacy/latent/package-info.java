/**
 * Latent-space DP obfuscation (Croft et al.) and the k-Same baselines, as published and labelled.
 * Proof notes and where the paper's guarantee is weaker than claimed: {@code docs/mechanisms.md} §1.
 */
package org.privface.privacy.latent;
