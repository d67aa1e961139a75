package org.privface.agent.embed;

import java.io.IOException;
import java.io.Reader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;

/**
 * The weights of a TensorFlow.js model: a {@code *-weights_manifest.json} and its binary shards.
 * The manifest is a list of groups; each group's shards ({@code paths}, relative to the manifest)
 * are concatenated in order and its {@code weights} are read from that buffer one after another,
 * little-endian, with their {@code name}, {@code shape} and {@code dtype}. A weight may declare a
 * {@code quantization}: stored as {@code uint8} or {@code uint16} q and read as q·scale + min, or
 * stored as {@code float16}. Every value is returned as a float.
 *
 * <p>Hand-written: no Java library reads this format (DJL's TensorFlow engine reads SavedModels, not
 * TF.js manifests), and the format is a short documented layout.
 */
public final class TfjsWeights {
    /** How a weight is stored: {@code dtype} uint8, uint16 (with scale and min) or float16. */
    public record Quantization(String dtype, double scale, double min) {
        int bytes() {
            return dtype.equals("uint8") ? 1 : 2;
        }
    }

    /** One weight: its name, shape, declared dtype, storage (null: unquantized) and values in row-major order. */
    public record Tensor(String name, int[] shape, String dtype, Quantization quantization, float[] values) {
        public long size() {
            return values.length;
        }
    }

    private final Map<String, Tensor> tensors;

    private TfjsWeights(Map<String, Tensor> tensors) {
        this.tensors = Collections.unmodifiableMap(tensors);
    }

    /** Reads a manifest and its shards; a clear error when a shard is missing, short or too long. */
    public static TfjsWeights read(Path manifest) throws IOException {
        JsonArray groups;
        try (Reader r = Files.newBufferedReader(manifest)) {
            groups = JsonParser.parseReader(r).getAsJsonArray();
        } catch (JsonParseException | IllegalStateException e) {
            throw new IOException(manifest + " is not a TensorFlow.js weights manifest: " + e.getMessage(), e);
        }
        Path dir = manifest.toAbsolutePath().getParent();
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (JsonElement g : groups) {
            JsonObject group = g.getAsJsonObject();
            ByteBuffer buf = concat(dir, group.getAsJsonArray("paths"));
            for (JsonElement w : group.getAsJsonArray("weights")) {
                Tensor t = decode(w.getAsJsonObject(), buf, manifest);
                if (out.put(t.name(), t) != null) {
                    throw new IOException(manifest + " names weight " + t.name() + " twice");
                }
            }
            if (buf.hasRemaining()) {
                throw new IOException(manifest + ": " + buf.remaining() + " bytes of the shards " + group.get("paths")
                        + " are not described by the manifest");
            }
        }
        return new TfjsWeights(out);
    }

    private static ByteBuffer concat(Path dir, JsonArray paths) throws IOException {
        byte[][] shards = new byte[paths.size()][];
        int total = 0;
        for (int i = 0; i < shards.length; i++) {
            Path p = dir.resolve(paths.get(i).getAsString());
            if (!Files.isRegularFile(p)) {
                throw new IOException("weight shard " + p + " not found");
            }
            shards[i] = Files.readAllBytes(p);
            total = Math.addExact(total, shards[i].length);
        }
        ByteBuffer buf = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
        for (byte[] s : shards) {
            buf.put(s);
        }
        return buf.flip();
    }

    private static Tensor decode(JsonObject w, ByteBuffer buf, Path manifest) throws IOException {
        String name = w.get("name").getAsString();
        JsonArray shapeJson = w.getAsJsonArray("shape");
        int[] shape = new int[shapeJson.size()];
        long n = 1;
        for (int i = 0; i < shape.length; i++) {
            shape[i] = shapeJson.get(i).getAsInt();
            if (shape[i] < 0) {
                throw new IOException(name + " has a negative dimension in " + manifest);
            }
            n *= shape[i];
        }
        String dtype = w.get("dtype").getAsString();
        Quantization q = null;
        if (w.has("quantization")) {
            JsonObject qj = w.getAsJsonObject("quantization");
            String qd = qj.get("dtype").getAsString();
            switch (qd) {
                case "uint8", "uint16" -> q = new Quantization(qd, qj.get("scale").getAsDouble(), qj.get("min").getAsDouble());
                case "float16" -> q = new Quantization(qd, 1, 0);
                default -> throw new IOException(name + ": quantization " + qd + " is not supported");
            }
        }
        int width = q != null ? q.bytes() : switch (dtype) {
            case "float32", "int32" -> 4;
            case "bool" -> 1;
            default -> throw new IOException(name + ": dtype " + dtype + " is not supported");
        };
        if (n * width > buf.remaining()) {
            throw new IOException(manifest + ": the shards end inside weight " + name + " (" + n + " values of "
                    + width + " bytes, " + buf.remaining() + " bytes left)");
        }
        float[] v = new float[(int) n];
        for (int i = 0; i < v.length; i++) {
            if (q == null) {
                v[i] = switch (dtype) {
                    case "float32" -> buf.getFloat();
                    case "int32" -> buf.getInt();
                    default -> buf.get() != 0 ? 1 : 0;
                };
            } else if (q.dtype().equals("float16")) {
                v[i] = halfToFloat(buf.getShort());
            } else {
                int raw = q.dtype().equals("uint8") ? Byte.toUnsignedInt(buf.get()) : Short.toUnsignedInt(buf.getShort());
                v[i] = (float) (raw * q.scale() + q.min());
            }
        }
        return new Tensor(name, shape, dtype, q, v);
    }

    /** IEEE 754 binary16 to float (Float.float16ToFloat is Java 20+). */
    static float halfToFloat(short h) {
        int bits = h & 0xffff;
        int sign = (bits & 0x8000) << 16;
        int exp = (bits >>> 10) & 0x1f;
        int mant = bits & 0x3ff;
        if (exp == 0x1f) {
            return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
        }
        if (exp == 0) {
            // Subnormal (or zero): mant · 2^-24.
            float f = mant * 0x1p-24f;
            return sign != 0 ? -f : f;
        }
        return Float.intBitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
    }

    public Set<String> names() {
        return tensors.keySet();
    }

    /** A weight by name; a clear error naming the manifest's weights when absent. */
    public Tensor get(String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            throw new IllegalArgumentException("no weight " + name + " in the manifest (it has " + tensors.size() + ")");
        }
        return t;
    }

    /** A weight that must have this shape. */
    public Tensor get(String name, int... shape) {
        Tensor t = get(name);
        if (!Arrays.equals(t.shape(), shape)) {
            throw new IllegalArgumentException(name + " has shape " + Arrays.toString(t.shape()) + ", expected "
                    + Arrays.toString(shape));
        }
        return t;
    }
}
