package org.privface.agent.link;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import org.privface.agent.track.TrackBudget;

/**
 * The gateway's budget per person: links each new track to earlier appearances on any of the
 * gateway's cameras by the cosine of their raw embeddings, and charges every release to the linked
 * person, so a second camera, a return, a reconnect or a second box spend from what is left.
 *
 * <p>A person's score against a new appearance is the mean of its {@code matches} highest cosines
 * (all of them while it holds fewer): with {@code matches} 2, one stray look-alike appearance is not
 * enough to join a person seen twice, which is what keeps strangers apart in a crowd
 * ({@code docs/privacy.md}, "The budget per person").
 *
 * <p>The embeddings never leave the gateway: they live here and, with a directory, in one file per
 * person ({@link PersonFiles}) only as long as the window needs them, so a restart keeps the links
 * and the spend; then they are wiped. A person's budget window starts at its first charge, as a
 * track's does ({@link TrackBudget}); its embeddings are kept until that window and the window
 * after its last appearance have both passed.
 *
 * <p>A charge is recorded (and, with a directory, written) before it is returned, so a crash can only
 * under-release; a charge that cannot be written is refused. Composition is the track ledger's
 * ({@link TrackBudget#compose}), in its units. Thread-safe: all cameras of a gateway share one.
 */
public final class PersonLedger {

    public static final int DEFAULT_MAX_PERSONS = 4096;
    /** Embeddings kept per person: the most recent; enough for a few cameras' views. */
    public static final int DEFAULT_MAX_APPEARANCES = 16;

    /** Where a new appearance went: an existing person ({@code linked}) or a new one. */
    public record Link(String personId, boolean linked, double similarity) {
        @Override
        public String toString() {
            return "Link[" + personId + (linked ? ", linked" : ", new") + "]";
        }
    }

    /**
     * One charge to a person.
     *
     * @param epsilonSpentInWindow the person's composed ε in its window, this release included
     * @param appearances          appearances linked to the person that are still held
     */
    public record Charge(String personId, double epsilonSpentInWindow, double epsilonBudget, Instant windowStart,
                         int appearances) {
    }

    /**
     * Counters since start and the state now.
     *
     * @param linked           appearances that joined an earlier person
     * @param refusals         links and charges refused, {@code unrecorded} included
     * @param unrecorded       links and charges refused because the ledger could not be written (a full or
     *                         failing disk): their faces were withheld
     * @param maxPersonEpsilon the most ε any person has spent in its current window
     */
    public record Stats(long appearances, long linked, long charges, long refusals, long unrecorded, int persons,
                        double maxPersonEpsilon, double threshold) {
    }

    /** One appearance's unit-length embedding; never logged, never published. */
    record Appearance(String camera, Instant seenAt, float[] embedding) {
        @Override
        public String toString() {
            return "Appearance[" + camera + ", " + seenAt + "]";
        }
    }

    /** A person's state; what {@link PersonFiles} keeps on disk. */
    static final class Person {
        final String id;
        final List<Appearance> appearances = new ArrayList<>();
        Instant windowStart;
        Duration windowLength;
        /** Ledger units spent in the window (ε, or μ² under GAUSSIAN_DP). */
        double units;
        /** ε of {@link #units}, as the track ledger states it. */
        double epsilon;
        int releases;
        TrackBudget.Accounting accounting;

        Person(String id) {
            this.id = id;
        }

        Instant lastSeen() {
            return appearances.isEmpty() ? Instant.EPOCH : appearances.get(appearances.size() - 1).seenAt();
        }

        boolean windowElapsed(Instant now) {
            return windowStart != null && !now.isBefore(windowStart.plus(windowLength));
        }
    }

    private final double threshold;
    /** Appearances a person's score averages: 1 is the best match alone. */
    private final int matches;
    private final int maxPersons;
    private final PersonFiles files;
    private final Map<String, Person> persons = new LinkedHashMap<>();
    /** How long embeddings are kept after an appearance: the longest window any charge used. */
    private Duration retention;
    private long appearances;
    private long linked;
    private long charges;
    private long refusals;
    private long unrecorded;

    private PersonLedger(double threshold, int matches, Duration window, int maxPersons, PersonFiles files) {
        if (!(threshold > -1 && threshold < 1)) {
            throw new IllegalArgumentException("link threshold must be a cosine in (-1, 1), was " + threshold);
        }
        if (matches < 1 || matches > DEFAULT_MAX_APPEARANCES) {
            throw new IllegalArgumentException("link matches must be in [1, " + DEFAULT_MAX_APPEARANCES + "], was " + matches);
        }
        this.matches = matches;
        Objects.requireNonNull(window, "window");
        if (window.isNegative() || window.isZero()) {
            throw new IllegalArgumentException("window must be positive, was " + window);
        }
        if (maxPersons < 1) {
            throw new IllegalArgumentException("maxPersons must be >= 1, was " + maxPersons);
        }
        this.threshold = threshold;
        this.retention = window;
        this.maxPersons = maxPersons;
        this.files = files;
    }

    /** A ledger in memory only: a restart forgets every link and spend. */
    public static PersonLedger inMemory(double threshold, Duration window) {
        return inMemory(threshold, 1, window);
    }

    /** In memory, scoring a person by the mean of its {@code matches} best cosines. */
    public static PersonLedger inMemory(double threshold, int matches, Duration window) {
        return new PersonLedger(threshold, matches, window, DEFAULT_MAX_PERSONS, null);
    }

    static PersonLedger inMemory(double threshold, Duration window, int maxPersons) {
        return new PersonLedger(threshold, 1, window, maxPersons, null);
    }

    /**
     * A ledger kept in {@code dir} (made private to the agent's user where the file system allows):
     * reads what an earlier run left there and wipes what has expired by {@code now}.
     */
    public static PersonLedger open(Path dir, double threshold, Duration window, Instant now) throws IOException {
        return open(dir, threshold, 1, window, now);
    }

    /** As {@link #open(Path, double, Duration, Instant)}, scoring a person by the mean of its {@code matches} best cosines. */
    public static PersonLedger open(Path dir, double threshold, int matches, Duration window, Instant now) throws IOException {
        PersonLedger l = new PersonLedger(threshold, matches, window, DEFAULT_MAX_PERSONS, PersonFiles.open(dir));
        for (Person p : l.files.readAll()) {
            if (p.windowLength != null && p.windowLength.compareTo(l.retention) > 0) {
                l.retention = p.windowLength;
            }
            l.persons.put(p.id, p);
        }
        l.expire(now);
        return l;
    }

    public double threshold() {
        return threshold;
    }

    public int matches() {
        return matches;
    }

    /** Links a new appearance with no person ruled out; see {@link #link(String, double[], Instant, Set)}. */
    public Optional<Link> link(String camera, double[] embedding, Instant now) {
        return link(camera, embedding, now, Set.of());
    }

    /**
     * Links a new appearance by its raw embedding: to the held person with the highest score (the mean
     * of its {@link #matches()} best cosines) if that reaches the threshold, else to a new person.
     *
     * @param elsewhere persons the appearance cannot be (seen on another camera or in another track at the
     *                  same time); they are not candidates
     * @return empty when no person can be held (the ledger is full of live windows): the appearance
     *         must then release nothing, as a fresh entry could be someone who already spent
     */
    public synchronized Optional<Link> link(String camera, double[] embedding, Instant now, Set<String> elsewhere) {
        Objects.requireNonNull(camera, "camera");
        Objects.requireNonNull(now, "now");
        float[] e = unit(embedding);
        now = ceilMillis(now);
        expire(now);
        Person best = null;
        double bestSim = Double.NEGATIVE_INFINITY;
        for (Person p : persons.values()) {
            if (elsewhere.contains(p.id)) {
                continue;
            }
            double s = score(p, e);
            if (s > bestSim) {
                bestSim = s;
                best = p;
            }
        }
        boolean match = best != null && bestSim >= threshold;
        Person p = match ? best : null;
        if (p == null) {
            if (persons.size() >= maxPersons) {
                refusals++;
                return Optional.empty();
            }
            p = new Person(UUID.randomUUID().toString());
        }
        p.appearances.add(new Appearance(camera, now, e));
        if (p.appearances.size() > DEFAULT_MAX_APPEARANCES) {
            p.appearances.remove(0);
        }
        if (!write(p)) {
            p.appearances.remove(p.appearances.size() - 1);
            refusals++;
            return Optional.empty();
        }
        persons.putIfAbsent(p.id, p);
        appearances++;
        if (match) {
            linked++;
        }
        return Optional.of(new Link(p.id, match, best == null ? Double.NaN : bestSim));
    }

    /** The person's score: the mean of its {@link #matches} highest cosines to {@code e}. */
    private double score(Person p, float[] e) {
        int k = Math.min(matches, p.appearances.size());
        double[] top = new double[k];
        java.util.Arrays.fill(top, Double.NEGATIVE_INFINITY);
        for (Appearance a : p.appearances) {
            double s = dot(e, a.embedding());
            for (int i = 0; i < k; i++) {
                if (s > top[i]) {
                    System.arraycopy(top, i, top, i + 1, k - i - 1);
                    top[i] = s;
                    break;
                }
            }
        }
        double sum = 0;
        for (double s : top) {
            sum += s;
        }
        return k == 0 ? Double.NEGATIVE_INFINITY : sum / k;
    }

    /**
     * The highest cosine of {@code embedding} to any appearance of the person: whether a later face of
     * a linked track still agrees with it. NaN when the person is no longer held.
     */
    public synchronized double similarity(String personId, double[] embedding) {
        Person p = persons.get(personId);
        if (p == null) {
            return Double.NaN;
        }
        float[] e = unit(embedding);
        double best = Double.NEGATIVE_INFINITY;
        for (Appearance a : p.appearances) {
            best = Math.max(best, dot(e, a.embedding()));
        }
        return best;
    }

    /** Whether the person could take one more release of {@code budget} now (a later charge may still lose a race). */
    public synchronized boolean hasRoom(String personId, TrackBudget budget, Instant now) {
        Person p = persons.get(personId);
        return p != null && fits(p, budget, now);
    }

    /**
     * Charges one release of {@code budget} (the camera's track ledger under the policy in force) to
     * the person. The policy's ε per track is the cap per person per window.
     *
     * @return empty when the person has no room left, or its spend cannot be recorded
     */
    public synchronized Optional<Charge> charge(String personId, TrackBudget budget, Instant now) {
        now = ceilMillis(now);
        Person p = persons.get(personId);
        if (p == null || !fits(p, budget, now)) {
            refusals++;
            return Optional.empty();
        }
        Instant windowStart = p.windowStart;
        Duration windowLength = p.windowLength;
        double units = p.units;
        double epsilon = p.epsilon;
        int releases = p.releases;
        TrackBudget.Accounting accounting = p.accounting;
        if (p.windowStart == null || p.windowElapsed(now)) {
            p.windowStart = now;
            p.windowLength = budget.window();
            p.units = 0;
            p.releases = 0;
            p.accounting = budget.accounting();
        }
        p.units = TrackBudget.compose(p.units, budget.unitsPerRelease());
        p.releases++;
        p.epsilon = budget.epsilonOfUnits(p.units);
        if (!write(p)) {
            p.windowStart = windowStart;
            p.windowLength = windowLength;
            p.units = units;
            p.epsilon = epsilon;
            p.releases = releases;
            p.accounting = accounting;
            refusals++;
            return Optional.empty();
        }
        if (budget.window().compareTo(retention) > 0) {
            retention = budget.window();
        }
        charges++;
        return Optional.of(new Charge(p.id, p.epsilon, budget.epsilonTrack(), p.windowStart, p.appearances.size()));
    }

    private static boolean fits(Person p, TrackBudget budget, Instant now) {
        boolean fresh = p.windowStart == null || p.windowElapsed(now);
        if (!fresh && p.accounting != budget.accounting()) {
            return false; // units of two accountings do not add; wait for the window to end
        }
        double spent = fresh ? 0 : p.units;
        int index = fresh ? 1 : p.releases + 1;
        return TrackBudget.compose(spent, budget.unitsPerRelease()) <= budget.capUnits() + budget.roundingSlackFor(index);
    }

    /**
     * Drops, and wipes from disk, every person whose budget window has ended (or never began) and
     * whose last appearance is older than the retention window.
     */
    public synchronized void expire(Instant now) {
        for (Iterator<Person> it = persons.values().iterator(); it.hasNext(); ) {
            Person p = it.next();
            boolean budgetDone = p.windowStart == null || p.windowElapsed(now);
            boolean seenLongAgo = !now.isBefore(p.lastSeen().plus(retention));
            if (budgetDone && seenLongAgo) {
                it.remove();
                if (files != null) {
                    try {
                        files.wipe(p.id);
                    } catch (IOException e) {
                        // Kept on disk, it is wiped when the ledger is next opened (it has expired by then too).
                        org.slf4j.LoggerFactory.getLogger(PersonLedger.class).error(
                                "an expired person's file could not be wiped yet: {}", e.toString());
                    }
                }
            }
        }
    }

    public synchronized Stats stats(Instant now) {
        double max = 0;
        for (Person p : persons.values()) {
            if (p.windowStart != null && !p.windowElapsed(now)) {
                max = Math.max(max, p.epsilon);
            }
        }
        return new Stats(appearances, linked, charges, refusals, unrecorded, persons.size(), max, threshold);
    }

    /**
     * What the persons held have spent in their windows still open at {@code now}: releases and
     * composed ε, summed over persons, and the most one person spent. What a restart must find again.
     */
    public record Spent(int persons, long releases, double epsilon, double maxPersonEpsilon) {
    }

    public synchronized Spent spent(Instant now) {
        long releases = 0;
        double epsilon = 0;
        double max = 0;
        for (Person p : persons.values()) {
            if (p.windowStart != null && !p.windowElapsed(now)) {
                releases += p.releases;
                epsilon += p.epsilon;
                max = Math.max(max, p.epsilon);
            }
        }
        return new Spent(persons.size(), releases, epsilon, max);
    }

    /** Persons held now (for tests and the status report). */
    public synchronized int persons() {
        return persons.size();
    }

    private boolean write(Person p) {
        if (files == null) {
            return true;
        }
        try {
            files.write(p);
            return true;
        } catch (IOException e) {
            // Without the record a restart would forget this person: refuse rather than release.
            unrecorded++;
            org.slf4j.LoggerFactory.getLogger(PersonLedger.class).error("person ledger not written, the face is withheld: {}",
                    e.toString());
            return false;
        }
    }

    /** Times as the files keep them, rounded up, so a window read back never ends earlier than it did. */
    static Instant ceilMillis(Instant t) {
        Instant down = t.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
        return down.equals(t) ? t : down.plusMillis(1);
    }

    static float[] unit(double[] v) {
        Objects.requireNonNull(v, "embedding");
        double n = 0;
        for (double x : v) {
            if (!Double.isFinite(x)) {
                throw new IllegalArgumentException("embedding has a non-finite coordinate");
            }
            n += x * x;
        }
        if (n == 0) {
            throw new IllegalArgumentException("embedding is zero");
        }
        double inv = 1 / Math.sqrt(n);
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) (v[i] * inv);
        }
        return out;
    }

    static double dot(float[] a, float[] b) {
        if (a.length != b.length) {
            return Double.NEGATIVE_INFINITY; // another network's embedding: never the same person
        }
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += (double) a[i] * b[i];
        }
        return s;
    }
}
