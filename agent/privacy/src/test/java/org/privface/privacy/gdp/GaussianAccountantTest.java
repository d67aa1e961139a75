package org.privface.privacy.gdp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

class GaussianAccountantTest {

    @Test
    void hundredReleasesAtMuOneTenthComposeToMuOne() {
        GaussianAccountant a = new GaussianAccountant();
        for (int i = 0; i < 100; i++) {
            a.addGaussian(0.1);
        }
        double delta = 1e-5;
        assertEquals(1.0, a.muTotal(), 1e-12);
        assertEquals(100, a.gaussianReleases());
        assertEquals(0.0, a.epsilonLaplace(), 0);
        double composed = a.epsilon(delta);
        assertEquals(MuGdp.epsilonFor(1.0, delta), composed, 1e-12);
        // Per release at the same δ, and the honest comparison that splits δ over the releases.
        double naive = 100 * MuGdp.epsilonFor(0.1, delta);
        double summed = a.epsilonBasicSum(delta);
        assertEquals(100 * MuGdp.epsilonFor(0.1, delta / 100), summed, 1e-9);
        assertTrue(composed < naive / 5, "GDP composition " + composed + " vs 100 x per-release " + naive);
        assertTrue(composed < summed / 5, "GDP composition " + composed + " vs summed " + summed);
    }

    @Test
    void laplaceAndGaussianReleasesCombine() {
        GaussianAccountant a = new GaussianAccountant();
        a.addLaplace(0.5);
        a.addGaussian(0.3);
        a.addLaplace(0.25);
        a.addGaussian(0.4);
        double delta = 1e-6;
        assertEquals(0.75, a.epsilonLaplace(), 1e-15);
        assertEquals(0.5, a.muTotal(), 1e-15);
        assertEquals(2, a.laplaceReleases());
        assertEquals(0.75 + MuGdp.epsilonFor(0.5, delta), a.epsilon(delta), 1e-12);
        assertEquals(new MuGdp.Mixed(0.75, 0.5), a.snapshot());
        double summed = 0.75 + MuGdp.epsilonFor(0.3, delta / 2) + MuGdp.epsilonFor(0.4, delta / 2);
        assertEquals(summed, a.epsilonBasicSum(delta), 1e-12);
        assertTrue(a.epsilon(delta) <= a.epsilonBasicSum(delta));
    }

    @Test
    void emptyAndPureLedgers() {
        GaussianAccountant a = new GaussianAccountant();
        assertEquals(0.0, a.epsilon(1e-5), 0);
        assertEquals(0.0, a.muTotal(), 0);
        a.addLaplace(1.0);
        assertEquals(1.0, a.epsilon(1e-5), 0, "a pure ledger states its plain sum");
        assertEquals(1.0, a.epsilonBasicSum(1e-5), 0);
    }

    @Test
    void concurrentReleasesAreAllCounted() throws InterruptedException {
        GaussianAccountant a = new GaussianAccountant();
        int threads = 8;
        int each = 2000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread w = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                for (int i = 0; i < each; i++) {
                    a.addGaussian(0.01);
                    a.addLaplace(0.001);
                }
            });
            w.start();
            workers.add(w);
        }
        start.countDown();
        for (Thread w : workers) {
            w.join();
        }
        assertEquals(threads * each, a.gaussianReleases());
        assertEquals(threads * each, a.laplaceReleases());
        assertEquals(0.01 * Math.sqrt(threads * each), a.muTotal(), 1e-12);
        assertEquals(0.001 * threads * each, a.epsilonLaplace(), 1e-9);
    }

    @Test
    void rejectsBadReleases() {
        GaussianAccountant a = new GaussianAccountant();
        assertThrows(IllegalArgumentException.class, () -> a.addGaussian(0));
        assertThrows(IllegalArgumentException.class, () -> a.addGaussian(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> a.addLaplace(-1));
        assertThrows(IllegalArgumentException.class, () -> a.epsilon(0));
        assertThrows(IllegalArgumentException.class, () -> a.epsilonBasicSum(1));
    }
}
