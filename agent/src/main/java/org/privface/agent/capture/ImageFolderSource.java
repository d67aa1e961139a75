package org.privface.agent.capture;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Optional;

import org.opencv.core.Mat;
import org.privface.agent.dataset.DatasetFolder;
import org.privface.agent.image.OpenCv;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.privface.agent.image.ImageDecoder;

/**
 * Every image under a folder, as {@link DatasetFolder#imagesUnder} lists it (links followed, nested
 * folders walked, in path order), as frames. Non-image files are left out and logged once; files
 * {@link ImageDecoder} refuses (truncated, empty, not an image) are skipped, counted and logged: a
 * camera goes on past a bad frame.
 */
public final class ImageFolderSource implements FrameSource {
    private static final Logger LOG = LoggerFactory.getLogger(ImageFolderSource.class);
    private final Path root;
    private final Iterator<Path> files;
    private long sequence;
    private long skipped;

    public ImageFolderSource(Path root) throws IOException {
        OpenCv.load();
        this.root = root;
        DatasetFolder listing = DatasetFolder.imagesUnder(root);
        if (!listing.skipped().isEmpty()) {
            LOG.warn("{}: {}", root, DatasetFolder.summary(listing.skipped()));
        }
        this.files = listing.images().iterator();
    }

    @Override
    public Optional<Frame> next() {
        while (files.hasNext()) {
            Path p = files.next();
            String origin = root.relativize(p).toString();
            try {
                Mat m = ImageDecoder.read(p);
                return Optional.of(new Frame(m, sequence++, SteadyClock.system().instant(), origin));
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
