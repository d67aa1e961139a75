package org.privface.agent.enroll;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.privacy.gdp.MuGdp;

class EnrollmentLedgerTest {
    static final String A = "a".repeat(64);
    static final String B = "b".repeat(64);
    static final EnrollmentLedger.Form PEEP16 = new EnrollmentLedger.Form("PEEP", "l1-clip", "pca-1", 16, Double.NaN, false);
    static final EnrollmentLedger.Form PEEP8 = new EnrollmentLedger.Form("PEEP", "l1-clip", "pca-1", 8, Double.NaN, false);
    static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void theLedgerFileIsTheAgentsUsersOnly(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("l.txt");
        EnrollmentLedger.open(f, 100);
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(f)));
        Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        EnrollmentLedger.open(f, 100);
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(f)),
                "a ledger found readable by others is tightened at open");
    }

    @Test
    void pureReleasesAddAndTheFormIsRemembered(@TempDir Path dir) throws Exception {
        EnrollmentLedger l = EnrollmentLedger.open(dir.resolve("l.txt"), 100);
        assertEquals(0, l.releasesInForm(A, PEEP16));
        EnrollmentLedger.Charge c = l.charge(A, PEEP16, 2, T);
        assertArrayEquals(new double[] {16, 32}, c.composedAfter());
        assertEquals(2, l.releasesInForm(A, PEEP16));
        assertEquals(0, l.releasesInForm(A, PEEP8), "another form is a release to make");
        l.charge(A, PEEP8, 1, T);
        assertEquals(0, l.releasesInForm(A, PEEP16), "the latest form is the one remembered");
        assertEquals(40.0, l.entry(A).composedEpsilon());
        assertEquals(3, l.entry(A).releases());
    }

    @Test
    void gaussianReleasesComposeInMuAndMixWithPureOnesByBasicComposition(@TempDir Path dir) throws Exception {
        EnrollmentLedger l = EnrollmentLedger.open(dir.resolve("l.txt"), 100);
        double mu = 0.5;
        EnrollmentLedger.Form g = new EnrollmentLedger.Form("GAUSSIAN", "gdp", "pca-1", MuGdp.epsilonFor(mu, MuGdp.DEFAULT_DELTA),
                mu, false);
        EnrollmentLedger.Charge c = l.charge(A, g, 4, T);
        assertEquals(MuGdp.epsilonFor(1.0, MuGdp.DEFAULT_DELTA), c.composedAfter()[3], 1e-12,
                "four releases at mu 0.5 compose to mu 1, far below four times their epsilon");
        l.charge(A, PEEP8, 1, T);
        assertEquals(8 + MuGdp.epsilonFor(1.0, MuGdp.DEFAULT_DELTA), l.entry(A).composedEpsilon(), 1e-12);
    }

    @Test
    void theCapRefusesWhatWouldPassItAndCountsTheRefusal(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("l.txt");
        EnrollmentLedger l = EnrollmentLedger.open(f, 40);
        EnrollmentLedger.Charge c = l.charge(A, PEEP16, 3, T);
        assertEquals(2, c.granted(), "16 + 16 fits under 40, a third 16 would not");
        assertEquals(1, l.entry(A).refused());
        EnrollmentLedger.Charge later = l.charge(A, PEEP8, 2, T);
        assertEquals(1, later.granted(), "32 + 8 = 40 reaches the cap exactly; nothing more");
        EnrollmentLedger.Charge again = l.charge(A, PEEP8, 1, T);
        assertEquals(0, again.granted());
        assertEquals(0, again.refused(), "the same form refused again is not counted again");
        EnrollmentLedger.Stats s = EnrollmentLedger.open(f, 40).stats();
        assertEquals(1, s.images());
        assertEquals(3, s.releases());
        assertEquals(2, s.refused(), "refusals survive a reopen");
        assertEquals(40.0, s.maxComposedEpsilon());
        // A lower cap on the next start holds at once: nothing more for an image already past it.
        assertEquals(0, EnrollmentLedger.open(f, 20).charge(A, PEEP8, 1, T).granted());
    }

    @Test
    void everyEntrySurvivesAReopen(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("l.txt");
        EnrollmentLedger l = EnrollmentLedger.open(f, 100);
        l.charge(A, PEEP16, 1, T);
        l.charge(B, PEEP16, 2, T);
        l.charge(A, PEEP8, 1, T.plusSeconds(5));
        EnrollmentLedger again = EnrollmentLedger.open(f, 100);
        assertEquals(l.entry(A), again.entry(A));
        assertEquals(l.entry(B), again.entry(B));
        assertEquals(l.stats(), again.stats());
    }

    @Test
    void aDamagedLineIsAClearErrorAndTheFileIsLeftAsItIs(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("l.txt");
        EnrollmentLedger l = EnrollmentLedger.open(f, 100);
        l.charge(A, PEEP16, 1, T);
        l.charge(B, PEEP16, 1, T);
        l.charge(A, PEEP8, 1, T);
        List<String> lines = Files.readAllLines(f);
        for (int line = 1; line < lines.size(); line++) {
            // One changed digit in the ε of one entry: the checksum no longer matches.
            List<String> damaged = new java.util.ArrayList<>(lines);
            damaged.set(line, damaged.get(line).replaceFirst(" 16\\.0 ", " 1.0 ").replaceFirst(" 24\\.0 ", " 2.0 "));
            Path g = dir.resolve("damaged-" + line + ".txt");
            Files.write(g, damaged);
            byte[] before = Files.readAllBytes(g);
            var e = assertThrows(IllegalStateException.class, () -> EnrollmentLedger.open(g, 100));
            assertTrue(e.getMessage().contains("damaged at line " + (line + 1)) && e.getMessage().contains(g.toString()),
                    e.getMessage());
            assertArrayEquals(before, Files.readAllBytes(g), "the damaged file is not rewritten");
        }
        Path other = dir.resolve("other.txt");
        Files.writeString(other, "eventId,origin\n");
        assertTrue(assertThrows(IllegalStateException.class, () -> EnrollmentLedger.open(other, 100)).getMessage()
                .contains("not an enrollment ledger"));
    }

    @Test
    void aTornLastLineIsCutOffAndEveryCompleteEntryKept(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("l.txt");
        EnrollmentLedger l = EnrollmentLedger.open(f, 100);
        l.charge(A, PEEP16, 1, T);
        l.charge(B, PEEP16, 1, T);
        String complete = Files.readString(f);
        // A crash in the middle of the write of a third charge: it never returned, so nothing was released under it.
        Files.writeString(f, complete + A + " PEEP|l1-cl", StandardCharsets.UTF_8);
        EnrollmentLedger again = EnrollmentLedger.open(f, 100);
        assertEquals(l.entry(A), again.entry(A));
        assertEquals(l.entry(B), again.entry(B));
        assertEquals(complete, Files.readString(f), "the torn line is cut off, the rest kept byte for byte");
    }

    /**
     * A private basis fit is charged once to each image it was fitted on, as a Gaussian release:
     * persisted, composed with the image's releases, counted against the same cap, and without
     * touching the form, so it causes no re-release.
     */
    @Test
    void aPrivateFitIsChargedAsAGaussianReleaseAgainstTheSameCapAndSurvivesARestart(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("l.txt");
        double fit = MuGdp.epsilonFor(2.0, MuGdp.DEFAULT_DELTA);
        EnrollmentLedger l = EnrollmentLedger.open(f, 16 + fit);
        assertTrue(l.fitFits(A, 2.0));
        l.chargeFit(A, 2.0, T);
        assertEquals(fit, l.entry(A).composedEpsilon(), 1e-12);
        assertEquals(0, l.entry(A).releases(), "a fit is no release");
        assertEquals(1, l.charge(A, PEEP16, 1, T).granted(), "16 + the fit reaches the cap exactly");
        assertEquals(16 + fit, l.entry(A).composedEpsilon(), 1e-12);
        assertEquals(0, l.charge(A, PEEP16, 1, T).granted(), "the fit counts against the cap");
        assertTrue(!l.fitFits(A, 2.0), "a second fit would pass the cap");
        assertThrows(IllegalStateException.class, () -> l.chargeFit(A, 2.0, T));

        l.charge(B, PEEP16, 1, T);
        l.chargeFit(B, 2.0, T);
        assertEquals(1, l.releasesInForm(B, PEEP16), "the fit leaves the form as it was: no re-release");

        EnrollmentLedger reopened = EnrollmentLedger.open(f, 16 + fit);
        assertEquals(16 + fit, reopened.entry(A).composedEpsilon(), 1e-12);
        assertEquals(4.0, reopened.entry(B).muSquared(), 1e-12);
        assertEquals(1, reopened.releasesInForm(B, PEEP16));
        assertEquals(16 + fit, reopened.stats().maxComposedEpsilon(), 1e-12, "the status report shows it");
    }

    @Test
    void anErasedImageKeepsOnlyItsHashAndSpentEpsilonAndIsNeverReleasedAgain(@TempDir Path dir) throws Exception {
        java.nio.file.Path file = dir.resolve("l.txt");
        EnrollmentLedger l = EnrollmentLedger.open(file, 100);
        java.time.Instant t0 = java.time.Instant.parse("2026-01-01T00:00:00Z");
        l.charge(A, PEEP16, 2, t0);
        l.charge(A, PEEP8, 1, t0.plusSeconds(60));
        l.charge(B, PEEP16, 1, t0);
        assertEquals(3, java.nio.file.Files.readAllLines(file).size() - 1, "one line per change");
        java.time.Instant now = t0.plusSeconds(3600);
        assertEquals(1, l.erase(java.util.List.of(A), now));
        assertEquals(0, l.erase(java.util.List.of(A), now), "idempotent");
        assertTrue(l.erased(A));
        assertEquals(40, l.entry(A).composedEpsilon(), 1e-12, "the spent ε stays: its releases are out there");
        assertEquals(3, l.entry(A).releases());
        assertEquals(0, l.releasesInForm(A, PEEP16));
        java.util.List<String> lines = java.nio.file.Files.readAllLines(file);
        assertEquals(3, lines.size(), "the header and one line per image: no history of the erased image survives");
        String erasedLine = lines.stream().filter(x -> x.startsWith(A)).findFirst().orElseThrow();
        assertTrue(erasedLine.contains(" ERASED|erased|") && !erasedLine.contains("PEEP") && !erasedLine.contains(t0.toString()),
                erasedLine);
        EnrollmentLedger reopened = EnrollmentLedger.open(file, 100);
        assertTrue(reopened.erased(A));
        assertEquals(16, reopened.entry(B).composedEpsilon(), 1e-12, "other images are as they were");
        assertEquals(1, reopened.releasesInForm(B, PEEP16));
        reopened.charge(B, PEEP8, 1, now);
        assertEquals(24, EnrollmentLedger.open(file, 100).entry(B).composedEpsilon(), 1e-12, "appends after the rewrite");
    }
}
