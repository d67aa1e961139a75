/**
 * The Gaussian mechanism with μ-GDP accounting: the exact discrete Gaussian sampler
 * ({@link org.privface.privacy.gdp.SecureGaussian}), the analytic calibration and conversions of
 * {@link org.privface.privacy.gdp.MuGdp}, the accountant, and the RKHS mean. Proof notes:
 * {@code docs/mechanisms.md} §2 and {@code docs/privacy.md} ("How the noise is sampled").
 */
package org.privface.privacy.gdp;
