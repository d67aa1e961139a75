package org.privface.agent.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.privacy.gdp.MuGdp;
import org.privface.agent.track.BudgetPolicy;
import org.privface.agent.track.TrackBudget;

class PersonLedgerTest {
    static final Duration WINDOW = Duration.ofMinutes(10);
    static final Instant T0 = Instant.parse("2026-01-01T10:00:00Z");

    /** A unit vector along axis {@code i} of 128, tilted towards axis {@code j} by {@code tilt}. */
    static double[] face(int i, int j, double tilt) {
        double[] v = new double[128];
        v[i] = 1;
        v[j] += tilt;
        return v;
    }

    @Test
    void linksTheSameFaceAcrossCamerasAndNotAnother() {
        PersonLedger l = PersonLedger.inMemory(0.5, WINDOW);
        PersonLedger.Link a = l.link("cam-1", face(0, 1, 0.1), T0).orElseThrow();
        PersonLedger.Link b = l.link("cam-2", face(0, 2, 0.3), T0.plusSeconds(5)).orElseThrow();
        PersonLedger.Link c = l.link("cam-2", face(3, 4, 0.1), T0.plusSeconds(6)).orElseThrow();
        assertFalse(a.linked());
        assertTrue(b.linked());
        assertEquals(a.personId(), b.personId());
        assertFalse(c.linked(), "a different face must not join the first person");
        assertNotEquals(a.personId(), c.personId());
        PersonLedger.Stats s = l.stats(T0.plusSeconds(7));
        assertEquals(3, s.appearances());
        assertEquals(1, s.linked());
        assertEquals(2, s.persons());
    }

    @Test
    void belowTheThresholdIsANewPerson() {
        PersonLedger l = PersonLedger.inMemory(0.9, WINDOW);
        String a = l.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        // cosine 1/√2 ≈ 0.71 < 0.9
        PersonLedger.Link b = l.link("cam-1", face(0, 1, 1), T0.plusSeconds(1)).orElseThrow();
        assertFalse(b.linked());
        assertNotEquals(a, b.personId());
        assertEquals(Math.sqrt(0.5), b.similarity(), 1e-6);
    }

    /** A person seen twice is joined on the mean of its two best matches: one stray look-alike appearance is not enough. */
    @Test
    void theMeanOfTwoBestMatchesKeepsALookAlikeOut() {
        double[] a1 = face(0, 1, 0);
        double[] a2 = face(0, 2, 0.3);
        double[] lookAlike = face(0, 3, 1.0); // cosine 0.707 to a1, 0.677 to a2
        double[] again = face(0, 2, 0.1);
        for (int matches : new int[] {1, 2}) {
            PersonLedger l = PersonLedger.inMemory(0.7, matches, WINDOW);
            String p = l.link("cam-1", a1, T0).orElseThrow().personId();
            assertEquals(p, l.link("cam-2", a2, T0.plusSeconds(20)).orElseThrow().personId());
            PersonLedger.Link s = l.link("cam-3", lookAlike, T0.plusSeconds(40)).orElseThrow();
            assertEquals(matches == 1, s.linked(), "matches " + matches);
            if (matches == 2) {
                assertEquals((Math.sqrt(0.5) + 1 / Math.sqrt(2 * 1.09)) / 2, s.similarity(), 1e-6);
            }
            assertEquals(p, l.link("cam-3", again, T0.plusSeconds(60)).orElseThrow().personId(),
                    "the person itself still matches both");
        }
    }

    @Test
    void aPersonSeenElsewhereAtTheSameTimeIsNoCandidate() {
        PersonLedger l = PersonLedger.inMemory(0.5, WINDOW);
        String p = l.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        PersonLedger.Link other = l.link("cam-2", face(0, 1, 0.1), T0.plusSeconds(1), java.util.Set.of(p)).orElseThrow();
        assertFalse(other.linked());
        assertNotEquals(p, other.personId());
        assertEquals(1, l.similarity(p, face(0, 1, 0)), 1e-6);
        assertTrue(Double.isNaN(l.similarity("0b7c3d5e-0000-4000-8000-000000000000", face(0, 1, 0))));
    }

    @Test
    void matchesOutsideTheHeldAppearancesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> PersonLedger.inMemory(0.5, 0, WINDOW));
        assertThrows(IllegalArgumentException.class,
                () -> PersonLedger.inMemory(0.5, PersonLedger.DEFAULT_MAX_APPEARANCES + 1, WINDOW));
    }

    /** Today's accounting gives each camera's track a fresh ε; the person's ledger lets the first spend it all. */
    @Test
    void aSecondCameraSpendsFromWhatIsLeft() {
        PersonLedger l = PersonLedger.inMemory(0.5, WINDOW);
        TrackBudget cam1 = new TrackBudget(BudgetPolicy.once(), 2.0, WINDOW);
        TrackBudget cam2 = new TrackBudget(BudgetPolicy.once(), 2.0, WINDOW);
        String p = l.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        assertTrue(cam1.request("trk-a", 1, T0).isPresent());
        PersonLedger.Charge c = l.charge(p, cam1, T0).orElseThrow();
        assertEquals(2.0, c.epsilonSpentInWindow(), 1e-12);
        assertEquals(2.0, c.epsilonBudget(), 1e-12);

        String q = l.link("cam-2", face(0, 1, 0.05), T0.plusSeconds(30)).orElseThrow().personId();
        assertEquals(p, q);
        assertTrue(cam2.request("trk-b", 1, T0.plusSeconds(30)).isPresent(), "the track ledger alone grants again");
        assertFalse(l.hasRoom(q, cam2, T0.plusSeconds(30)));
        assertTrue(l.charge(q, cam2, T0.plusSeconds(30)).isEmpty(), "the person has spent its ε");
        assertEquals(2.0, l.stats(T0.plusSeconds(31)).maxPersonEpsilon(), 1e-12);
    }

    @Test
    void maxKSharesTheCapAcrossTracksAndRenewsAfterTheWindow() {
        PersonLedger l = PersonLedger.inMemory(0.5, WINDOW);
        TrackBudget budget = new TrackBudget(BudgetPolicy.maxK(3), 1.5, WINDOW);
        String p = l.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        assertEquals(0.5, l.charge(p, budget, T0).orElseThrow().epsilonSpentInWindow(), 1e-12);
        assertEquals(1.0, l.charge(p, budget, T0.plusSeconds(1)).orElseThrow().epsilonSpentInWindow(), 1e-12);
        // a return within the window, as a new track: one share left, then none
        String again = l.link("cam-3", face(0, 1, 0.1), T0.plusSeconds(300)).orElseThrow().personId();
        assertEquals(p, again);
        PersonLedger.Charge third = l.charge(p, budget, T0.plusSeconds(300)).orElseThrow();
        assertEquals(1.5, third.epsilonSpentInWindow(), 1e-12);
        assertEquals(2, third.appearances());
        assertTrue(l.charge(p, budget, T0.plusSeconds(301)).isEmpty());
        // the window began at the first charge; once it has passed the person has a fresh allowance
        assertTrue(l.charge(p, budget, T0.plus(WINDOW).minusMillis(1)).isEmpty());
        PersonLedger.Charge fresh = l.charge(p, budget, T0.plus(WINDOW)).orElseThrow();
        assertEquals(0.5, fresh.epsilonSpentInWindow(), 1e-12);
        assertEquals(T0.plus(WINDOW), fresh.windowStart());
    }

    @Test
    void gaussianReleasesComposeInMuSquared() {
        PersonLedger l = PersonLedger.inMemory(0.5, WINDOW);
        TrackBudget gdp = new TrackBudget(BudgetPolicy.maxK(4), 2.0, WINDOW, 16, TrackBudget.Accounting.GAUSSIAN_DP,
                MuGdp.DEFAULT_DELTA);
        String p = l.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        double last = 0;
        for (int i = 0; i < 4; i++) {
            last = l.charge(p, gdp, T0.plusSeconds(i)).orElseThrow().epsilonSpentInWindow();
        }
        assertEquals(2.0, last, 1e-9);
        assertTrue(l.charge(p, gdp, T0.plusSeconds(9)).isEmpty());
        // a pure-ε charge into a μ² window cannot be added to it: refused until the window ends
        PersonLedger m = PersonLedger.inMemory(0.5, WINDOW);
        String q = m.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        assertTrue(m.charge(q, gdp, T0).isPresent());
        assertTrue(m.charge(q, new TrackBudget(BudgetPolicy.maxK(4), 2.0, WINDOW), T0.plusSeconds(1)).isEmpty());
    }

    @Test
    void aRestartKeepsLinksAndSpend(@TempDir Path dir) throws IOException {
        TrackBudget budget = new TrackBudget(BudgetPolicy.once(), 1.0, WINDOW);
        PersonLedger before = PersonLedger.open(dir, 0.5, WINDOW, T0);
        String p = before.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        assertTrue(before.charge(p, budget, T0.plusMillis(1500)).isPresent());

        PersonLedger after = PersonLedger.open(dir, 0.5, WINDOW, T0.plusSeconds(60));
        PersonLedger.Link l = after.link("cam-2", face(0, 1, 0.1), T0.plusSeconds(61)).orElseThrow();
        assertTrue(l.linked());
        assertEquals(p, l.personId());
        assertTrue(after.charge(p, budget, T0.plusSeconds(61)).isEmpty(), "the spend survived the restart");
        assertEquals(1.0, after.stats(T0.plusSeconds(62)).maxPersonEpsilon(), 1e-12);
    }

    @Test
    void expiredPersonsAreWipedFromMemoryAndDisk(@TempDir Path dir) throws IOException {
        TrackBudget budget = new TrackBudget(BudgetPolicy.once(), 1.0, WINDOW);
        PersonLedger l = PersonLedger.open(dir, 0.5, WINDOW, T0);
        String p = l.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        l.charge(p, budget, T0.plusSeconds(20)).orElseThrow();
        l.link("cam-1", face(5, 6, 0), T0.plusSeconds(30)).orElseThrow();
        assertEquals(2, files(dir).size());
        byte[] raw = Files.readAllBytes(files(dir).get(0));
        assertTrue(raw.length > 128 * 4, "the embedding is on disk while the window needs it");

        // the first person's window runs to T0+20s+10min, so it is still held after its appearance's 10 minutes
        l.expire(T0.plus(WINDOW).plusSeconds(10));
        assertEquals(2, l.persons());
        l.expire(T0.plus(WINDOW).plusSeconds(30));
        assertEquals(0, l.persons());
        assertEquals(List.of(), files(dir), "nothing of an expired person stays on disk");

        // the same face after expiry is a new person, and a restart finds nothing
        assertFalse(l.link("cam-1", face(0, 1, 0), T0.plus(WINDOW).plusSeconds(40)).orElseThrow().linked());
        PersonLedger reopened = PersonLedger.open(dir, 0.5, WINDOW, T0.plus(WINDOW.multipliedBy(3)));
        assertEquals(0, reopened.persons());
        assertEquals(List.of(), files(dir));
    }

    @Test
    void aHalfWrittenFileIsWipedOnOpen(@TempDir Path dir) throws IOException {
        Path tmp = dir.resolve("0b7c3d5e-0000-4000-8000-000000000000.person.tmp");
        Files.write(tmp, new byte[] {1, 2, 3});
        PersonLedger.open(dir, 0.5, WINDOW, T0);
        assertFalse(Files.exists(tmp));
    }

    @Test
    void anUnreadablePersonFileStopsTheLedgerFromOpeningAndIsKept(@TempDir Path dir) throws IOException {
        Path bad = dir.resolve("0b7c3d5e-0000-4000-8000-000000000000.person");
        Files.write(bad, new byte[] {0x50, 0x46});
        IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
                () -> PersonLedger.open(dir, 0.5, WINDOW, T0));
        assertTrue(e.getMessage().contains(bad.getFileName().toString()), e.getMessage());
        assertTrue(Files.exists(bad), "a spend it cannot read is not deleted");
    }

    @Test
    void aFullLedgerRefusesNewPersons() {
        PersonLedger l = PersonLedger.inMemory(0.99, WINDOW, 8);
        for (int i = 0; i < 8; i++) {
            assertTrue(l.link("cam-1", face(i, i, 0), T0).isPresent());
        }
        double[] other = face(20, 21, 1);
        assertTrue(l.link("cam-1", other, T0).isEmpty());
        assertTrue(l.link("cam-1", other, T0.plus(WINDOW)).isPresent(), "expired persons make room");
    }

    @Test
    void personFilesAreTheAgentsUsersOnly(@TempDir Path root) throws IOException {
        Path dir = root.resolve("persons");
        Files.createDirectories(dir);
        // Made by someone else with a wide mode: tightened at open, not trusted as found.
        Files.setPosixFilePermissions(dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        PersonLedger l = PersonLedger.open(dir, 0.5, WINDOW, T0);
        String p = l.link("cam-1", face(0, 1, 0), T0).orElseThrow().personId();
        assertTrue(l.charge(p, new TrackBudget(BudgetPolicy.once(), 1.0, WINDOW), T0).isPresent());
        assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
        List<Path> files = files(dir);
        assertEquals(1, files.size());
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(files.get(0))),
                "a file of raw embeddings must be readable by the agent's user only");
    }

    @Test
    void aSymlinkedPersonsDirectoryIsRefused(@TempDir Path root) throws IOException {
        Path elsewhere = Files.createDirectories(root.resolve("shared-mount"));
        Path persons = Files.createSymbolicLink(root.resolve("persons"), elsewhere);
        IOException e = assertThrows(IOException.class, () -> PersonLedger.open(persons, 0.5, WINDOW, T0));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
        assertEquals(List.of(), files(elsewhere), "nothing may be written where the link points");
    }

    @Test
    void aSymlinkAmongThePersonFilesIsRefused(@TempDir Path root) throws IOException {
        Path dir = Files.createDirectories(root.resolve("persons"));
        Path target = Files.writeString(root.resolve("victim"), "not the agent's");
        Files.createSymbolicLink(dir.resolve("00000000-0000-0000-0000-000000000000.person.tmp"), target);
        assertThrows(IOException.class, () -> PersonLedger.open(dir, 0.5, WINDOW, T0));
        assertEquals("not the agent's", Files.readString(target), "a wipe must not follow a link to another file");
    }

    @Test
    void theDefaultDataDirectoryIsNotTheSharedTemporaryOne() {
        Path d = org.privface.agent.store.PrivateDirectory.defaultDataDir();
        assertFalse(d.startsWith(Path.of(System.getProperty("java.io.tmpdir"))), d.toString());
        assertFalse(d.startsWith(Path.of("/tmp")), d.toString());
    }

    private static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }
}
