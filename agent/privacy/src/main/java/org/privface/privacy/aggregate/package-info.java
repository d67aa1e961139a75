/**
 * Central-DP site aggregates (private mean, covariance, eigenfaces, basis) and the K-norm gradient
 * mechanism on the sphere. Proof notes: {@code docs/mechanisms.md} §3.
 */
package org.privface.privacy.aggregate;
