package org.privface.k8s;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Checks kustomization.yaml files without kustomize: known fields only, every referenced file or
 * folder exists, patch and generator files lie inside the kustomization's folder (kustomize's
 * default load restriction), and a patch without an explicit target names a resource that the
 * kustomization's resources actually contain.
 */
final class Kustomizations {
    static final Set<String> FIELDS = Set.of("apiVersion", "kind", "namespace", "namePrefix", "nameSuffix",
            "labels", "commonAnnotations", "resources", "components", "patches", "images", "configMapGenerator",
            "secretGenerator", "generatorOptions", "replicas", "replacements", "buildMetadata", "sortOptions");

    private Kustomizations() {}

    static Path fileIn(Path dir) {
        for (String n : List.of("kustomization.yaml", "kustomization.yml", "Kustomization")) {
            if (Files.isRegularFile(dir.resolve(n))) {
                return dir.resolve(n);
            }
        }
        return null;
    }

    static JsonNode read(Path kustomization) {
        try {
            List<JsonNode> docs = Manifests.trees(Files.readString(kustomization));
            if (docs.size() != 1) {
                throw new IllegalArgumentException(kustomization + ": expected one document, found " + docs.size());
            }
            return docs.get(0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Everything wrong with one kustomization file; empty when it is sound. */
    static List<String> problems(Path kustomization) {
        List<String> out = new ArrayList<>();
        Path dir = kustomization.getParent();
        JsonNode k = read(kustomization);
        if (!"kustomize.config.k8s.io/v1beta1".equals(k.path("apiVersion").asText())
                || !"Kustomization".equals(k.path("kind").asText())) {
            out.add(kustomization + ": apiVersion/kind must be kustomize.config.k8s.io/v1beta1 Kustomization");
        }
        k.fieldNames().forEachRemaining(f -> {
            if (!FIELDS.contains(f)) {
                out.add(kustomization + ": unknown field '" + f + "'");
            }
        });
        for (JsonNode r : k.path("resources")) {
            String ref = r.asText();
            if (ref.contains("://") || ref.startsWith("github.com/")) {
                out.add(kustomization + ": remote resource " + ref + " (everything must be in the repository)");
                continue;
            }
            Path p = dir.resolve(ref).normalize();
            if (Files.isDirectory(p)) {
                if (fileIn(p) == null) {
                    out.add(kustomization + ": resource folder " + ref + " has no kustomization.yaml");
                }
            } else if (!Files.isRegularFile(p)) {
                out.add(kustomization + ": resource " + ref + " does not exist");
            }
        }
        Set<String> ids = null;
        for (JsonNode patch : k.path("patches")) {
            if (patch.has("path")) {
                String ref = patch.path("path").asText();
                Path p = dir.resolve(ref).normalize();
                if (!p.startsWith(dir)) {
                    out.add(kustomization + ": patch " + ref + " lies outside the kustomization's folder");
                } else if (!Files.isRegularFile(p)) {
                    out.add(kustomization + ": patch " + ref + " does not exist");
                } else if (!patch.has("target")) {
                    if (ids == null) {
                        ids = resourceIds(dir);
                    }
                    for (JsonNode doc : docs(p)) {
                        String id = doc.path("kind").asText() + "/" + doc.path("metadata").path("name").asText();
                        if (!ids.contains(id)) {
                            out.add(kustomization + ": patch " + ref + " targets " + id + ", which none of its resources define");
                        }
                    }
                }
            } else if (!patch.has("patch")) {
                out.add(kustomization + ": a patch needs 'path' or 'patch'");
            }
        }
        for (String gen : List.of("configMapGenerator", "secretGenerator")) {
            for (JsonNode g : k.path(gen)) {
                for (String field : List.of("files", "envs")) {
                    for (JsonNode f : g.path(field)) {
                        String ref = f.asText();
                        ref = ref.contains("=") ? ref.substring(ref.indexOf('=') + 1) : ref;
                        Path p = dir.resolve(ref).normalize();
                        if (!p.startsWith(dir) || !Files.isRegularFile(p)) {
                            out.add(kustomization + ": " + gen + " file " + ref + " does not exist in the folder");
                        }
                    }
                }
            }
        }
        return out;
    }

    /** kind/name of every resource a kustomization folder holds, recursively, before its own renames. */
    static Set<String> resourceIds(Path dir) {
        Set<String> ids = new LinkedHashSet<>();
        Path k = fileIn(dir);
        if (k == null) {
            return ids;
        }
        for (JsonNode r : read(k).path("resources")) {
            Path p = dir.resolve(r.asText()).normalize();
            if (Files.isDirectory(p)) {
                ids.addAll(resourceIds(p));
            } else if (Files.isRegularFile(p)) {
                for (JsonNode doc : docs(p)) {
                    ids.add(doc.path("kind").asText() + "/" + doc.path("metadata").path("name").asText());
                }
            }
        }
        return ids;
    }

    /** The files a kustomization refers to directly: resources that are files, and patch files. */
    static Set<Path> referencedFiles(Path kustomization) {
        Set<Path> out = new LinkedHashSet<>();
        Path dir = kustomization.getParent();
        JsonNode k = read(kustomization);
        for (JsonNode r : k.path("resources")) {
            Path p = dir.resolve(r.asText()).normalize();
            if (Files.isRegularFile(p)) {
                out.add(p);
            }
        }
        out.addAll(patchFiles(kustomization));
        return out;
    }

    static Set<Path> patchFiles(Path kustomization) {
        Set<Path> out = new LinkedHashSet<>();
        Path dir = kustomization.getParent();
        for (JsonNode patch : read(kustomization).path("patches")) {
            if (patch.has("path")) {
                out.add(dir.resolve(patch.path("path").asText()).normalize());
            }
        }
        return out;
    }

    private static List<JsonNode> docs(Path file) {
        try {
            return Manifests.trees(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
