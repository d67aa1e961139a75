package org.privface.agent.capture;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

import org.opencv.core.Mat;
import org.privface.agent.detect.OpenCv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Every image under a folder, in path order, as frames. Files {@link ImageDecoder} refuses are skipped and counted. */
public final class ImageFolderSource implements FrameSource {
    static final Set<String> EXTENSIONS = Set.of("png", "jpg", "jpeg", "pgm", "bmp", "tif", "tiff");
    private static final Logger LOG = LoggerFactory.getLogger(ImageFolderSource.class);
    private final Path root;
    private final Iterator<Path> files;
    private long sequence;
    private long skipped;

    public ImageFolderSource(Path root) throws IOException {
        OpenCv.load();
        this.root = root;
        try (Stream<Path> s = Files.walk(root)) {
            List<Path> list = s.filter(Files::isRegularFile).filter(ImageFolderSource::isImage).sorted().toList();
            this.files = list.iterator();
        }
    }

    static boolean isImage(Path p) {
        String n = p.getFileName().toString();
        int dot = n.lastIndexOf('.');
        return dot > 0 && EXTENSIONS.contains(n.substring(dot + 1).toLowerCase(Locale.ROOT));
    }

    @Override
    public Optional<Frame> next() {
        while (files.hasNext()) {
            Path p = files.next();
            String origin = root.relativize(p).toString();
            try {
                Mat m = ImageDecoder.read(p);
                return Optional.of(new Frame(m, sequence++, Instant.now(), origin));
            } catch (IOException | RuntimeException e) {
                skipped++;
                LOG.warn("skipping {}: {}", origin, e.getMessage());
            }
        }
        return Optional.empty();
    }

    @Override
    public long skipped() {
        return skipped;
    }

    @Override
    public void close() {
    }
}
