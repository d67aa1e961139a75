package org.privface.agent.infer;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.opencv.core.Mat;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.embed.FaceEmbedder;

/**
 * The gateway's models, one per network and configuration whatever the number of cameras: each
 * camera gets a handle that runs the shared model on its {@link InferenceQueue}. A camera's thread
 * waits for its own request, so it has at most one waiting and the queue's fairness decides only
 * the order in which cameras are served; a camera that falls behind loses frames at its source
 * ({@code CameraSupervisor}'s drop count), not requests here. Each model costs its memory once
 * (about 73 MiB per camera before, issue 44).
 */
public final class SharedModels implements AutoCloseable {
    private record Slot(Object model, InferenceQueue queue) {
    }

    private final int perCamera;
    private final Map<String, Slot> slots = new LinkedHashMap<>();

    /** @param perCamera requests one camera may have waiting on one model (at least 1) */
    public SharedModels(int perCamera) {
        this.perCamera = perCamera;
    }

    private synchronized Slot slot(String key, Supplier<?> make) {
        Slot s = slots.get(key);
        if (s == null) {
            s = new Slot(make.get(), new InferenceQueue(key, perCamera));
            slots.put(key, s);
        }
        return s;
    }

    /** {@code camera}'s handle on the detector {@code key}, built by {@code make} the first time it is asked for. */
    public FaceFinder detector(String key, String camera, Supplier<FaceFinder> make) {
        Slot s = slot("detect:" + key, make);
        FaceFinder f = (FaceFinder) s.model();
        return new FaceFinder() {
            @Override
            public List<DetectedFace> detect(Mat frame) {
                return s.queue().call(camera, () -> f.detect(frame));
            }

            @Override
            public String describe() {
                return f.describe() + ", shared";
            }

            @Override
            public boolean landmarks() {
                return f.landmarks();
            }

            @Override
            public boolean readsColour() {
                return f.readsColour();
            }
        };
    }

    /** {@code camera}'s handle on the embedder {@code key}, built by {@code make} the first time it is asked for. */
    public FaceEmbedder embedder(String key, String camera, Supplier<FaceEmbedder> make) {
        Slot s = slot("embed:" + key, make);
        FaceEmbedder e = (FaceEmbedder) s.model();
        return new FaceEmbedder() {
            @Override
            public int dimension() {
                return e.dimension();
            }

            @Override
            public double[] embed(Mat frame, DetectedFace face) {
                return s.queue().call(camera, () -> e.embed(frame, face));
            }

            @Override
            public String modelId() {
                return e.modelId();
            }
        };
    }

    /** Models built so far. */
    public synchronized int size() {
        return slots.size();
    }

    /**
     * Per model, per camera: requests served and dropped. A face-dependent count (a request is a
     * frame, or a face embedded), so it belongs in the local report only (docs/privacy.md).
     */
    public synchronized Map<String, Object> localReport() {
        Map<String, Object> m = new LinkedHashMap<>();
        slots.forEach((key, s) -> {
            Map<String, Object> cams = new LinkedHashMap<>();
            s.queue().counts().forEach((c, n) -> cams.put(c, Map.of("served", n.served(), "dropped", n.dropped())));
            m.put(key, cams);
        });
        return m;
    }

    /** Dropped requests of one camera on every model. */
    public synchronized long dropped(String camera) {
        long d = 0;
        for (Slot s : slots.values()) {
            InferenceQueue.CameraCounts n = s.queue().counts().get(camera);
            d += n == null ? 0 : n.dropped();
        }
        return d;
    }

    @Override
    public synchronized void close() {
        for (Slot s : slots.values()) {
            s.queue().close();
            if (s.model() instanceof AutoCloseable c) {
                try {
                    c.close();
                } catch (Exception ex) {
                    // closing native models at shutdown: nothing to do with a failure but go on
                }
            }
        }
        slots.clear();
    }
}
