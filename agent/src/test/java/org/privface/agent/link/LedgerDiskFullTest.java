package org.privface.agent.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.track.BudgetPolicy;
import org.privface.agent.track.TrackBudget;

/**
 * The ledgers on a file system that really fills up (a tmpfs; docs/reliability.md, "The ledger's
 * disk fills up"): a charge that cannot be written whole is refused, so its release never goes
 * out; what was written before stays readable; once space returns, charging resumes.
 */
class LedgerDiskFullTest {
    static final Duration WINDOW = Duration.ofMinutes(10);
    static final Instant T0 = Instant.parse("2026-01-01T10:00:00Z");

    private static FullDisk mountOrSkip(Path dir) throws Exception {
        FullDisk disk = FullDisk.mount(dir, 64 * 1024);
        assumeTrue(disk != null, "mounting a tmpfs is not allowed here (needs root or CAP_SYS_ADMIN): no full disk to test on");
        return disk;
    }

    @Test
    void aPersonChargeThatCannotBeWrittenIsRefusedAndTheEarlierSpendSurvives(@TempDir Path dir) throws Exception {
        TrackBudget budget = new TrackBudget(BudgetPolicy.maxK(4), 2.0, WINDOW);
        Path persons = dir.resolve("persons");
        try (FullDisk disk = mountOrSkip(dir)) {
            PersonLedger l = PersonLedger.open(persons, 0.5, WINDOW, T0);
            String a = null;
            // Twelve appearances of 128 floats: the person's file spans two pages.
            for (int i = 0; i < 12; i++) {
                a = l.link("cam-1", PersonLedgerTest.face(0, 1 + i, 0.05), T0.plusSeconds(i)).orElseThrow().personId();
            }
            Instant t = T0.plusSeconds(20);
            assertTrue(l.charge(a, budget, t).isPresent());

            assertTrue(disk.fill() > 0);
            assertEquals(Optional.empty(), l.charge(a, budget, t.plusSeconds(1)), "nothing fits: the charge is refused");
            assertEquals(Optional.empty(), l.link("cam-2", PersonLedgerTest.face(60, 61, 0), t.plusSeconds(1)),
                    "a new person cannot be recorded either");

            // One page free: the person's file is written only in part. Renaming that part over the
            // file would both grant the charge and destroy the spend written before.
            disk.free(1);
            assertEquals(Optional.empty(), l.charge(a, budget, t.plusSeconds(2)), "half a record is no record: refused");
            assertEquals(1, spendOnDisk(persons, t, budget), "the earlier charge is intact on disk");
            assertEquals(List.of(), leftovers(persons), "no half-written temporary file is left to take the space");
            assertEquals(3, l.stats(t).unrecorded(), "each refusal is counted as unrecorded");

            disk.free(Integer.MAX_VALUE);
            PersonLedger.Charge c = l.charge(a, budget, t.plusSeconds(3)).orElseThrow(() -> new AssertionError(
                    "space is back: charging resumes"));
            assertEquals(2 * budget.unitsPerRelease(), c.epsilonSpentInWindow(), 1e-12);
            assertTrue(l.link("cam-2", PersonLedgerTest.face(60, 61, 0), t.plusSeconds(4)).isPresent());
            assertEquals(2, spendOnDisk(persons, t, budget));
        }
    }

    /** The ε a restart reads back for the person (the only one with a charge), in releases of {@code budget}. */
    private static long spendOnDisk(Path persons, Instant now, TrackBudget budget) throws Exception {
        PersonLedger again = PersonLedger.open(persons, 0.5, WINDOW, now);
        return Math.round(again.stats(now).maxPersonEpsilon() / budget.unitsPerRelease());
    }

    private static List<Path> leftovers(Path persons) throws Exception {
        try (Stream<Path> s = Files.list(persons)) {
            return s.filter(p -> p.toString().endsWith(".tmp")).toList();
        }
    }

    @Test
    void anEnrollmentChargeThatCannotBeWrittenWholeIsRefusedAndLeavesNoTornLine(@TempDir Path dir) throws Exception {
        EnrollmentLedger.Form form = new EnrollmentLedger.Form("PEEP", "l1-clip", "pca-1", 1, Double.NaN, false);
        Path file = dir.resolve("enrollment-ledger.txt");
        try (FullDisk disk = mountOrSkip(dir)) {
            EnrollmentLedger l = EnrollmentLedger.open(file, 8);
            // Fill the file's last page until the next line cannot fit in what is left of it.
            int images = 0;
            long line = 0;
            while (line == 0 || FullDisk.PAGE - Files.size(file) % FullDisk.PAGE >= line) {
                long before = Files.size(file);
                l.charge(image(images++), form, 1, T0);
                line = Files.size(file) - before;
            }
            long size = Files.size(file);
            disk.fill();
            // The kernel takes what fits in the last page and refuses the rest: a charge whose line
            // is on disk only in part must not be granted.
            assertThrows(UncheckedIOException.class, () -> l.charge(image(999), form, 1, T0.plusSeconds(1)));
            assertEquals(size, Files.size(file), "no part of the refused line is left in the file");
            assertEquals(null, l.entry(image(999)));

            disk.free(Integer.MAX_VALUE);
            assertEquals(1, l.charge(image(999), form, 1, T0.plusSeconds(2)).granted(), "space is back: charging resumes");
            assertEquals(1, l.charge(image(0), form, 1, T0.plusSeconds(3)).granted());
            EnrollmentLedger again = EnrollmentLedger.open(file, 8);
            assertEquals(images + 1, again.stats().images(), "every entry reads back, none damaged");
            assertEquals(2, again.entry(image(0)).releases());
            assertEquals(1, again.entry(image(999)).releases());
        }
    }

    private static String image(int i) {
        return String.format("%064x", i + 1);
    }
}
