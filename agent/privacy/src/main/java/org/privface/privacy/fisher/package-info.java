/**
 * FISHER: releases in a Fisher-discriminant basis under an L1 clip. Proof notes: {@code docs/privacy.md}
 * ("What one release guarantees", "Who a stated ε covers").
 */
package org.privface.privacy.fisher;
