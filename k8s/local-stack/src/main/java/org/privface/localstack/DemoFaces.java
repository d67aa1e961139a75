package org.privface.localstack;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.privface.agent.image.ImageDecoder;
import org.privface.agent.dataset.BadDataset;
import org.privface.agent.dataset.DatasetFolder;
import org.privface.agent.dataset.FaceDatasets;
import org.privface.agent.detect.FaceModels;
import org.privface.agent.embed.FaceEmbedders;
import org.privface.recognizer.answer.PublicStrangers;

/**
 * The demo's inputs: the face folder split into enrollment and query images (checked to decode
 * before anything starts), and the public strangers the gallery's threshold is calibrated on.
 * Split from {@link Demo} (issue 40).
 */
final class DemoFaces {
    private DemoFaces() {
    }

    /**
     * @param clips query tracks the camera plays ({@link #clips}); 0 where the query images are unrelated stills
     */
    record Split(Path enroll, Path query, int people, int enrollImages, int queryImages, int clips) {
        Split(Path enroll, Path query, int people, int enrollImages, int queryImages) {
            this(enroll, query, people, enrollImages, queryImages, 0);
        }
    }

    /**
     * Frames without a face between two clips: one more than the tracker lets a track go unseen
     * ({@link org.privface.agent.track.IouTracker#DEFAULT_MAX_MISSED_FRAMES}), so each clip is its own track.
     */
    static final int GAP_FRAMES = org.privface.agent.track.IouTracker.DEFAULT_MAX_MISSED_FRAMES + 1;

    /**
     * The query images as one camera's frames ({@code agent.folder-frames=sequence}), a stand-in for
     * people walking past: each person's query photos in name order, {@code frames} at a time, as
     * consecutive frames (a clip: the tracker follows the face from photo to photo, since the photos
     * of a data set put the face in about the same place), then {@value #GAP_FRAMES} empty grey
     * frames that end the track. A person's last clip may be shorter. The frames are links, named
     * so that path order is play order; no image is copied.
     */
    static Split clips(Split s, int frames, Path work) throws IOException {
        return clips(s, frames, List.of(), work);
    }

    /** Between a clip's name and a photo's index in its frame names ({@code c0001-f0.jpg}); gap frames are {@code -g}. */
    private static final String PHOTO = "-f";

    /** The photos in the clip of a frame {@code origin} (relative to {@code queryRoot}) that {@link #clips} wrote. */
    static int clipPhotos(Path queryRoot, Path origin) {
        String name = origin.getFileName().toString();
        String clip = name.substring(0, name.indexOf(PHOTO) + PHOTO.length());
        try (java.util.stream.Stream<Path> files = Files.list(queryRoot.resolve(origin.getParent()))) {
            return (int) files.filter(f -> f.getFileName().toString().startsWith(clip)).count();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Folder prefix of a stranger's clip in the query camera: no enrolled label starts with it. */
    static final String STRANGER = "~stranger-";

    /**
     * As {@link #clips(Split, int, Path)}, then one clip of each of {@code strangers}' first
     * {@code frames} photos, under {@value #STRANGER}{@code <name>}: people the gallery does not hold,
     * whose tracks measure the answers' false-positive rate on the shipped path.
     */
    static Split clips(Split s, int frames, List<DatasetFolder.Person> strangers, Path work) throws IOException {
        Path root = Files.createDirectories(work.resolve("query-clips"));
        Path gap = work.resolve("gap-frame.png");
        java.awt.image.BufferedImage grey = new java.awt.image.BufferedImage(250, 250,
                java.awt.image.BufferedImage.TYPE_BYTE_GRAY);
        java.awt.Graphics2D g = grey.createGraphics();
        g.setColor(new java.awt.Color(128, 128, 128));
        g.fillRect(0, 0, 250, 250);
        g.dispose();
        javax.imageio.ImageIO.write(grey, "png", gap.toFile());
        int clips = 0;
        int images = 0;
        List<DatasetFolder.Person> played = new java.util.ArrayList<>(DatasetFolder.people(s.query()).people());
        for (DatasetFolder.Person p : strangers) {
            played.add(new DatasetFolder.Person(STRANGER + p.name(), p.folder(), p.images().subList(0, frames)));
        }
        for (DatasetFolder.Person person : played) {
            Path dir = Files.createDirectories(root.resolve(person.name()));
            List<Path> imgs = person.images();
            for (int start = 0; start < imgs.size(); start += frames) {
                clips++;
                String clip = String.format("c%04d", clips);
                for (int i = start; i < Math.min(imgs.size(), start + frames); i++) {
                    String name = imgs.get(i).getFileName().toString();
                    Files.createSymbolicLink(dir.resolve(clip + PHOTO + (i - start) + name.substring(name.lastIndexOf('.'))),
                            imgs.get(i).toRealPath());
                    images++;
                }
                for (int i = 0; i < GAP_FRAMES; i++) {
                    Files.createSymbolicLink(dir.resolve(String.format("%s-g%02d.png", clip, i)), gap.toAbsolutePath());
                }
            }
        }
        return new Split(s.enroll(), root, s.people(), s.enrollImages(), images, clips);
    }

    /**
     * Uses faces/enroll and faces/query when present. Otherwise, for a plain folder-per-person
     * dataset such as lfw5, links the first 70% of each person's images (in name order) as
     * enrollment and the rest as queries, without copying any image. The folders are listed by
     * {@link DatasetFolder} (its rules: links, nested and empty folders, non-image files), and every
     * listed image must decode before anything starts: a bad one stops the demo naming it. A person
     * with one image cannot be split into enrollment and query, so is left out, and the demo says so.
     */
    static Split split(Path faces, Path work) throws IOException {
        if (Files.isDirectory(faces.resolve("enroll")) && Files.isDirectory(faces.resolve("query"))) {
            DatasetFolder enroll = DatasetFolder.people(faces.resolve("enroll"));
            DatasetFolder query = DatasetFolder.imagesUnder(faces.resolve("query"));
            for (DatasetFolder d : List.of(enroll, query)) {
                requireDecodable(d);
            }
            return new Split(faces.resolve("enroll"), faces.resolve("query"), enroll.people().size(),
                    enroll.images().size(), query.images().size());
        }
        DatasetFolder listing = DatasetFolder.people(faces);
        requireDecodable(listing);
        List<String> single = listing.singleImagePeople();
        if (single.size() == listing.people().size()) {
            throw new BadDataset(faces + ": every person has one image; the demo enrolls some of each person's images"
                    + " and queries the rest, so it needs people with two or more");
        }
        if (!single.isEmpty()) {
            System.out.printf("left out %d people with one image (it cannot be split into enrollment and query): %s%n",
                    single.size(), String.join(", ", single));
        }
        Path enroll = Files.createDirectories(work.resolve("enroll"));
        Path query = Files.createDirectories(work.resolve("query"));
        int people = 0;
        int ne = 0;
        int nq = 0;
        for (DatasetFolder.Person person : listing.people()) {
            List<Path> imgs = person.images();
            if (imgs.size() < 2) {
                continue;
            }
            people++;
            int cut = (int) Math.round(imgs.size() * 0.7);
            for (int i = 0; i < imgs.size(); i++) {
                Path dir = Files.createDirectories((i < cut ? enroll : query).resolve(person.name()));
                Files.createSymbolicLink(dir.resolve(imgs.get(i).getFileName()), imgs.get(i).toAbsolutePath());
            }
            ne += cut;
            nq += imgs.size() - cut;
        }
        return new Split(enroll, query, people, ne, nq);
    }

    /**
     * Up to {@code n} people of lfw-public's second half (the people {@link StrangersFile} keeps
     * unseen by the threshold's calibration: the 2nd, 4th, ... sorted by name) with at least
     * {@code photos} photos; none where lfw-public is not found.
     */
    static List<DatasetFolder.Person> unseenStrangers(Path root, int n, int photos) throws IOException {
        if (n <= 0) {
            return List.of();
        }
        Optional<Path> pub = FaceDatasets.root().or(() -> Optional.of(root.resolve("../shared/datasets").normalize()))
                .map(r -> r.resolve("lfw-public")).filter(Files::isDirectory);
        if (pub.isEmpty()) {
            return List.of();
        }
        List<Path> all;
        try (java.util.stream.Stream<Path> dirs = Files.list(pub.get())) {
            all = dirs.filter(Files::isDirectory).sorted().toList(); // StrangersFile's order, so its halves
        }
        List<DatasetFolder.Person> out = new java.util.ArrayList<>();
        for (int i = 1; i < all.size() && out.size() < n; i += 2) {
            List<Path> images = DatasetFolder.imagesUnder(all.get(i)).images();
            if (images.size() >= photos) {
                out.add(new DatasetFolder.Person(all.get(i).getFileName().toString(), all.get(i), images));
            }
        }
        return out;
    }

    /** Says what the listing left out, and stops at the first image that does not decode, naming it. */
    static void requireDecodable(DatasetFolder d) throws BadDataset {
        if (!d.skipped().isEmpty()) {
            System.out.printf("%s: %s%n", d.root(), DatasetFolder.summary(d.skipped()));
        }
        for (Path image : d.images()) {
            try {
                ImageDecoder.read(image).release();
            } catch (IOException e) {
                throw BadDataset.unusable(image, e);
            }
        }
    }

    /** The calibration file and, where built here, the other half of the public people: strangers calibration never saw. */
    record Strangers(Path file, Optional<PublicStrangers> heldOut) {
    }

    /**
     * The public strangers' file for the gallery's threshold: the one named, none, or (auto) built
     * by {@link StrangersFile} from {@code lfw-public} (under FACE_DATASETS or ../shared/datasets):
     * every image of every other person (about 2,400 faces, at least {@value StrangersFile#MIN_FACES}
     * needed), raw embeddings the recognizer projects into the gallery's space; the other half of the people is kept for measuring the false-positive rate on strangers the
     * calibration never saw. Public faces only, never the site's. The raw embeddings are cached in
     * {@code k8s/local-stack/target/strangers-cache}, since embedding 4,840 faces takes minutes.
     */
    static Optional<Strangers> strangers(Path root, String option, Path work)
            throws IOException {
        if (option.equals("none")) {
            return Optional.empty();
        }
        if (!option.equals("auto")) {
            Path file = root.resolve(option);
            PublicStrangers.read(file); // a bad file stops the demo here, naming it
            return Optional.of(new Strangers(file, Optional.empty()));
        }
        Optional<Path> pub = FaceDatasets.root().or(() -> Optional.of(root.resolve("../shared/datasets").normalize()))
                .map(r -> r.resolve("lfw-public")).filter(Files::isDirectory);
        Optional<Path> yunet = FaceModels.findYunet(null).or(() -> Optional.of(root.resolve("../shared/models")
                .resolve(FaceModels.YUNET_FILE).normalize()).filter(Files::isRegularFile));
        String network = FaceEmbedders.DLIB; // the agent's default agent.embedder.network, which the demo keeps
        if (pub.isEmpty() || yunet.isEmpty() || !FaceEmbedders.missing(network).isEmpty()) {
            return Optional.empty();
        }
        long t0 = System.nanoTime();
        Path cache = Files.createDirectories(root.resolve("k8s/local-stack/target/strangers-cache"));
        Path[] files = new Path[2];
        for (int offset = 0; offset < 2; offset++) {
            files[offset] = cache.resolve("lfw-public-" + network + "-" + (offset == 0 ? "calibration" : "unseen") + ".txt");
            if (!Files.isRegularFile(files[offset])) {
                double[][] e = StrangersFile.embed(pub.get(), network, offset, work.resolve("strangers-links-" + offset),
                        yunet.get());
                Path tmp = work.resolve("strangers-" + offset + ".txt");
                StrangersFile.write(tmp, "lfw-public", network, e);
                Files.move(tmp, files[offset], java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
        PublicStrangers calibration = PublicStrangers.read(files[0]);
        PublicStrangers unseen = PublicStrangers.read(files[1]);
        System.out.printf("public strangers: %d faces of every other lfw-public person (%s embeddings, sha256 %s) for the"
                + " gallery's threshold; %d faces of the other people kept unseen (%.1f s)%n", calibration.directions().length,
                network, StrangersFile.sha256(files[0]).substring(0, 16), unseen.directions().length,
                (System.nanoTime() - t0) / 1e9);
        return Optional.of(new Strangers(files[0], Optional.of(unseen)));
    }
}
