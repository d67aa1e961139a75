package org.privface.agent.link;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real file system that fills up: a small tmpfs mounted over a directory (as the local stack's
 * {@code AgentFaultsTest} mounts one over the spool), filled with one-page files until the kernel
 * answers ENOSPC. Mounting needs CAP_SYS_ADMIN; {@link #mount} says false where it is not allowed.
 */
public final class FullDisk implements AutoCloseable {
    public static final int PAGE = 4096;
    private final Path dir;
    private final List<Path> filler = new ArrayList<>();

    private FullDisk(Path dir) {
        this.dir = dir;
    }

    /** A tmpfs of {@code bytes} over {@code dir}; null where mounting is not allowed here. */
    public static FullDisk mount(Path dir, long bytes) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + bytes + ",mode=0700", "tmpfs", dir.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            System.out.println("FULL DISK: cannot mount a tmpfs over " + dir + " (" + out + ")");
            return null;
        }
        return new FullDisk(dir);
    }

    /** Writes one-page files until the file system refuses: afterwards not one byte fits. */
    public int fill() throws IOException {
        ByteBuffer page = ByteBuffer.allocate(PAGE);
        for (int i = 0; ; i++) {
            Path f = dir.resolve("filler-" + filler.size());
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                filler.add(f);
                page.clear();
                while (page.hasRemaining()) {
                    ch.write(page);
                }
            } catch (IOException e) {
                if (!String.valueOf(e.getMessage()).contains("No space left")) {
                    throw e;
                }
                // A one-page write into an empty file stores all or nothing: this one holds no page.
                Files.deleteIfExists(filler.remove(filler.size() - 1));
                return i;
            }
        }
    }

    /** Frees {@code pages} filler pages (the newest first); all of them with {@link Integer#MAX_VALUE}. */
    public void free(int pages) throws IOException {
        for (int i = 0; i < pages && !filler.isEmpty(); i++) {
            Files.deleteIfExists(filler.remove(filler.size() - 1));
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("umount", "-l", dir.toString()).redirectErrorStream(true).start();
        p.waitFor(10, TimeUnit.SECONDS);
    }
}
