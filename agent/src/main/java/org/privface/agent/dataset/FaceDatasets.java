package org.privface.agent.dataset;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

import org.opencv.core.Mat;
import org.opencv.core.Rect;
import org.opencv.core.Size;
import org.opencv.imgcodecs.Imgcodecs;
import org.opencv.imgproc.Imgproc;
import org.privface.agent.image.ImageDecoder;
import org.privface.agent.detect.FaceCrops;
import org.privface.agent.detect.DetectedFace;
import org.privface.agent.detect.FaceFinder;
import org.privface.agent.image.OpenCv;
import org.privface.agent.embed.FaceEmbedder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loaders for folder-per-person face datasets, listed by {@link DatasetFolder} (its rules: links,
 * nested and empty folders, non-image files). Images are read from a configured path and never
 * copied into the project. An image that cannot be read or decoded stops a load with a
 * {@link BadDataset} naming it; what is left out is logged and kept in {@link LabelledFaces#skipped()}.
 */
public final class FaceDatasets {
    private static final Logger LOG = LoggerFactory.getLogger(FaceDatasets.class);

    /** Where the shared real-face datasets live: FACE_DATASETS, else the build's default. */
    public static Optional<Path> root() {
        String env = System.getenv("FACE_DATASETS");
        String prop = System.getProperty("privface.datasets");
        for (String candidate : new String[] {env, prop}) {
            if (candidate != null && !candidate.isBlank() && Files.isDirectory(Path.of(candidate))) {
                return Optional.of(Path.of(candidate));
            }
        }
        return Optional.empty();
    }

    private FaceDatasets() {
    }

    /**
     * AT&amp;T/ORL: s1..s40, ten 92×112 PGMs each. The images are already tight face crops, so the
     * whole image is resized to 47×62.
     */
    public static LabelledFaces orl(Path root) throws IOException {
        return orl(root, FaceCrops.Shape.PEEP);
    }

    public static LabelledFaces orl(Path root, FaceCrops.Shape shape) throws IOException {
        return load(DatasetFolder.people(root), p -> Optional.of(FaceCrops.resizeToUnitPixels(Pgm.read(p), shape)), p -> { });
    }

    /**
     * LFW (funneled, 150×150 here): the standard "LFW people" crop, rows 42–117 and columns
     * 47–103, resized to 47×62.
     */
    public static LabelledFaces lfw(Path root) throws IOException {
        return lfw(root, FaceCrops.Shape.PEEP);
    }

    /** LFW at another shape: the same rows, with columns widened about the same centre to the shape's aspect. */
    public static LabelledFaces lfw(Path root, FaceCrops.Shape shape) throws IOException {
        int rows = 117 - 42;
        int cols = (int) Math.round(rows * (double) shape.width() / shape.height());
        int x = shape.equals(FaceCrops.Shape.PEEP) ? 47 : 75 - cols / 2;
        int w = shape.equals(FaceCrops.Shape.PEEP) ? 103 - 47 : cols;
        return load(DatasetFolder.people(root), p -> {
            Mat img = ImageDecoder.read(p, Imgcodecs.IMREAD_GRAYSCALE);
            if (img.cols() != 150 || img.rows() != 150) {
                img.release();
                throw new IOException(p + ": expected 150x150 funneled LFW, got " + img.cols() + "x" + img.rows());
            }
            Mat crop = img.submat(new Rect(x, 42, w, rows));
            double[] v = FaceCrops.resizeToUnitPixels(crop, shape);
            crop.release();
            img.release();
            return Optional.of(v);
        }, p -> { });
    }

    /**
     * Whole images, grey, at width × height pixels in [0, 1], neither cropped nor equalized: the
     * RDP paper's geometry. Upsampling is bicubic, downsampling area-averaged, and the result stays
     * 8-bit, as a saved image of that size would be.
     */
    public static LabelledFaces frames(Path root, int width, int height) throws IOException {
        return load(DatasetFolder.people(root), p -> {
            Mat img = ImageDecoder.read(p, Imgcodecs.IMREAD_GRAYSCALE);
            Mat sized = new Mat();
            boolean up = width > img.cols() || height > img.rows();
            Imgproc.resize(img, sized, new Size(width, height), 0, 0, up ? Imgproc.INTER_CUBIC : Imgproc.INTER_AREA);
            byte[] raw = new byte[width * height];
            sized.get(0, 0, raw);
            sized.release();
            img.release();
            double[] v = new double[raw.length];
            for (int i = 0; i < raw.length; i++) {
                v[i] = (raw[i] & 0xff) / 255.0;
            }
            return Optional.of(v);
        }, p -> { });
    }

    /**
     * Any folder of person folders, with faces found by the detector (the largest face of each
     * image). Images with no face that fits are left out and reported.
     */
    public static LabelledFaces detected(Path root, FaceFinder detector) throws IOException {
        return detected(root, detector, FaceCrops.Shape.PEEP);
    }

    public static LabelledFaces detected(Path root, FaceFinder detector, FaceCrops.Shape shape) throws IOException {
        return load(DatasetFolder.people(root), p -> {
            Mat img = ImageDecoder.read(p);
            try {
                List<Rect> faces = detector.boxes(img);
                return faces.isEmpty() ? Optional.empty() : FaceCrops.crop(img, faces.get(0), shape);
            } finally {
                img.release();
            }
        }, p -> { });
    }

    /**
     * Any folder of person folders as deep embeddings: the largest face of each image, aligned
     * by its landmarks and embedded (unit vectors). Images with no face are skipped.
     */
    public static LabelledFaces embedded(Path root, FaceFinder detector, FaceEmbedder embedder) throws IOException {
        return embedded(DatasetFolder.people(root), detector, embedder, p -> { });
    }

    /** {@link #embedded(Path, FaceFinder, FaceEmbedder)} of a listing, calling {@code afterEach} after each of its images. */
    public static LabelledFaces embedded(DatasetFolder listing, FaceFinder detector, FaceEmbedder embedder,
                                         Consumer<Path> afterEach) throws IOException {
        if (!detector.landmarks()) {
            throw new IllegalArgumentException("embeddings need a detector with landmarks, not " + detector.describe());
        }
        return load(listing, p -> {
            Mat img = ImageDecoder.read(p);
            try {
                List<DetectedFace> faces = detector.detect(img);
                return faces.isEmpty() ? Optional.empty() : Optional.of(embedder.embed(img, faces.get(0)));
            } finally {
                img.release();
            }
        }, afterEach);
    }

    private interface FaceReader {
        Optional<double[]> read(Path file) throws IOException;
    }

    /**
     * Reads every image of the listing. An image that cannot be read or decoded stops the load
     * with a {@link BadDataset} naming it (a data set silently one image short would change every
     * figure made from it); an image without a usable face is left out and reported.
     *
     * @param afterEach called after each image of {@code listing.images()}, face or not
     */
    private static LabelledFaces load(DatasetFolder listing, FaceReader reader, Consumer<Path> afterEach) throws IOException {
        OpenCv.load();
        Path root = listing.root();
        List<String> names = new ArrayList<>();
        List<double[]> faces = new ArrayList<>();
        List<Integer> labels = new ArrayList<>();
        List<String> origins = new ArrayList<>();
        List<String> skipped = new ArrayList<>(listing.skipped());
        for (DatasetFolder.Person person : listing.people()) {
            int label = -1;
            for (Path f : person.images()) {
                Optional<double[]> face;
                try {
                    face = reader.read(f);
                } catch (IOException | RuntimeException e) {
                    throw BadDataset.unusable(f, e);
                }
                afterEach.accept(f);
                if (face.isEmpty()) {
                    skipped.add(root.relativize(f) + ": no face found");
                    continue;
                }
                if (label < 0) {
                    label = names.size();
                    names.add(person.name());
                }
                faces.add(face.get());
                labels.add(label);
                origins.add(root.relativize(f).toString());
            }
        }
        if (faces.isEmpty()) {
            throw new BadDataset(root + ": no faces found in " + listing.images().size() + " images");
        }
        if (!skipped.isEmpty()) {
            LOG.warn("{}: {}", root, DatasetFolder.summary(skipped));
        }
        List<String> single = listing.singleImagePeople();
        if (!single.isEmpty()) {
            LOG.warn("{}: {} people with one image ({}): they can be trained on or enrolled but not also tested",
                    root, single.size(), String.join(", ", single.subList(0, Math.min(5, single.size()))));
        }
        return new LabelledFaces(List.copyOf(names), faces.toArray(double[][]::new),
                labels.stream().mapToInt(Integer::intValue).toArray(), List.copyOf(origins), List.copyOf(skipped));
    }

    private static final java.util.regex.Pattern RUNS = java.util.regex.Pattern.compile("\\d+|\\D+");

    /** s2 before s10: numbers inside names compare as numbers. */
    static java.util.Comparator<Path> naturalOrder() {
        Function<Path, String> key = p -> {
            String n = p.getFileName().toString();
            StringBuilder sb = new StringBuilder();
            java.util.regex.Matcher m = RUNS.matcher(n);
            while (m.find()) {
                String part = m.group();
                sb.append(Character.isDigit(part.charAt(0)) ? String.format("%012d", Long.parseLong(part.length() > 12 ? part.substring(0, 12) : part)) : part);
            }
            return sb.toString();
        };
        return java.util.Comparator.comparing(key);
    }
}
