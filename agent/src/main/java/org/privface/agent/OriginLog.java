package org.privface.agent;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * eventId,origin lines for evaluating a run offline against known labels; a no-op without a
 * path. The origin is a file name or frame index, never frame content, and the file stays on
 * the gateway.
 */
final class OriginLog implements AutoCloseable {
    private final BufferedWriter out;

    OriginLog(Path path) throws IOException {
        this.out = path == null ? null : Files.newBufferedWriter(path);
    }

    synchronized void write(String eventId, String origin) {
        if (out == null) {
            return;
        }
        try {
            out.write(eventId + "," + origin.replace(',', '_') + "\n");
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
