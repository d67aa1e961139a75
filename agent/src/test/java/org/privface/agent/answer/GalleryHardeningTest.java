package org.privface.agent.answer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.GalleryCalibration;
import org.privface.wire.control.SignedControl;

/**
 * A signed gallery the gateway would be charged for and never use is refused at verification,
 * counted, and the refusal says why: a k that is not its space's, a version below the newest this
 * gateway held before a restart, one over the maximum age, and an open-set gallery calibrated for
 * another ε than the gateway answers with (issue 38).
 */
class GalleryHardeningTest {
    private static final String SITE = "gallery-site";
    private static final KeyPair RECOGNIZER = SignedControl.generate();
    private static final Map<String, java.security.PublicKey> KEYS = Map.of("recognizer-1", RECOGNIZER.getPublic());

    private static Optional<String> offer(GalleryFollower f, FaceGallery g) {
        ProducerRecord<String, byte[]> r = GalleryFollowerTest.signed(g, RECOGNIZER, "recognizer-1");
        return f.offer(r.topic(), r.key(), r.headers(), r.value());
    }

    private static FaceGallery calibrated(long version, double epsilon, Instant builtAt) {
        FaceGallery g = GalleryFollowerTest.gallery(version, "dlib-test.k8", 8);
        g.setBuiltAt(builtAt);
        g.setCalibration(GalleryCalibration.newBuilder().setStrangerSet("public-test").setStrangers(2400).setAccepted(12)
                .setTargetRate(0.0099).setEpsilon(epsilon).setRule("wilson").build());
        return g;
    }

    @Test
    void aGalleryWhoseKDoesNotMatchItsSpaceIsRefused() {
        GalleryFollower f = new GalleryFollower(SITE, KEYS);
        // Templates of length 8 in a space that says k 16: every query's direction would be 16 long.
        Optional<String> why = offer(f, GalleryFollowerTest.gallery(3, "dlib-test.k16", 8));
        assertTrue(why.orElseThrow().contains("does not match its space"), why.toString());
        assertTrue(f.current().isEmpty());
        assertEquals(1, f.refusedCount());
        assertTrue(offer(f, GalleryFollowerTest.gallery(4, "dlib-test", 8)).orElseThrow().contains("names no k"));
        assertTrue(offer(f, GalleryFollowerTest.gallery(5, "dlib-test.k8", 8)).isEmpty(), "the matching one is taken");
        assertEquals(2, f.refusedCount());
    }

    @Test
    void theVersionHeldSurvivesARestartAndAnOlderOneIsRefused(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("gallery-version");
        GalleryFollower.Options o = new GalleryFollower.Options(file, Duration.ofDays(7), Clock.systemUTC(), () -> Double.NaN);
        GalleryFollower before = new GalleryFollower(SITE, KEYS, o);
        assertTrue(offer(before, GalleryFollowerTest.gallery(5, "dlib-test.k8", 8)).isEmpty());
        assertEquals("5", Files.readString(file).trim());

        // The restarted gateway holds nothing yet: a replayed version 4 is refused, 5 (the compacted
        // topic's latest, read again) is taken.
        GalleryFollower after = new GalleryFollower(SITE, KEYS, o);
        Optional<String> old = offer(after, GalleryFollowerTest.gallery(4, "dlib-test.k8", 8));
        assertTrue(old.orElseThrow().contains("below 5"), old.toString());
        assertTrue(after.current().isEmpty());
        assertTrue(offer(after, GalleryFollowerTest.gallery(5, "dlib-test.k8", 8)).isEmpty());
        assertEquals(5, after.current().orElseThrow().version());
        assertEquals(1L, after.status().get("refused"));
        assertTrue(String.valueOf(after.status().get("lastRefusal")).contains("replayed"));
    }

    @Test
    void anOverAgeGalleryIsRefusedAndAHeldOneStopsBeingUsed() {
        Instant now = Instant.parse("2026-11-28T12:00:00Z");
        AtomicReference<Instant> at = new AtomicReference<>(now);
        Clock clock = new Clock() {
            @Override public ZoneOffset getZone() { return ZoneOffset.UTC; }
            @Override public Clock withZone(java.time.ZoneId z) { return this; }
            @Override public Instant instant() { return at.get(); }
        };
        GalleryFollower f = new GalleryFollower(SITE, KEYS,
                new GalleryFollower.Options(null, Duration.ofDays(7), clock, () -> Double.NaN));
        FaceGallery stale = GalleryFollowerTest.gallery(2, "dlib-test.k8", 8);
        stale.setBuiltAt(now.minus(Duration.ofDays(8)));
        assertTrue(offer(f, stale).orElseThrow().contains("over the maximum age"));
        FaceGallery fresh = GalleryFollowerTest.gallery(3, "dlib-test.k8", 8);
        fresh.setBuiltAt(now.minus(Duration.ofDays(6)));
        assertTrue(offer(f, fresh).isEmpty());
        assertTrue(f.current().isPresent());
        at.set(now.plus(Duration.ofDays(2)));
        assertTrue(f.current().isEmpty(), "no longer answered with once over age");
        assertTrue(f.whyNone().orElseThrow().contains("over the maximum age"), f.whyNone().toString());
    }

    @Test
    void aGalleryCalibratedForAnotherEpsilonIsRefusedAndSaysWhy() {
        double[] answering = {20};
        GalleryFollower f = new GalleryFollower(SITE, KEYS,
                new GalleryFollower.Options(null, null, Clock.systemUTC(), () -> answering[0]));
        Optional<String> why = offer(f, calibrated(2, 10, Instant.now()));
        assertTrue(why.orElseThrow().contains("calibrated for answers at ε 10.0, this gateway answers at ε 20.0"),
                why.toString());
        assertEquals(1, f.refusedCount());
        assertTrue(f.current().isEmpty());
        // A revision-1 open-set gallery does not say its ε: refused too. A closed set holds at any ε.
        FaceGallery r1 = calibrated(3, 20, Instant.now());
        r1.getCalibration().setEpsilon(null);
        assertTrue(offer(f, r1).orElseThrow().contains("does not say which ε"));
        // The gateway's own charge is a hair under the nominal ε: that is the same ε.
        assertTrue(offer(f, calibrated(4, 20 * (1 + 1e-9), Instant.now())).isEmpty());
        assertEquals(20.0, ((Number) f.status().get("calibrationEpsilon")).doubleValue(), 1e-6);
        // A policy change to ε 10 makes the held gallery unusable until one for ε 10 comes.
        answering[0] = 10;
        assertTrue(f.current().isEmpty());
        assertTrue(f.whyNone().orElseThrow().contains("this gateway answers at ε 10.0"), f.whyNone().toString());
        assertTrue(offer(f, calibrated(5, 10, Instant.now())).isEmpty());
        assertTrue(f.current().isPresent());
        assertFalse(f.status().containsKey("none"));
    }
}
