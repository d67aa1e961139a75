package org.privface.agent;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * eventId,origin,face lines for evaluating a run offline against known labels; a no-op without a
 * path. The origin is a file name or frame index, never frame content, and the file stays on
 * the gateway. face is {@code labelled} for the one face of its frame that a label of the frame
 * (an image folder's person) belongs to under {@link org.privface.agent.detect.LabelledFace}'s
 * rule, {@code other} for the rest.
 */
final class OriginLog implements AutoCloseable {
    private final BufferedWriter out;

    OriginLog(Path path) throws IOException {
        this.out = path == null ? null : Files.newBufferedWriter(path);
    }

    static final String LABELLED = "labelled";
    static final String OTHER = "other";

    synchronized void write(String eventId, String origin, boolean labelled) {
        if (out == null) {
            return;
        }
        try {
            out.write(eventId + "," + origin.replace(',', '_') + "," + (labelled ? LABELLED : OTHER) + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() throws IOException {
        if (out != null) {
            out.close();
        }
    }
}
