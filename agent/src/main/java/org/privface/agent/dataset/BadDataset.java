package org.privface.agent.dataset;

import java.io.IOException;

/**
 * A data-set folder that cannot be used as it is: the message names the file or folder and says
 * why. Commands that take a data-set folder end with that message and exit status 2, without a
 * stack trace ({@link #exitOnError}).
 */
public final class BadDataset extends IOException {
    public static final int EXIT_STATUS = 2;

    public BadDataset(String message) {
        super(message);
    }

    public BadDataset(String message, Throwable cause) {
        super(message, cause);
    }

    /** A file that could not be read or decoded, named in full, with the reader's reason. */
    public static BadDataset unusable(java.nio.file.Path file, Exception e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        for (String prefix : new String[] {file + ": ", file.getFileName() + ": "}) {
            if (m.startsWith(prefix)) {
                m = m.substring(prefix.length()); // the readers name the file too
                break;
            }
        }
        return new BadDataset(file + ": cannot be used: " + m, e);
    }

    /** A command's body. */
    public interface Command {
        void run() throws Exception;
    }

    /** Runs a command's main body; a bad data set ends it with the message on stderr and status 2. */
    public static void exitOnError(Command command) throws Exception {
        try {
            command.run();
        } catch (BadDataset e) {
            System.out.flush();
            System.err.println();
            System.err.println("bad data set: " + e.getMessage());
            System.exit(EXIT_STATUS);
        }
    }
}
