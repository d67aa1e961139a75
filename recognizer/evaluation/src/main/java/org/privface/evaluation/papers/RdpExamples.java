package org.privface.evaluation.papers;

import static org.privface.evaluation.Figures.fmt;
import static org.privface.evaluation.papers.RdpBaselines.method;
import static org.privface.evaluation.papers.RdpStudy.DEFAULT_LEVELS;
import static org.privface.evaluation.papers.RdpStudy.EXAMPLE_EPSILON;
import static org.privface.evaluation.papers.RdpStudy.METHODS;
import static org.privface.evaluation.papers.RdpStudy.NC;
import static org.privface.evaluation.papers.RdpStudy.laplace;
import static org.privface.evaluation.papers.RdpStudy.perFace;

import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.imageio.ImageIO;

import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.dataset.LabelledFaces;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.FaceDetector;
import org.privface.evaluation.papers.RdpBaselines.DctDp;
import org.privface.evaluation.papers.RdpStudy.Method;
import org.privface.privacy.SecureLaplace;
import org.privface.privacy.rdp.RdpBasis;

/** The example grids: one face per person, clean and through every method at one ε0. */
final class RdpExamples {
    private RdpExamples() {
    }

    /** The committed example grid: the project's synthetic faces as 64×64 crops, basis fitted on them, Δ_i their ranges. */
    static void syntheticExamples(Path enroll, Path out) throws IOException {
        if (!Files.isDirectory(enroll)) {
            System.err.println("skipping the synthetic example grid: " + enroll + " not found");
            return;
        }
        LabelledFaces faces = FaceDatasets.detected(enroll, FaceDetector.defaults(), FaceCrops.Shape.RDP);
        FaceCrops.Shape shape = FaceCrops.Shape.RDP;
        RdpBasis basis = RdpBasis.fit(faces.faces(), Math.min(NC, faces.size() - 1), shape.width(), shape.height(),
                DEFAULT_LEVELS);
        List<double[]> shown = new ArrayList<>();
        List<Integer> people = new ArrayList<>();
        for (int i = 0; i < faces.size() && shown.size() < 4; i++) {
            if (!people.contains(faces.labels()[i])) {
                people.add(faces.labels()[i]);
                shown.add(faces.faces()[i]);
            }
        }
        System.err.printf("synthetic: %d faces of %d people detected in %s%n", faces.size(), faces.names().size(), enroll);
        writeGrid(out.resolve("rdp-examples-synthetic.png"), "synthetic faces (test-data/synthetic/enroll), eps0 = "
                + fmt(EXAMPLE_EPSILON) + ", basis fitted on them", basis, basis.featureRanges(), shown, laplace(999),
                new DctDp());
    }

    /** Rows = faces, columns = original then each method at ε0 = 0.2, with a title and a label row. */
    static void writeGrid(Path png, String title, RdpBasis basis, double[] delta, List<double[]> faces,
                          SecureLaplace laplace, DctDp dct) throws IOException {
        int side = basis.wavelet().width();
        int scale = side < 100 ? 2 : 1;
        int tile = side * scale;
        int tileHeight = basis.wavelet().height() * scale;
        int gap = 4;
        int titleHeight = 26;
        int labelHeight = 40;
        int cols = METHODS.size() + 1;
        int width = cols * tile + (cols + 1) * gap;
        int height = titleHeight + labelHeight + faces.size() * (tileHeight + gap) + gap;
        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, width, height);
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
        g.drawString(title, gap, 18);
        List<Method> methods = METHODS.stream().map(m -> method(m, basis, delta, EXAMPLE_EPSILON, laplace, dct)).toList();
        for (int c = 0; c < cols; c++) {
            String head = c == 0 ? "original" : METHODS.get(c - 1);
            String sub = c == 0 ? "" : "eps/face " + perFace(METHODS.get(c - 1), EXAMPLE_EPSILON);
            int x = gap + c * (tile + gap);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
            centred(g, head, x, tile, titleHeight + 16);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
            centred(g, sub, x, tile, titleHeight + 32);
        }
        for (int r = 0; r < faces.size(); r++) {
            int y = titleHeight + labelHeight + r * (tileHeight + gap);
            double[] face = faces.get(r);
            draw(img, face, side, gap, y, scale);
            for (int c = 0; c < methods.size(); c++) {
                draw(img, methods.get(c).apply(face).image(), side, gap + (c + 1) * (tile + gap), y, scale);
            }
        }
        g.dispose();
        ImageIO.write(img, "png", png.toFile());
    }

    static void centred(Graphics2D g, String s, int x, int w, int baseline) {
        FontMetrics fm = g.getFontMetrics();
        g.drawString(s, x + Math.max(0, (w - fm.stringWidth(s)) / 2), baseline);
    }

    /** A row-major image `width` pixels wide, drawn at (x0, y0) with each pixel a scale × scale block. */
    static void draw(BufferedImage img, double[] px, int width, int x0, int y0, int scale) {
        for (int y = 0; y < px.length / width; y++) {
            for (int x = 0; x < width; x++) {
                int v = (int) Math.round(255 * Math.max(0, Math.min(1, px[y * width + x])));
                int rgb = (v << 16) | (v << 8) | v;
                for (int dy = 0; dy < scale; dy++) {
                    for (int dx = 0; dx < scale; dx++) {
                        img.setRGB(x0 + x * scale + dx, y0 + y * scale + dy, rgb);
                    }
                }
            }
        }
    }
}
