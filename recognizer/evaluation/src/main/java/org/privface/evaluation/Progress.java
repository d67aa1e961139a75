package org.privface.evaluation;

import java.io.PrintStream;

/** A one-line text progress bar with an ETA, redrawn in place on a terminal. */
public final class Progress {
    private final PrintStream out;
    private final int total;
    private final long start = System.nanoTime();
    private int done;

    public Progress(PrintStream out, int total) {
        this.out = out;
        this.total = total;
    }

    public synchronized void step(String what) {
        done++;
        int width = 30;
        // A step beyond the total (or a total of 0) fills the bar rather than making its padding negative.
        int filled = total <= 0 ? width : (int) Math.min(width, Math.round(width * done / (double) total));
        double elapsed = (System.nanoTime() - start) / 1e9;
        double eta = elapsed / done * Math.max(0, total - done);
        out.printf("\r[%s%s] %d/%d  %-40.40s  eta %4.0fs", "#".repeat(filled), " ".repeat(width - filled), done, total,
                what, eta);
        if (done == total) {
            out.printf("%n");
        }
        out.flush();
    }
}
