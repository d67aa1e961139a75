/**
 * RDP (wavelet-domain image perturbation): the published modes, faithfully implemented and labelled,
 * and the strict mode the agent publishes. Proof notes and the comparison with the paper:
 * {@code docs/privacy-rdp.md}; what a release guarantees: {@code docs/privacy.md}.
 */
package org.privface.privacy.rdp;
