package org.privface.agent.enroll;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

import org.privface.privacy.Privacy;
import org.privface.privacy.Release;
import org.privface.privacy.gdp.MuGdp;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every enrollment image has spent over the gateway's whole life, across restarts and policy
 * changes, and the local cap it may never exceed.
 *
 * <p>One entry per image, keyed by the SHA-256 of the image file (never its pixels; the file stays
 * on the gateway). An entry holds the composed ε of every release of that image so far: pure ε
 * releases add, Gaussian releases add μ² (as {@code TrackBudget}'s GAUSSIAN_DP accounting does),
 * and the two combine by basic composition at δ ({@link MuGdp#combinedEpsilon}). It also holds the
 * form of the image's latest releases (mechanism, mode, basis, ε, μ, image release) and how many
 * were made in it, so an image is released again only when the released form really changes.
 * A private basis fitted on the enrollment is charged to every image it was fitted on
 * ({@link #chargeFit}) as one more Gaussian release.
 *
 * <p>A charge is forced to disk before it is granted, and the caller releases only what was
 * granted: a crash can only under-release. The file is append-only, one line per change holding
 * the entry's whole new state and a CRC32C; the last line of an entry wins. A final line without
 * its newline is a charge whose write never returned, so no release was made under it: it is cut
 * off with a warning. Any other damage is an error that names the line, and the file is left as
 * it is: nothing is dropped silently.
 *
 * <p>The cap comes from local configuration only; nothing remote reaches this class.
 */
public final class EnrollmentLedger {
    private static final Logger LOG = LoggerFactory.getLogger(EnrollmentLedger.class);
    static final String HEADER = "# privface enrollment ledger v1: sha256 form releasesInForm releases epsilonPure muSquared refused"
            + " refusedForm first last crc32c";

    /**
     * What a release looks like to the recognizer: the feature space it lands in and its noise.
     * Two releases of one form are interchangeable enrollments.
     */
    public record Form(String mechanism, String mode, String basisId, double epsilonPerFace, double mu, boolean image) {
        /** The form of an image that has paid for a private fit but was never released: no release matches it. */
        public static final Form FIT = new Form("FIT", "private-basis-fit", "-", 0, Double.NaN, false);
        /**
         * The form of an erased image (docs/operations.md, "Forgetting a person"): its file is gone,
         * its entry keeps only the ε it spent, and no release matches it, so it is never released again.
         */
        public static final Form ERASED = new Form("ERASED", "erased", "-", 0, Double.NaN, false);

        public static Form of(Release r) {
            return new Form(r.mechanism(), r.mode(), r.basisId() == null ? "-" : r.basisId(), r.epsilonPerFace(),
                    r.mu(), r.image() != null);
        }

        String encode() {
            return String.join("|", mechanism, mode, basisId, Double.toString(epsilonPerFace), Double.toString(mu),
                    Boolean.toString(image));
        }

        static Form decode(String s) {
            String[] p = s.split("\\|", -1);
            if (p.length != 6) {
                throw new IllegalArgumentException("form '" + s + "' has " + p.length + " fields, expected 6");
            }
            return new Form(p[0], p[1], p[2], Double.parseDouble(p[3]), Double.parseDouble(p[4]), Boolean.parseBoolean(p[5]));
        }

        boolean gaussian() {
            return !Double.isNaN(mu);
        }
    }

    /**
     * One image's account.
     *
     * @param refusedForm the form the cap last refused, so asking again for it is not counted again; null if none
     */
    public record Entry(String sha256, Form form, int releasesInForm, long releases, double epsilonPure, double muSquared,
                        long refused, Form refusedForm, Instant first, Instant last) {
        /** The composed ε of every release so far, at δ = {@link MuGdp#DEFAULT_DELTA} where any was Gaussian. */
        public double composedEpsilon() {
            return MuGdp.combinedEpsilon(epsilonPure, Math.sqrt(muSquared), MuGdp.DEFAULT_DELTA);
        }
    }

    /**
     * The outcome of asking for releases of one image.
     *
     * @param composedAfter the image's composed ε after each granted release; its length is the number granted
     * @param refused       releases refused by this call; 0 when the same form was refused before (not counted twice)
     */
    public record Charge(int requested, double[] composedAfter, int refused, Entry entry) {
        public int granted() {
            return composedAfter.length;
        }
    }

    /** Figures for the status report. */
    public record Stats(int images, long releases, long refused, double maxComposedEpsilon, double totalComposedEpsilon,
                        double cap) {
    }

    private final Path file;
    private final double cap;
    private final Map<String, Entry> entries = new LinkedHashMap<>();
    /** Bytes of whole lines in the file: where the next line goes, and where a failed append is cut back to. */
    private long length;

    private EnrollmentLedger(Path file, double cap) {
        this.file = file;
        this.cap = cap;
    }

    /**
     * Opens (or creates) the ledger.
     *
     * @param cap composed ε an image may reach, from local configuration
     * @throws IllegalStateException when the file is damaged, naming the line; the file is left untouched
     */
    public static EnrollmentLedger open(Path file, double cap) throws IOException {
        Privacy.checkEpsilon(cap);
        EnrollmentLedger l = new EnrollmentLedger(file, cap);
        if (file.getParent() != null) {
            Files.createDirectories(file.getParent());
        }
        if (!Files.exists(file)) {
            l.append(HEADER + "\n");
            ownerOnly(file);
            return l;
        }
        ownerOnly(file);
        byte[] bytes = Files.readAllBytes(file);
        String text = new String(bytes, StandardCharsets.UTF_8);
        int end = text.lastIndexOf('\n') + 1;
        if (end < text.length()) {
            // A torn final line: its charge never returned, so nothing was released under it.
            LOG.warn("enrollment ledger {}: cutting off an incomplete last line ({} bytes) left by an interrupted write",
                    file, text.length() - end);
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(text.substring(0, end).getBytes(StandardCharsets.UTF_8).length);
                ch.force(true);
            }
        }
        l.length = text.substring(0, end).getBytes(StandardCharsets.UTF_8).length;
        List<String> lines = text.substring(0, end).lines().toList();
        if (lines.isEmpty() || !lines.get(0).equals(HEADER)) {
            throw damaged(file, 1, "not an enrollment ledger (unexpected first line); the file was left as it is");
        }
        for (int i = 1; i < lines.size(); i++) {
            try {
                Entry e = parse(lines.get(i));
                l.entries.put(e.sha256(), e);
            } catch (RuntimeException e) {
                throw damaged(file, i + 1, e.getMessage() + "; the file was left as it is, and no enrollment is released"
                        + " until an operator repairs or moves it");
            }
        }
        return l;
    }

    private static IllegalStateException damaged(Path file, int line, String why) {
        return new IllegalStateException("enrollment ledger " + file + " is damaged at line " + line + ": " + why);
    }

    /** Releases of this image made in this form (0 when it was last released in another, or never). */
    public synchronized int releasesInForm(String sha256, Form form) {
        Entry e = entries.get(sha256);
        return e == null || !e.form().equals(form) ? 0 : e.releasesInForm();
    }

    /**
     * Grants as many of {@code wanted} releases of one image in {@code form} as its cap allows, and
     * records them (and any refusal) on disk before returning.
     */
    public synchronized Charge charge(String sha256, Form form, int wanted, Instant now) {
        if (wanted < 1) {
            throw new IllegalArgumentException("wanted must be at least 1, was " + wanted);
        }
        Entry e = entries.get(sha256);
        double pure = e == null ? 0 : e.epsilonPure();
        double muSq = e == null ? 0 : e.muSquared();
        int inForm = e != null && e.form().equals(form) ? e.releasesInForm() : 0;
        double[] after = new double[wanted];
        int granted = 0;
        while (granted < wanted) {
            double p = form.gaussian() ? pure : pure + form.epsilonPerFace();
            double m = form.gaussian() ? muSq + form.mu() * form.mu() : muSq;
            double composed = MuGdp.combinedEpsilon(p, Math.sqrt(m), MuGdp.DEFAULT_DELTA);
            if (composed > cap) {
                break;
            }
            pure = p;
            muSq = m;
            after[granted++] = composed;
        }
        if (granted == 0 && e != null && form.equals(e.refusedForm())) {
            return new Charge(wanted, new double[0], 0, e); // refused and counted before; nothing changed
        }
        int refusedNow = wanted - granted;
        Entry next = new Entry(sha256, granted > 0 || e == null ? form : e.form(), granted > 0 || e == null ? inForm + granted
                : e.releasesInForm(), (e == null ? 0 : e.releases()) + granted, pure, muSq,
                (e == null ? 0 : e.refused()) + refusedNow, refusedNow > 0 ? form : null, e == null ? now : e.first(), now);
        append(format(next) + "\n");
        entries.put(sha256, next);
        return new Charge(wanted, java.util.Arrays.copyOf(after, granted), refusedNow, next);
    }

    /** Whether a μ-GDP fit on this image (a private basis fitted on the enrollment) stays within its cap. */
    public synchronized boolean fitFits(String sha256, double mu) {
        return composedWithFit(entries.get(sha256), mu) <= cap;
    }

    /**
     * Charges a μ-GDP fit that this image takes part in, once, before the fit shapes any release:
     * its μ² adds to the image's Gaussian account as a release's would. The form and the releases
     * made in it stay as they were, so the fit does not cause a re-release.
     *
     * @throws IllegalStateException when the fit would take the image past its cap (ask {@link #fitFits} first)
     */
    public synchronized Entry chargeFit(String sha256, double mu, Instant now) {
        Privacy.checkMu(mu);
        Entry e = entries.get(sha256);
        if (composedWithFit(e, mu) > cap) {
            throw new IllegalStateException("a fit at mu " + mu + " would take image " + sha256 + " past its cap " + cap);
        }
        Entry next = e == null
                ? new Entry(sha256, Form.FIT, 0, 0, 0, mu * mu, 0, null, now, now)
                : new Entry(sha256, e.form(), e.releasesInForm(), e.releases(), e.epsilonPure(), e.muSquared() + mu * mu,
                e.refused(), e.refusedForm(), e.first(), now);
        append(format(next) + "\n");
        entries.put(sha256, next);
        return next;
    }

    private static double composedWithFit(Entry e, double mu) {
        double pure = e == null ? 0 : e.epsilonPure();
        double muSq = (e == null ? 0 : e.muSquared()) + mu * mu;
        return MuGdp.combinedEpsilon(pure, Math.sqrt(muSq), MuGdp.DEFAULT_DELTA);
    }

    /** Whether this image was erased: it is never released again (its spent ε stays in its entry). */
    public synchronized boolean erased(String sha256) {
        Entry e = entries.get(sha256);
        return e != null && Form.ERASED.equals(e.form());
    }

    /**
     * Forgets images of an erased person: each entry keeps only what the ε accounting needs (the
     * file's hash, so the same file enrolled again composes with what it already spent, and the
     * spent ε, releases and refusals), its form becomes {@link Form#ERASED} and its times the
     * erasure's. The file is rewritten whole (temporary file, fsync, atomic rename), so no earlier
     * line of any erased image, with its forms and times, survives in it.
     *
     * @return the entries changed
     */
    public synchronized int erase(java.util.Collection<String> sha256s, Instant now) throws IOException {
        Map<String, Entry> next = new LinkedHashMap<>(entries);
        int changed = 0;
        for (String h : sha256s) {
            Entry e = next.get(h);
            if (e != null && !Form.ERASED.equals(e.form())) {
                next.put(h, new Entry(h, Form.ERASED, 0, e.releases(), e.epsilonPure(), e.muSquared(), e.refused(), null,
                        now, now));
                changed++;
            }
        }
        if (changed == 0) {
            return 0;
        }
        StringBuilder b = new StringBuilder(HEADER).append('\n');
        next.values().forEach(e -> b.append(format(e)).append('\n'));
        byte[] bytes = b.toString().getBytes(StandardCharsets.UTF_8);
        Path tmp = file.resolveSibling(file.getFileName() + ".erasing");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            ByteBuffer buf = ByteBuffer.wrap(bytes);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        if (file.toAbsolutePath().getParent() != null) {
            try (FileChannel dir = FileChannel.open(file.toAbsolutePath().getParent(), StandardOpenOption.READ)) {
                dir.force(true);
            } catch (IOException e) {
                // some file systems cannot sync a directory; the rename is still atomic
            }
        }
        entries.clear();
        entries.putAll(next);
        length = bytes.length;
        return changed;
    }

    public synchronized Entry entry(String sha256) {
        return entries.get(sha256);
    }

    public double cap() {
        return cap;
    }

    public Path file() {
        return file;
    }

    public synchronized Stats stats() {
        double max = 0;
        double total = 0;
        long releases = 0;
        long refused = 0;
        for (Entry e : entries.values()) {
            double c = e.composedEpsilon();
            max = Math.max(max, c);
            total += c;
            releases += e.releases();
            refused += e.refused();
        }
        return new Stats(entries.size(), releases, refused, max, total, cap);
    }

    /** SHA-256 of a file's bytes, in hex: the key of its image. */
    public static String sha256(Path file) throws IOException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK lacks SHA-256", e);
        }
    }

    /** 0600 where the file system is POSIX: the ledger names the enrolled people's images. */
    private static void ownerOnly(Path file) throws IOException {
        if (file.getFileSystem().supportedFileAttributeViews().contains("posix")) {
            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        }
    }

    /**
     * Writes a whole line after the last whole line, or throws and grants nothing. A filling disk
     * stores part of a write() and refuses the rest: the part is cut off again, here or, where that
     * fails too, before the next append, so no line is ever written after a torn one.
     */
    private void append(String line) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            if (ch.size() > length) {
                ch.truncate(length);
            }
            ByteBuffer b = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
            long at = length;
            while (b.hasRemaining()) {
                at += ch.write(b, at);
            }
            ch.force(true);
            length = at;
        } catch (IOException ex) {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
                ch.truncate(length);
            } catch (IOException | RuntimeException again) {
                ex.addSuppressed(again);
            }
            throw new UncheckedIOException("cannot write the enrollment ledger " + file + ": nothing is granted", ex);
        }
    }

    static String format(Entry e) {
        String body = String.join(" ", e.sha256(), e.form().encode(), Integer.toString(e.releasesInForm()),
                Long.toString(e.releases()), Double.toString(e.epsilonPure()), Double.toString(e.muSquared()),
                Long.toString(e.refused()), e.refusedForm() == null ? "-" : e.refusedForm().encode(), e.first().toString(),
                e.last().toString());
        return body + " " + crc(body);
    }

    static Entry parse(String line) {
        int cut = line.lastIndexOf(' ');
        if (cut < 0) {
            throw new IllegalArgumentException("no checksum");
        }
        String body = line.substring(0, cut);
        if (!crc(body).equals(line.substring(cut + 1))) {
            throw new IllegalArgumentException("checksum mismatch");
        }
        String[] f = body.split(" ", -1);
        if (f.length != 10 || !f[0].matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("expected 10 fields starting with a SHA-256, got " + f.length);
        }
        Entry e = new Entry(f[0], Form.decode(f[1]), Integer.parseInt(f[2]), Long.parseLong(f[3]), Double.parseDouble(f[4]),
                Double.parseDouble(f[5]), Long.parseLong(f[6]), f[7].equals("-") ? null : Form.decode(f[7]),
                Instant.parse(f[8]), Instant.parse(f[9]));
        if (!(e.epsilonPure() >= 0) || !(e.muSquared() >= 0) || e.releases() < 0 || e.refused() < 0 || e.releasesInForm() < 0) {
            throw new IllegalArgumentException("negative or NaN figures");
        }
        return e;
    }

    private static String crc(String s) {
        CRC32C c = new CRC32C();
        c.update(s.getBytes(StandardCharsets.UTF_8));
        return String.format("%08x", c.getValue());
    }
}
