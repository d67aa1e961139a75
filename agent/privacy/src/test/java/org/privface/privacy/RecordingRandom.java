package org.privface.privacy;

import java.io.ByteArrayOutputStream;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * A seeded generator ({@link SeededRandom}) that records every byte and every fetch it serves, so a
 * test can check what a sampler drew against the same stream read another way.
 */
public final class RecordingRandom extends SecureRandom {
    private final SecureRandom inner;
    private final ByteArrayOutputStream served = new ByteArrayOutputStream();
    private final List<Integer> fetches = new ArrayList<>();

    public RecordingRandom(long seed) {
        this.inner = SeededRandom.of(seed);
    }

    @Override
    public synchronized void nextBytes(byte[] bytes) {
        inner.nextBytes(bytes);
        served.write(bytes, 0, bytes.length);
        fetches.add(bytes.length);
    }

    /** Every byte served so far, in order. */
    public synchronized byte[] served() {
        return served.toByteArray();
    }

    /** The length of each fetch so far, in order. */
    public synchronized List<Integer> fetches() {
        return List.copyOf(fetches);
    }
}
