package org.privface.evaluation.crowd;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.awt.image.ConvolveOp;
import java.awt.image.Kernel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import javax.imageio.IIOImage;
import javax.imageio.ImageIO;
import javax.imageio.ImageWriteParam;
import javax.imageio.ImageWriter;
import javax.imageio.stream.ImageOutputStream;

/**
 * Camera frames of real people as the project's scenes composite them (a photo in a 480×360 frame),
 * each photo rendered several times the way one person looks to a gateway's cameras within one
 * window: another size (faces 70–220 pixels), a head tilt (±15°), another place in the frame,
 * another exposure, defocus blur and JPEG compression (quality 30–85). Written as a
 * folder-per-person data set, {@code <person>/p<photo>_r<render>.jpg}, for {@link LinkCalibration}:
 * renders of one photo stand for one person within a window (same day, same clothes and light),
 * renders of two photos of one person for the pessimistic case.
 */
final class GatewayScenes {
    static final String SET = "gateway-scenes";

    private GatewayScenes() {
    }

    /** Writes {@code people} lfw people's first {@code photos} photos, {@code renders} times each, under {@code out/SET}. */
    static Path write(Path lfw, Path out, int people, int photos, int renders, long seed) throws IOException {
        Path root = out.resolve(SET);
        if (Files.isDirectory(root)) {
            return root;
        }
        Path tmp = out.resolve(SET + ".partial");
        Files.createDirectories(tmp);
        SplittableRandom rnd = new SplittableRandom(seed);
        List<Path> dirs;
        try (Stream<Path> s = Files.list(lfw)) {
            dirs = s.filter(Files::isDirectory).sorted().limit(people).toList();
        }
        for (Path person : dirs) {
            List<Path> jpgs;
            try (Stream<Path> s = Files.list(person)) {
                jpgs = s.filter(p -> p.toString().endsWith(".jpg")).sorted().limit(photos).toList();
            }
            Path dir = Files.createDirectories(tmp.resolve(person.getFileName()));
            for (int p = 0; p < jpgs.size(); p++) {
                BufferedImage photo = ImageIO.read(jpgs.get(p).toFile());
                for (int r = 0; r < renders; r++) {
                    jpeg(render(photo, rnd), 0.30f + 0.55f * (float) rnd.nextDouble(),
                            dir.resolve(String.format("p%d_r%d.jpg", p, r)));
                }
            }
        }
        Files.move(tmp, root);
        return root;
    }

    /** The photo in a grey frame, scaled, tilted, moved, re-exposed and blurred. */
    static BufferedImage render(BufferedImage photo, SplittableRandom rnd) {
        BufferedImage f = new BufferedImage(480, 360, BufferedImage.TYPE_3BYTE_BGR);
        Graphics2D g = f.createGraphics();
        g.setColor(new Color(110 + rnd.nextInt(40), 110 + rnd.nextInt(40), 110 + rnd.nextInt(40)));
        g.fillRect(0, 0, 480, 360);
        // LFW's 150-pixel photos hold a face about 60 pixels wide: 1.2–3.6× gives 70–220.
        double scale = 1.2 + 2.4 * rnd.nextDouble();
        double side = 150 * scale;
        double cx = side / 2 + rnd.nextDouble() * Math.max(0, 480 - side);
        double cy = Math.min(side / 2, 180) + rnd.nextDouble() * Math.max(0, 360 - Math.min(side, 360));
        AffineTransform at = new AffineTransform();
        at.translate(cx, cy);
        at.rotate(Math.toRadians(-15 + 30 * rnd.nextDouble()));
        at.scale(scale, scale);
        at.translate(-75, -75);
        g.setRenderingHint(RenderingHints.KEY_INTERPOLATION, RenderingHints.VALUE_INTERPOLATION_BILINEAR);
        g.drawImage(photo, at, null);
        g.dispose();
        float gain = (float) (0.7 + 0.6 * rnd.nextDouble());
        BufferedImage lit = new java.awt.image.RescaleOp(gain, 0, null).filter(f, null);
        double sigma = 2.0 * rnd.nextDouble();
        return sigma < 0.3 ? lit : new ConvolveOp(gaussian(sigma), ConvolveOp.EDGE_NO_OP, null).filter(lit, null);
    }

    private static Kernel gaussian(double sigma) {
        int r = (int) Math.ceil(2.5 * sigma);
        int n = 2 * r + 1;
        float[] k = new float[n * n];
        double sum = 0;
        for (int y = -r; y <= r; y++) {
            for (int x = -r; x <= r; x++) {
                double v = Math.exp(-(x * x + y * y) / (2 * sigma * sigma));
                k[(y + r) * n + x + r] = (float) v;
                sum += v;
            }
        }
        for (int i = 0; i < k.length; i++) {
            k[i] /= (float) sum;
        }
        return new Kernel(n, n, k);
    }

    private static void jpeg(BufferedImage img, float quality, Path file) throws IOException {
        ImageWriter w = ImageIO.getImageWritersByFormatName("jpg").next();
        try (ImageOutputStream out = ImageIO.createImageOutputStream(file.toFile())) {
            w.setOutput(out);
            ImageWriteParam p = w.getDefaultWriteParam();
            p.setCompressionMode(ImageWriteParam.MODE_EXPLICIT);
            p.setCompressionQuality(quality);
            w.write(null, new IIOImage(img, null, null), p);
        } finally {
            w.dispose();
        }
    }

    /** The photo a render came from: the file name's {@code p<photo>} part. */
    static String photoOf(String file) {
        int u = file.indexOf('_');
        return u < 0 ? file : file.substring(0, u);
    }
}
