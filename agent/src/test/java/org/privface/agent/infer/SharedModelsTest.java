package org.privface.agent.infer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.opencv.core.CvType;
import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.image.OpenCv;

class SharedModelsTest {
    /** A real (if trivial) detector: one face at the frame's centre, built and run counted. */
    private static final class CentreFinder implements FaceFinder {
        static final AtomicInteger BUILT = new AtomicInteger();
        final Set<String> threads = ConcurrentHashMap.newKeySet();

        CentreFinder() {
            BUILT.incrementAndGet();
        }

        @Override
        public List<DetectedFace> detect(Mat frame) {
            threads.add(Thread.currentThread().getName());
            return List.of(new DetectedFace(new Rect(frame.cols() / 4, frame.rows() / 4, frame.cols() / 2, frame.rows() / 2),
                    null, 1f));
        }

        @Override
        public String describe() {
            return "centre";
        }
    }

    @Test
    void eightCamerasBuildOneDetectorAndRunItOnOneThread() throws Exception {
        OpenCv.load();
        CentreFinder.BUILT.set(0);
        CentreFinder[] model = new CentreFinder[1];
        try (SharedModels shared = new SharedModels(2)) {
            Thread[] cams = new Thread[8];
            for (int i = 0; i < cams.length; i++) {
                FaceFinder f = shared.detector("centre", "cam" + i, () -> model[0] = new CentreFinder());
                cams[i] = new Thread(() -> {
                    Mat frame = new Mat(120, 160, CvType.CV_8UC3);
                    for (int n = 0; n < 20; n++) {
                        assertEquals(40, f.detect(frame).get(0).box().x);
                    }
                    frame.release();
                });
                cams[i].start();
            }
            for (Thread t : cams) {
                t.join(30_000);
            }
            assertEquals(1, CentreFinder.BUILT.get());
            assertEquals(1, shared.size());
            assertEquals(Set.of("infer-detect:centre"), model[0].threads);
            @SuppressWarnings("unchecked")
            Map<String, Map<String, Long>> counts = (Map<String, Map<String, Long>>) shared.localReport().get("detect:centre");
            assertEquals(8, counts.size());
            // A camera waits for its own request, so none is ever dropped.
            counts.values().forEach(c -> assertEquals(Map.of("served", 20L, "dropped", 0L), c));
            assertTrue(shared.detector("other", "cam0", CentreFinder::new).describe().endsWith("shared"));
            assertEquals(2, shared.size());
        }
    }
}
