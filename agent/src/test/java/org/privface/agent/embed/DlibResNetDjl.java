package org.privface.agent.embed;

import java.util.ArrayList;
import java.util.List;

import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.pooling.Pool;

/**
 * The reference for {@link DlibResNet}: the same {@link DlibLayers} on DJL's NDArray operations
 * (PyTorch engine), as the agent ran dlib's network before ONNX Runtime. DJL is a test dependency
 * only; the equality tests and the edge benchmark's reference row use it.
 */
public final class DlibResNetDjl implements DlibEmbedder.Network {
    static {
        // The natives come from the pytorch-native-cpu jar on the classpath and nothing may be downloaded.
        if (System.getProperty("ai.djl.offline") == null) {
            System.setProperty("ai.djl.offline", "true");
        }
    }

    private record Conv(NDArray weight, NDArray bias, int stride, int pad) {
        NDArray apply(NDArray x, boolean relu) {
            NDArray y = Conv2d.conv2d(x, weight, bias, new Shape(stride, stride), new Shape(pad, pad),
                    new Shape(1, 1), 1).singletonOrThrow();
            return relu ? Activation.relu(y) : y;
        }
    }

    private record Block(Conv first, Conv second, boolean down) {
    }

    private final NDManager manager;
    private final Conv stem;
    private final List<Block> blocks = new ArrayList<>();
    private final NDArray fc;

    public DlibResNetDjl(TfjsWeights w) {
        DlibLayers layers = DlibLayers.of(w);
        manager = Engine.getEngine("PyTorch").newBaseManager();
        stem = conv(layers.stem());
        for (DlibLayers.Block b : layers.blocks()) {
            blocks.add(new Block(conv(b.first()), conv(b.second()), b.down()));
        }
        fc = manager.create(layers.fc(), new Shape(256, DlibLayers.DIMENSION));
    }

    private Conv conv(DlibLayers.Conv c) {
        return new Conv(manager.create(c.weight(), new Shape(c.out(), c.in(), c.k(), c.k())), manager.create(c.bias()),
                c.stride(), c.pad());
    }

    @Override
    public float[] forward(byte[] rgb150) {
        try (NDManager m = manager.newSubManager()) {
            NDArray x = m.create(DlibLayers.input(rgb150), new Shape(1, 3, DlibLayers.SIDE, DlibLayers.SIDE));
            x = stem.apply(x, true);
            x = Pool.maxPool2d(x, new Shape(3, 3), new Shape(2, 2), new Shape(0, 0), false);
            for (Block b : blocks) {
                x = residual(x, b);
            }
            NDArray pooled = x.mean(new int[] {3}).mean(new int[] {2});
            return pooled.matMul(fc).toFloatArray();
        }
    }

    private static NDArray residual(NDArray x, Block b) {
        NDArray y = b.second().apply(b.first().apply(x, true), false);
        NDArray shortcut = x;
        if (b.down()) {
            shortcut = Pool.avgPool2d(x, new Shape(2, 2), new Shape(2, 2), new Shape(0, 0), false, true);
            long dh = shortcut.getShape().get(2) - y.getShape().get(2);
            long dw = shortcut.getShape().get(3) - y.getShape().get(3);
            if (dh > 0 || dw > 0) {
                y = y.pad(new Shape(0, dw, 0, dh), 0);
            }
            long dc = y.getShape().get(1) - shortcut.getShape().get(1);
            if (dc > 0) {
                shortcut = shortcut.pad(new Shape(0, 0, 0, 0, 0, dc), 0);
            }
        }
        return Activation.relu(y.add(shortcut));
    }

    @Override
    public void close() {
        manager.close();
    }
}
