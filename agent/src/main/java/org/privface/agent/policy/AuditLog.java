package org.privface.agent.policy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import io.micronaut.serde.ObjectMapper;
import io.micronaut.serde.annotation.Serdeable;

/**
 * Every policy change, accepted, clamped or rejected, as one JSON line appended and forced to the
 * gateway's disk before the change takes effect, so the log never misses an applied change.
 */
public final class AuditLog {
    /** Entries kept in memory for the status API; the file keeps them all. */
    static final int RECENT = 256;

    @Serdeable
    public record Entry(Instant at, String source, String principal, String site, String outcome,
                        PolicyOverride requested, Double epsilonRequested, double epsilonApplied,
                        long version, String reason) {
    }

    private final Path file;
    private final ObjectMapper json;
    private final Deque<Entry> recent = new ArrayDeque<>();

    public AuditLog(Path file, ObjectMapper json) {
        this.file = file;
        this.json = json;
        try {
            if (file.getParent() != null) {
                Files.createDirectories(file.getParent());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the audit log's directory " + file.getParent(), e);
        }
    }

    public synchronized void append(Entry e) {
        try {
            byte[] line = (json.writeValueAsString(e) + "\n").getBytes(StandardCharsets.UTF_8);
            try (var ch = java.nio.channels.FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND)) {
                ch.write(java.nio.ByteBuffer.wrap(line));
                ch.force(false);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException("cannot write the audit log " + file, ex);
        }
        recent.addLast(e);
        while (recent.size() > RECENT) {
            recent.removeFirst();
        }
    }

    public synchronized List<Entry> recent() {
        return new ArrayList<>(recent);
    }

    public Path file() {
        return file;
    }
}
