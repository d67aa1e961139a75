package org.privface.agent.embed;

import java.nio.FloatBuffer;
import java.util.Map;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;

/**
 * An ONNX model on ONNX Runtime, one intra-op thread on the calling thread (a camera thread is one
 * core). Its own class so that the agent loads no ONNX Runtime class unless it is chosen: the jar
 * (93 MB, natives for five platforms) is not in the image unless a build adds it.
 */
final class OrtGraph implements AutoCloseable {
    private final OrtEnvironment env;
    private final OrtSession session;
    private final String input;
    private final long[] shape;

    OrtGraph(byte[] model, String input, long... shape) {
        this.input = input;
        this.shape = shape.clone();
        env = OrtEnvironment.getEnvironment();
        try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
            options.setIntraOpNumThreads(1);
            options.setInterOpNumThreads(1);
            options.setExecutionMode(OrtSession.SessionOptions.ExecutionMode.SEQUENTIAL);
            options.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            options.addConfigEntry("session.intra_op.allow_spinning", "0");
            session = env.createSession(model, options);
        } catch (OrtException e) {
            throw new IllegalStateException("ONNX Runtime could not load the network: " + e.getMessage(), e);
        }
    }

    /** The first output, {@code outputLength} floats. */
    float[] run(float[] values, int outputLength) {
        try (OnnxTensor in = OnnxTensor.createTensor(env, FloatBuffer.wrap(values), shape);
                OrtSession.Result r = session.run(Map.of(input, in))) {
            float[] out = new float[outputLength];
            ((OnnxTensor) r.get(0)).getFloatBuffer().get(out);
            return out;
        } catch (OrtException e) {
            throw new IllegalStateException("ONNX Runtime failed: " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        try {
            session.close();
        } catch (OrtException e) {
            throw new IllegalStateException(e);
        }
    }
}
