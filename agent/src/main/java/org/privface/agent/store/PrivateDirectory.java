package org.privface.agent.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * A directory only the agent's user can enter (0700): the data directory and the person ledger's
 * {@code persons/}, which hold raw linking embeddings, the audit log and the spool.
 */
public final class PrivateDirectory {
    public static final Set<PosixFilePermission> MODE = PosixFilePermissions.fromString("rwx------");

    private PrivateDirectory() {
    }

    /**
     * Makes {@code dir} (and its missing parents) and sets it to 0700 where the file system is POSIX.
     *
     * @param followLink whether {@code dir} may be a symbolic link (an operator may point the data
     *                   directory at an encrypted mount); where not, a link there is refused, since
     *                   it would send what is written wherever it points
     */
    public static Path make(Path dir, boolean followLink) throws IOException {
        if (!followLink && Files.isSymbolicLink(dir)) {
            throw new IOException(dir + " is a symbolic link; the agent keeps raw embeddings only in a directory"
                    + " of its own and refuses to follow it");
        }
        boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
        if (!Files.exists(dir)) {
            if (posix) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(MODE));
            } else {
                Files.createDirectories(dir);
            }
        }
        LinkOption[] options = followLink ? new LinkOption[0] : new LinkOption[] {LinkOption.NOFOLLOW_LINKS};
        if (!Files.isDirectory(dir, options)) {
            throw new IOException(dir + " is not a directory");
        }
        if (posix) {
            // Made earlier (another version, a wide umask, an init container): tightened, not trusted as found.
            Files.setPosixFilePermissions(dir, MODE);
        }
        return dir;
    }

    /**
     * The default data directory: {@code $XDG_STATE_HOME/privface-agent}, else
     * {@code ~/.local/state/privface-agent}. Not the shared temporary directory, where another
     * user could make the path first (or a link at it) and read what the agent writes.
     */
    public static Path defaultDataDir() {
        String state = System.getenv("XDG_STATE_HOME");
        Path base = state != null && !state.isBlank() && Path.of(state).isAbsolute() ? Path.of(state)
                : Path.of(System.getProperty("user.home"), ".local", "state");
        return base.resolve("privface-agent");
    }
}
