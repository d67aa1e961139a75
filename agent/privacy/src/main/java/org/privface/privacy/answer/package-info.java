/**
 * Releasing the answer instead of the data (issue 29): the gateway decodes a query face against a
 * gallery model built from enrollment releases only ({@link org.privface.privacy.answer.Gallery}),
 * and publishes the decoded identity, or "unknown", through exact k-ary randomized response
 * ({@link org.privface.privacy.answer.RandomizedResponse}). Proof notes in the classes' comments.
 */
package org.privface.privacy.answer;
