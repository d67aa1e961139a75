/**
 * Local DP on a deep face embedding: the public basis, the sign-cap, Laplace and Gaussian releases and
 * the Hamming cap. Proof notes: {@code docs/mechanisms.md} §4 and {@code docs/privacy.md}.
 */
package org.privface.privacy.embedding;
