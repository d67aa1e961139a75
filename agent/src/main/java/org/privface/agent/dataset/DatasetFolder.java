package org.privface.agent.dataset;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemLoopException;
import java.nio.file.FileVisitOption;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The one listing of an image folder, shared by every command that takes one: the data-set loaders
 * ({@link FaceDatasets}, and through them the evaluation harnesses, the basis tool and the agent's
 * enrollment folder), the demo's split and the image-folder camera. The rules:
 * <ul>
 *   <li>An image is a regular file whose name ends in one of {@link #EXTENSIONS} (any case): the
 *       formats {@code ImageDecoder} and {@link Pgm} read. Other files are skipped and reported.</li>
 *   <li>Symbolic links, to folders or files, are followed. A link whose target is missing is
 *       refused, and so is a link cycle.</li>
 *   <li>A data set of people ({@link #people}) is {@code <root>/<person>/<image>}: each folder
 *       directly under the root is a person. A folder inside a person folder is refused, naming it
 *       (its images would otherwise be someone's, or lost); files directly under the root (a
 *       README) are skipped and reported. With that fixed depth a link cycle shows up as a folder
 *       inside a person folder.</li>
 *   <li>A person folder with no image is left out and reported.</li>
 *   <li>An image the process may not read is refused here, before any work starts. Images that
 *       cannot be decoded are each command's call: the loaders stop naming the file, the camera
 *       skips and counts it.</li>
 *   <li>A person with one image is kept; it cannot be split into training and test (or enrollment
 *       and query), which each splitting command states ({@link #singleImagePeople}).</li>
 * </ul>
 */
public final class DatasetFolder {
    /** What counts as an image file, by name. */
    public static final Set<String> EXTENSIONS = Set.of("png", "jpg", "jpeg", "pgm", "ppm", "bmp", "tif", "tiff");

    /** A person folder and its images, in natural name order. */
    public record Person(String name, Path folder, List<Path> images) {
    }

    private final Path root;
    private final List<Person> people;
    private final List<Path> images;
    private final List<String> skipped;

    private DatasetFolder(Path root, List<Person> people, List<Path> images, List<String> skipped) {
        this.root = root;
        this.people = List.copyOf(people);
        this.images = List.copyOf(images);
        this.skipped = List.copyOf(skipped);
    }

    /** Whether a file name is an image's, by its extension. */
    public static boolean isImage(Path p) {
        String n = p.getFileName().toString();
        int dot = n.lastIndexOf('.');
        return dot > 0 && EXTENSIONS.contains(n.substring(dot + 1).toLowerCase(Locale.ROOT));
    }

    /** A folder-per-person data set (see the class rules); refused when no person has an image. */
    public static DatasetFolder people(Path root) throws BadDataset {
        requireFolder(root);
        List<Person> people = new ArrayList<>();
        List<Path> all = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (Path entry : entries(root)) {
            requireTarget(entry);
            if (!Files.isDirectory(entry)) {
                skipped.add(entry.getFileName() + ": not in a person folder");
                continue;
            }
            List<Path> images = new ArrayList<>();
            for (Path f : entries(entry)) {
                requireTarget(f);
                if (Files.isDirectory(f)) {
                    throw new BadDataset(f + ": a folder inside person folder " + entry.getFileName()
                            + "; a data set is <root>/<person>/<image> (move its images up, or point at it as a data set of its own)");
                }
                if (image(f, root, skipped)) {
                    images.add(f);
                }
            }
            if (images.isEmpty()) {
                skipped.add(entry.getFileName() + "/: no images, person left out");
            } else {
                people.add(new Person(entry.getFileName().toString(), entry, List.copyOf(images)));
                all.addAll(images);
            }
        }
        if (people.isEmpty()) {
            throw new BadDataset(root + ": no person folder with images (a data set is <root>/<person>/<image>"
                    + (skipped.isEmpty() ? ")" : "; skipped " + String.join(", ", skipped) + ")"));
        }
        return new DatasetFolder(root, people, all, skipped);
    }

    /** Every image anywhere under a folder, links followed, in path order (the image-folder camera). */
    public static DatasetFolder imagesUnder(Path root) throws BadDataset {
        requireFolder(root);
        List<Path> images = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        try {
            Files.walkFileTree(root, EnumSet.of(FileVisitOption.FOLLOW_LINKS), Integer.MAX_VALUE, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    requireTarget(file);
                    if (image(file, root, skipped)) {
                        images.add(file);
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    if (e instanceof FileSystemLoopException) {
                        throw new BadDataset(file + ": a link cycle (it leads back to a folder above it)");
                    }
                    throw unreadable(file, e);
                }
            });
        } catch (BadDataset e) {
            throw e;
        } catch (IOException e) {
            throw unreadable(root, e);
        }
        images.sort(null);
        return new DatasetFolder(root, List.of(), images, skipped);
    }

    public Path root() {
        return root;
    }

    /** The people with images (empty for {@link #imagesUnder}). */
    public List<Person> people() {
        return people;
    }

    /** Every image the commands will process, in the order they process them. */
    public List<Path> images() {
        return images;
    }

    /** What was left out and why, one entry a file or folder, relative to the root. */
    public List<String> skipped() {
        return skipped;
    }

    /** People with a single image: they cannot be split into two parts. */
    public List<String> singleImagePeople() {
        return people.stream().filter(p -> p.images().size() == 1).map(Person::name).toList();
    }

    /** One line for a log: how many entries were left out, with the first few. */
    public static String summary(List<String> skipped) {
        int shown = Math.min(5, skipped.size());
        return skipped.size() + " left out: " + String.join("; ", skipped.subList(0, shown))
                + (skipped.size() > shown ? "; and " + (skipped.size() - shown) + " more" : "");
    }

    private static boolean image(Path f, Path root, List<String> skipped) throws BadDataset {
        String name = root.relativize(f).toString();
        if (!Files.isRegularFile(f)) {
            skipped.add(name + ": not a regular file");
            return false;
        }
        if (!isImage(f)) {
            skipped.add(name + ": not an image (" + String.join(", ", EXTENSIONS.stream().sorted().toList()) + ")");
            return false;
        }
        if (!Files.isReadable(f)) {
            throw new BadDataset(f + ": not readable by this process (check its permissions)");
        }
        return true;
    }

    private static void requireFolder(Path root) throws BadDataset {
        requireTarget(root);
        if (!Files.isDirectory(root)) {
            throw new BadDataset(root + ": " + (Files.exists(root) ? "not a folder" : "no such folder"));
        }
    }

    private static void requireTarget(Path p) throws BadDataset {
        if (Files.isSymbolicLink(p) && !Files.exists(p)) {
            String target;
            try {
                target = Files.readSymbolicLink(p).toString();
            } catch (IOException e) {
                target = "?";
            }
            throw new BadDataset(p + ": a link to " + target + ", which does not exist");
        }
    }

    /** A folder's entries, links followed, in natural name order. */
    private static List<Path> entries(Path dir) throws BadDataset {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted(FaceDatasets.naturalOrder()).toList();
        } catch (IOException e) {
            throw unreadable(dir, e);
        }
    }

    private static BadDataset unreadable(Path p, IOException e) {
        String why = e instanceof AccessDeniedException ? "not readable by this process (check its permissions)"
                : e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage());
        return new BadDataset(p + ": cannot be listed: " + why, e);
    }
}
