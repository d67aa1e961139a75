package org.privface.agent.link;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import org.privface.agent.track.TrackBudget;

/**
 * One file per person in the ledger's directory: its budget state and its appearances' embeddings,
 * written whole (temporary file, fsync, atomic rename) on every change, and wiped when the person
 * expires: overwritten with zeros, synced, deleted. The overwrite is what a program can do; on a
 * copy-on-write file system or a flash drive's remapped blocks the old bytes may outlive it, which
 * is why the directory is the agent's alone and lives in its data directory (docs/privacy.md).
 *
 * <p>Format (big-endian): magic "PFP1", person id (UTF), window start millis (-1: none), window
 * length millis, units, ε, releases, accounting ordinal (-1: none), appearance count, then per
 * appearance the camera (UTF), seen-at millis, dimension and the floats.
 */
final class PersonFiles {
    static final int MAGIC = 0x50465031;
    static final String SUFFIX = ".person";
    private static final String TMP = ".tmp";
    private static final Pattern ID = Pattern.compile("[0-9a-f-]{36}");

    private final Path dir;

    private PersonFiles(Path dir) {
        this.dir = dir;
    }

    /** Owner read and write only: the files hold raw embeddings, as identifying as a face. */
    static final java.util.Set<PosixFilePermission> FILE_MODE = PosixFilePermissions.fromString("rw-------");

    /**
     * Opens (making it where absent) the directory, mode 0700. A symbolic link there is refused: it
     * would send raw embeddings wherever it points (another user's directory, a shared mount).
     */
    static PersonFiles open(Path dir) throws IOException {
        org.privface.agent.store.PrivateDirectory.make(dir, false);
        return new PersonFiles(dir);
    }

    /** Every person on disk; a half-written temporary file from a crash is wiped, never read. */
    List<PersonLedger.Person> readAll() throws IOException {
        List<PersonLedger.Person> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path f : ds) {
                String name = f.getFileName().toString();
                if (Files.isSymbolicLink(f)) {
                    // A link planted here could make a read or a wipe reach another file.
                    throw new IOException("person ledger entry " + f + " is a symbolic link; the agent does not follow it");
                }
                if (name.endsWith(TMP)) {
                    wipeFile(f);
                } else if (name.endsWith(SUFFIX)) {
                    try {
                        out.add(read(f));
                    } catch (IOException | RuntimeException e) {
                        // Starting without it would forget a person's spend: refuse, and say which file.
                        throw new IOException("person ledger file " + f + " is unreadable (" + e
                                + "); the agent does not start without a person's spend", e);
                    }
                }
            }
        }
        return out;
    }

    void write(PersonLedger.Person p) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeUTF(p.id);
            out.writeLong(p.windowStart == null ? -1 : p.windowStart.toEpochMilli());
            out.writeLong(p.windowLength == null ? 0 : p.windowLength.toMillis());
            out.writeDouble(p.units);
            out.writeDouble(p.epsilon);
            out.writeInt(p.releases);
            out.writeInt(p.accounting == null ? -1 : p.accounting.ordinal());
            out.writeInt(p.appearances.size());
            for (PersonLedger.Appearance a : p.appearances) {
                out.writeUTF(a.camera());
                out.writeLong(a.seenAt().toEpochMilli());
                out.writeInt(a.embedding().length);
                for (float v : a.embedding()) {
                    out.writeFloat(v);
                }
            }
        }
        Path file = file(p.id);
        Path tmp = dir.resolve(p.id + SUFFIX + TMP);
        // Created 0600 (never readable by others, even for an instant), never through a link.
        java.util.Set<java.nio.file.OpenOption> options = java.util.Set.of(StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
        try (FileChannel ch = posix ? FileChannel.open(tmp, options, PosixFilePermissions.asFileAttribute(FILE_MODE))
                : FileChannel.open(tmp, options)) {
            if (posix) {
                // A temporary file left by an older version keeps its mode through CREATE: set it.
                Files.setPosixFilePermissions(tmp, FILE_MODE);
            }
            // One write() may store only part (a filling disk takes what fits): write until all is
            // stored, or fail; a part renamed over the file would lose the person's earlier spend.
            ByteBuffer b = ByteBuffer.wrap(bytes.toByteArray());
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        } catch (IOException e) {
            discard(tmp);
            throw e;
        }
        // The file replaced keeps its old blocks until the file system reuses them; it held the same
        // person's embeddings, which the wipe at expiry does not reach either (see the class comment).
        try {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Wipes a temporary file a failed write left, so it neither holds embeddings nor takes the space. */
    private static void discard(Path tmp) {
        try {
            wipeFile(tmp);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException again) {
                // readAll wipes it at the next start
            }
        }
    }

    void wipe(String personId) throws IOException {
        wipeFile(file(personId));
    }

    boolean exists(String personId) {
        return Files.exists(file(personId));
    }

    Path dir() {
        return dir;
    }

    private Path file(String personId) {
        if (!ID.matcher(personId).matches()) {
            throw new IllegalArgumentException("not a person id: " + personId);
        }
        return dir.resolve(personId + SUFFIX);
    }

    static void wipeFile(Path f) throws IOException {
        if (!Files.exists(f, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            long size = ch.size();
            ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(size, 1 << 16));
            for (long pos = 0; pos < size; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), size - pos));
                pos += ch.write(zeros, pos);
            }
            ch.force(true);
        }
        Files.delete(f);
    }

    private static PersonLedger.Person read(Path f) throws IOException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(Files.readAllBytes(f)))) {
            if (in.readInt() != MAGIC) {
                throw new IOException(f + " is not a person ledger file");
            }
            PersonLedger.Person p = new PersonLedger.Person(in.readUTF());
            long start = in.readLong();
            long length = in.readLong();
            p.windowStart = start < 0 ? null : Instant.ofEpochMilli(start);
            p.windowLength = start < 0 ? null : Duration.ofMillis(length);
            p.units = in.readDouble();
            p.epsilon = in.readDouble();
            p.releases = in.readInt();
            int acc = in.readInt();
            p.accounting = acc < 0 ? null : TrackBudget.Accounting.values()[acc];
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                String camera = in.readUTF();
                Instant seen = Instant.ofEpochMilli(in.readLong());
                float[] e = new float[in.readInt()];
                for (int j = 0; j < e.length; j++) {
                    e[j] = in.readFloat();
                }
                p.appearances.add(new PersonLedger.Appearance(camera, seen, e));
            }
            if (!f.getFileName().toString().equals(p.id + SUFFIX)) {
                throw new IOException(f + " holds person " + p.id);
            }
            return p;
        }
    }
}
