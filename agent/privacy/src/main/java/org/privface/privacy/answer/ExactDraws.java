package org.privface.privacy.answer;

import java.security.SecureRandom;

/**
 * Moved to {@link org.privface.privacy.ExactDraws}, beside {@link org.privface.privacy.ExactCoins}.
 * Kept so that callers outside the library (the recognizer's answer results) compile unchanged.
 *
 * @deprecated use {@link org.privface.privacy.ExactDraws}
 */
@Deprecated
public interface ExactDraws extends org.privface.privacy.ExactDraws {
    /** @deprecated use {@link org.privface.privacy.ExactDraws#secure(SecureRandom)} */
    @Deprecated
    static ExactDraws secure(SecureRandom random) {
        org.privface.privacy.ExactDraws d = org.privface.privacy.ExactDraws.secure(random);
        return new ExactDraws() {
            @Override
            public boolean bernoulli(long num, long den) {
                return d.bernoulli(num, den);
            }

            @Override
            public long uniform(long n) {
                return d.uniform(n);
            }
        };
    }
}
