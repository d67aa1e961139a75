package org.privface.agent.embed;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import com.google.protobuf.CodedOutputStream;

/**
 * A small writer of ONNX models (one graph of float tensors, default domain). No ONNX builder
 * library resolves from the Maven mirror here, and onnx.proto's generated classes would mean
 * checking in protoc output; the few messages needed are written with protobuf-java's
 * {@link CodedOutputStream} by field number, as onnx.proto (IR version 8) numbers them.
 */
final class OnnxModel {
    static final int IR_VERSION = 8;
    static final int OPSET = 17;
    private static final int FLOAT = 1;
    private static final int INT64 = 7;
    private static final int ATTR_INT = 2;
    private static final int ATTR_INTS = 7;

    private final List<byte[]> nodes = new ArrayList<>();
    private final List<byte[]> initializers = new ArrayList<>();
    private final List<byte[]> inputs = new ArrayList<>();
    private final List<byte[]> outputs = new ArrayList<>();
    private int counter;

    /** A fresh value name. */
    String name(String hint) {
        return hint + "_" + counter++;
    }

    /** A float initializer; its name. */
    String floats(String name, float[] values, long... dims) {
        ByteBuffer raw = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        raw.asFloatBuffer().put(values);
        initializers.add(tensor(name, FLOAT, raw.array(), dims));
        return name;
    }

    /** An int64 initializer; its name. */
    String longs(String name, long... values) {
        ByteBuffer raw = ByteBuffer.allocate(values.length * 8).order(ByteOrder.LITTLE_ENDIAN);
        raw.asLongBuffer().put(values);
        initializers.add(tensor(name, INT64, raw.array(), values.length));
        return name;
    }

    void input(String name, long... dims) {
        inputs.add(valueInfo(name, dims));
    }

    void output(String name, long... dims) {
        outputs.add(valueInfo(name, dims));
    }

    /** An attribute for {@link #node}: one int, or a list when {@code ints} is set. */
    record Attr(String name, boolean list, long... values) {
        static Attr i(String name, long v) {
            return new Attr(name, false, v);
        }

        static Attr ints(String name, long... v) {
            return new Attr(name, true, v);
        }
    }

    /** Adds a node with one output; that output's name. */
    String node(String op, List<String> in, Attr... attrs) {
        String out = name(op.toLowerCase(java.util.Locale.ROOT));
        nodes.add(message(o -> {
            for (String i : in) {
                o.writeString(1, i);
            }
            o.writeString(2, out);
            o.writeString(3, out);
            o.writeString(4, op);
            for (Attr a : attrs) {
                o.writeByteArray(5, message(p -> {
                    p.writeString(1, a.name());
                    if (a.list()) {
                        for (long v : a.values()) {
                            p.writeInt64(8, v);
                        }
                        p.writeInt32(20, ATTR_INTS);
                    } else {
                        p.writeInt64(3, a.values()[0]);
                        p.writeInt32(20, ATTR_INT);
                    }
                }));
            }
        }));
        return out;
    }

    /** The serialized ModelProto. */
    byte[] toBytes(String graphName, String docString) {
        byte[] graph = message(g -> {
            for (byte[] n : nodes) {
                g.writeByteArray(1, n);
            }
            g.writeString(2, graphName);
            for (byte[] t : initializers) {
                g.writeByteArray(5, t);
            }
            g.writeString(10, docString);
            for (byte[] i : inputs) {
                g.writeByteArray(11, i);
            }
            for (byte[] o : outputs) {
                g.writeByteArray(12, o);
            }
        });
        return message(m -> {
            m.writeInt64(1, IR_VERSION);
            m.writeString(2, "privface");
            m.writeByteArray(7, graph);
            m.writeByteArray(8, message(s -> {
                s.writeString(1, "");
                s.writeInt64(2, OPSET);
            }));
        });
    }

    private static byte[] tensor(String name, int type, byte[] raw, long... dims) {
        return message(t -> {
            for (long d : dims) {
                t.writeInt64(1, d);
            }
            t.writeInt32(2, type);
            t.writeString(8, name);
            t.writeByteArray(9, raw);
        });
    }

    private static byte[] valueInfo(String name, long... dims) {
        byte[] shape = message(s -> {
            for (long d : dims) {
                s.writeByteArray(1, message(dim -> dim.writeInt64(1, d)));
            }
        });
        byte[] tensorType = message(t -> {
            t.writeInt32(1, FLOAT);
            t.writeByteArray(2, shape);
        });
        return message(v -> {
            v.writeString(1, name);
            v.writeByteArray(2, message(type -> type.writeByteArray(1, tensorType)));
        });
    }

    private interface Fields {
        void write(CodedOutputStream out) throws IOException;
    }

    private static byte[] message(Fields fields) {
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            CodedOutputStream out = CodedOutputStream.newInstance(bytes);
            fields.write(out);
            out.flush();
            return bytes.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
