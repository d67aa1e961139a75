package org.privface.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import javax.xml.parsers.DocumentBuilderFactory;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The manifests run what the build's images profile makes (k8s/README.md, "Images"): the image
 * names and tag of the Jib configuration in the poms, its user, and the writable paths its JVM
 * flags and environment point at, mounted as volumes.
 */
class ImagesTest {
    private final Path k8s = Manifests.root();
    private final Path repo = k8s.getParent();

    @Test
    void containersAndOverlaysNameTheImagesTheBuildMakes() throws Exception {
        String tag = property(pom(repo.resolve("pom.xml")), "images.tag");
        assertEquals("privface", property(pom(repo.resolve("pom.xml")), "images.repository"));
        Element jib = jibPlugin(pom(repo.resolve("pom.xml")));
        assertEquals("${images.repository}/${project.artifactId}:${images.tag}", text(jib, "to", "image"));
        Map<String, String> expected = Map.of("agent", "privface/agent:" + tag, "recognizer", "privface/recognizer:" + tag);
        assertEquals(expected.get("agent"), container("base/agent/daemonset.yaml").path("image").asText());
        assertEquals(expected.get("recognizer"), container("base/recognizer/deployment.yaml").path("image").asText());
        // The fleet sets the recognizer's tag, the one the build makes (the recognizer goes first in an
        // upgrade); each site overlay sets only its agent's tag, which may lag for a staged rollout.
        assertEquals(Map.of("privface/recognizer", tag), images(k8s.resolve("fleet")), "fleet: images: the recognizer at the built tag");
        List<Path> overlays = new ArrayList<>();
        try (var s = Files.list(k8s.resolve("overlays"))) {
            s.filter(Files::isDirectory).sorted().forEach(overlays::add);
        }
        assertTrue(overlays.size() >= 2, "overlays: " + overlays);
        Set<String> tags = new TreeSet<>();
        for (Path overlay : overlays) {
            Map<String, String> images = images(overlay);
            assertEquals(Set.of("privface/agent"), images.keySet(), overlay + ": images: the agent alone");
            assertTrue(images.get("privface/agent").matches("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"), overlay + ": agent tag");
            tags.add(images.get("privface/agent"));
        }
        assertTrue(tags.contains(tag), "no site runs the agent the build makes (" + tag + "): " + tags);
    }

    private static Map<String, String> images(Path kustomizationDir) {
        Map<String, String> images = new TreeMap<>();
        for (JsonNode i : Kustomizations.read(kustomizationDir.resolve("kustomization.yaml")).path("images")) {
            String name = i.path("name").asText();
            String newName = i.path("newName").asText(name);
            assertTrue(newName.equals(name) || newName.endsWith("/" + name),
                    kustomizationDir + ": " + name + " renamed to " + newName + ", not a registry path to the same image");
            images.put(name, i.path("newTag").asText());
        }
        return images;
    }

    @Test
    void podsRunAsTheImagesUserWithItsWritablePathsOnVolumes() throws Exception {
        Element jib = jibPlugin(pom(repo.resolve("pom.xml")));
        String[] user = text(jib, "container", "user").split(":");
        for (String manifest : List.of("base/agent/daemonset.yaml", "base/recognizer/deployment.yaml")) {
            JsonNode pod = Manifests.trees(Files.readString(k8s.resolve(manifest))).get(0).path("spec").path("template").path("spec");
            assertEquals(user[0], pod.path("securityContext").path("runAsUser").asText(), manifest);
            assertEquals(user[1], pod.path("securityContext").path("runAsGroup").asText(), manifest);
        }
        // JavaCPP's native cache (the agent's jvmFlags) and DJL's (the recognizer's environment) lie on volumes.
        Element agentJib = jibPlugin(pom(repo.resolve("agent/pom.xml")));
        String cache = null;
        NodeList flags = agentJib.getElementsByTagName("jvmFlag");
        for (int i = 0; i < flags.getLength(); i++) {
            String f = flags.item(i).getTextContent().trim();
            if (f.startsWith("-Dorg.bytedeco.javacpp.cachedir=")) {
                cache = f.substring(f.indexOf('=') + 1);
            }
        }
        assertTrue(cache != null, "the agent image sets JavaCPP's cache dir");
        assertTrue(onVolume(container("base/agent/daemonset.yaml"), cache), "JavaCPP cache " + cache + " is on no volume");
        JsonNode recognizer = container("base/recognizer/deployment.yaml");
        for (JsonNode e : recognizer.path("env")) {
            if (e.path("name").asText().endsWith("CACHE_DIR")) {
                assertTrue(onVolume(recognizer, e.path("value").asText()), e + " is on no volume");
            }
        }
        String imageDjl = text(jibPlugin(pom(repo.resolve("recognizer/pom.xml"))), "container", "environment", "DJL_CACHE_DIR");
        assertTrue(onVolume(recognizer, imageDjl), "the image's own DJL_CACHE_DIR " + imageDjl + " is on no volume");
    }

    private JsonNode container(String manifest) throws Exception {
        return Manifests.trees(Files.readString(k8s.resolve(manifest))).get(0)
                .path("spec").path("template").path("spec").path("containers").get(0);
    }

    private static boolean onVolume(JsonNode container, String path) {
        for (JsonNode m : container.path("volumeMounts")) {
            String at = m.path("mountPath").asText();
            if (!m.path("readOnly").asBoolean() && (path.equals(at) || path.startsWith(at + "/"))) {
                return true;
            }
        }
        return false;
    }

    private static Document pom(Path file) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
    }

    private static String property(Document pom, String name) {
        Element props = (Element) pom.getDocumentElement().getElementsByTagName("properties").item(0);
        return props.getElementsByTagName(name).item(0).getTextContent().trim();
    }

    /** The jib-maven-plugin element with a configuration (the parent's pluginManagement, a module's profile). */
    private static Element jibPlugin(Document pom) {
        NodeList ids = pom.getElementsByTagName("artifactId");
        for (int i = 0; i < ids.getLength(); i++) {
            if ("jib-maven-plugin".equals(ids.item(i).getTextContent().trim())) {
                Element plugin = (Element) ids.item(i).getParentNode();
                if (plugin.getElementsByTagName("configuration").getLength() > 0) {
                    return plugin;
                }
            }
        }
        throw new AssertionError("no configured jib-maven-plugin in " + pom.getDocumentURI());
    }

    private static String text(Element e, String... path) {
        Element at = e;
        for (String p : path) {
            NodeList l = at.getElementsByTagName(p);
            if (l.getLength() == 0) {
                throw new AssertionError("no <" + String.join("><", path) + "> in the Jib configuration");
            }
            at = (Element) l.item(0);
        }
        return at.getTextContent().trim();
    }
}
