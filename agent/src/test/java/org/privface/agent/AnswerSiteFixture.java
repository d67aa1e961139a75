package org.privface.agent;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.privface.agent.detect.DeepModels;
import org.privface.agent.detect.FaceModels;
import org.privface.kafka.testkit.RealKafka;
import org.privface.wire.control.SignedControl;

/**
 * The whole-agent answer tests' site: lfw5 split into enrollment folders and a query folder (links,
 * not copies), and the agent's properties for the deep stack answering against a trusted gallery key.
 */
final class AnswerSiteFixture {
    private AnswerSiteFixture() {
    }

    /**
     * Links each lfw5 person's first {@code enroll} images under {@code dir/enroll/<person>}, the next
     * {@code query} into {@code dir/query}; skips without lfw5.
     *
     * @return how many people
     */
    static int splitLfw5(Path dir, int enroll, int query) throws Exception {
        Path lfw5 = DeepModels.datasetOrSkip("lfw5");
        List<Path> people;
        try (Stream<Path> s = Files.list(lfw5)) {
            people = s.filter(Files::isDirectory).sorted().toList();
        }
        for (Path person : people) {
            List<Path> files = DeepModels.images(person, enroll + query);
            for (int i = 0; i < files.size(); i++) {
                Path to = i < enroll ? dir.resolve("enroll").resolve(person.getFileName()) : dir.resolve("query");
                Files.createDirectories(to);
                Files.createSymbolicLink(to.resolve(files.get(i).getFileName()), files.get(i));
            }
        }
        return people.size();
    }

    /** The agent's properties: YuNet, EMBEDDING sign-cap at {@code epsilon}, {@code release}, the gallery key trusted. */
    static Map<String, Object> props(Path dir, String site, String epsilon, String release, PublicKey galleryKey) {
        return new HashMap<>(Map.ofEntries(
                Map.entry("kafka.bootstrap.servers", RealKafka.bootstrapServers()),
                Map.entry("kafka.health.enabled", "false"),
                Map.entry("micronaut.server.port", "-1"),
                Map.entry("agent.site-id", site),
                Map.entry("agent.detector", "yunet"),
                Map.entry("agent.yunet-model", FaceModels.sharedModels().resolve(FaceModels.YUNET_FILE).toAbsolutePath().toString()),
                Map.entry("agent.mechanism", "embedding"),
                Map.entry("agent.sensitivity-mode", "sign-cap"),
                Map.entry("agent.epsilon", epsilon),
                Map.entry("agent.enroll-folder", dir.resolve("enroll").toString()),
                Map.entry("agent.source", dir.resolve("query").toString()),
                Map.entry("agent.ledger", dir.resolve("ledger.csv").toString()),
                Map.entry("agent.data-dir", dir.resolve("data").toString()),
                Map.entry("agent.control.topic-enabled", "false"),
                Map.entry("agent.answer.release", release),
                Map.entry("agent.answer.gallery-keys.recognizer-1", SignedControl.base64(galleryKey))));
    }
}
