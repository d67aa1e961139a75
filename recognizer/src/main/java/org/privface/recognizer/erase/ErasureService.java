package org.privface.recognizer.erase;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.PublicKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import io.micronaut.runtime.server.event.ServerStartupEvent;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.recognizer.RecognizerSettings;
import org.privface.recognizer.answer.GalleryService;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.recognizer.polling.PollingWorker;
import org.privface.wire.KafkaClientProperties;
import org.privface.wire.control.SignedControl;
import org.privface.wire.erasure.Erasures;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out the operators' erasure commands on every site's erasure topic
 * (docs/operations.md, "Forgetting a person"): a command signed in the erasure domain by a
 * configured operator key, for the topic's site, not from the future, makes the recognizer drop the
 * person's enrollments (and refuse them on any later replay), withdraw and delete every model
 * version that names them and retrain, and rebuild the site's gallery without them (or withdraw
 * it); then it reports its completion on the same topic as {@code recognizer:<instance>}.
 *
 * <p>The topics are read from their beginning at every start, so an erasure holds across restarts
 * even where a gateway has not tombstoned its records yet; a command is reported once per instance
 * (its own earlier reports are read too). Replaying an old command is harmless: it reaches only
 * records written before it was issued.
 */
@Singleton
public class ErasureService extends PollingWorker {
    private static final Logger LOG = LoggerFactory.getLogger(ErasureService.class);

    private final ErasureSettings settings;
    private final KafkaClientProperties kafka;
    private final ModelRegistry registry;
    private final GalleryService galleries;
    private final String component;
    private final Map<String, PublicKey> keys;
    private final Set<String> reported = new HashSet<>();
    /** Commands carried out while replaying, whose report waits until the replay shows none was sent. */
    private final Map<String, Runnable> unreported = new LinkedHashMap<>();
    private volatile KafkaProducer<String, byte[]> producer;
    private volatile long completed;
    private volatile long refused;

    public ErasureService(ErasureSettings settings, KafkaClientProperties kafka, ModelRegistry registry,
                          GalleryService galleries, RecognizerSettings recognizer) throws IOException {
        super("erasure-reader");
        this.settings = settings;
        this.kafka = kafka;
        this.registry = registry;
        this.galleries = galleries;
        this.component = "recognizer:" + recognizer.getInstanceId();
        this.keys = keys(settings);
    }

    static Map<String, PublicKey> keys(ErasureSettings s) throws IOException {
        Map<String, String> encoded = new LinkedHashMap<>(s.getOperatorKeys());
        if (s.getKeysFile() != null) {
            for (String line : Files.readAllLines(s.getKeysFile(), StandardCharsets.UTF_8)) {
                String l = line.strip();
                if (!l.isEmpty() && !l.startsWith("#")) {
                    int colon = l.indexOf(':');
                    if (colon < 1) {
                        throw new IllegalArgumentException("recognizer.erasure.keys-file: a line is not key-id: base64");
                    }
                    encoded.put(l.substring(0, colon).strip(), l.substring(colon + 1).strip());
                }
            }
        }
        Map<String, PublicKey> out = new LinkedHashMap<>();
        encoded.forEach((id, b64) -> {
            SignedControl.checkName("recognizer.erasure.operator-keys key id", id);
            out.put(id, SignedControl.publicKey(b64));
        });
        return Map.copyOf(out);
    }

    @Override
    public void onApplicationEvent(ServerStartupEvent event) {
        if (keys.isEmpty()) {
            LOG.info("recognizer.erasure.operator-keys unset: erasure commands are not carried out here");
            return;
        }
        super.onApplicationEvent(event);
    }

    @Override
    protected void runLoop() throws InterruptedException {
        Properties c = kafka.consumer();
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "privface-recognizer-erasure");
        Properties p = kafka.producer();
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-recognizer-erasure");
        try (KafkaConsumer<String, byte[]> cons = new KafkaConsumer<>(c, new StringDeserializer(), new ByteArrayDeserializer());
             KafkaProducer<String, byte[]> prod = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
            register(cons);
            producer = prod;
            Set<TopicPartition> assigned = new HashSet<>();
            Map<TopicPartition, Long> replayEnd = new java.util.HashMap<>();
            long nextRefresh = 0;
            while (running()) {
                if (System.currentTimeMillis() >= nextRefresh) {
                    Set<TopicPartition> before = new HashSet<>(assigned);
                    if (followFromBeginning(cons, Topics.ALL_ERASURE, assigned)) {
                        List<TopicPartition> fresh = assigned.stream().filter(tp -> !before.contains(tp)).toList();
                        replayEnd.putAll(cons.endOffsets(fresh, Duration.ofSeconds(10)));
                    }
                    nextRefresh = System.currentTimeMillis() + 2_000;
                }
                if (assigned.isEmpty()) {
                    Thread.sleep(200);
                    continue;
                }
                for (ConsumerRecord<String, byte[]> r : cons.poll(Duration.ofMillis(200))) {
                    handle(r);
                }
                // Once the replay is read, report what was carried out and never reported.
                if (!unreported.isEmpty() && replayEnd.entrySet().stream().allMatch(e -> cons.position(e.getKey()) >= e.getValue())) {
                    List<Runnable> send = new ArrayList<>(unreported.values());
                    unreported.clear();
                    send.forEach(Runnable::run);
                }
            }
        } catch (WakeupException e) {
            // stop()
        }
    }

    private void handle(ConsumerRecord<String, byte[]> r) {
        if (!Erasures.isCommand(r.value())) {
            try {
                Erasures.Report rep = Erasures.readReport(r.value());
                if (rep.component().equals(component)) {
                    reported.add(rep.request());
                    unreported.remove(rep.request());
                }
            } catch (RuntimeException e) {
                LOG.debug("erasure topic {}@{}: not a report: {}", r.topic(), r.offset(), e.getMessage());
            }
            return;
        }
        Erasures.Command c;
        try {
            c = Erasures.readCommand(r);
        } catch (IllegalArgumentException e) {
            refused++;
            LOG.warn("erasure topic {}@{}: refused, {}", r.topic(), r.offset(), e.getMessage());
            return;
        }
        PublicKey key = keys.get(c.envelope().keyId());
        if (key == null || !SignedControl.verify(SignedControl.ERASURE_DOMAIN, key, c.site(), c.envelope(), r.value())) {
            refused++;
            LOG.warn("erasure topic {}@{}: refused, {}", r.topic(), r.offset(),
                    key == null ? "unknown key " + c.envelope().keyId() : "bad signature");
            return;
        }
        Instant issued = Instant.ofEpochMilli(c.envelope().issuedAt());
        if (issued.isAfter(Instant.now().plus(settings.getMaxClockSkew()))) {
            refused++;
            LOG.warn("erasure topic {}@{}: refused, issued in the future ({})", r.topic(), r.offset(), issued);
            return;
        }
        try {
            ModelRegistry.Erased er = registry.erase(c.site(), c.person(), issued);
            // The gallery is built from the registry's enrollments, so it loses what the registry lost.
            int gallery = er.records();
            if (gallery > 0) {
                galleries.erased(c.site());
            }
            boolean rebuilt = galleries.awaitRebuilt(c.site(), settings.getGalleryWait());
            boolean named = galleries.names(c.site(), er.labels());
            Map<String, String> counts = new LinkedHashMap<>();
            counts.put("enrollments", Integer.toString(er.records()));
            counts.put("modelsWithdrawn", Integer.toString(er.modelsWithdrawn()));
            counts.put("modelVersionsDeleted", Integer.toString(er.versionsDeleted()));
            counts.put("galleryEnrollments", Integer.toString(gallery));
            counts.put("galleryRebuilt", Boolean.toString(rebuilt && !named));
            completed++;
            Runnable report = () -> {
                try {
                    producer.send(Erasures.report(c.site(), new Erasures.Report(c.person(), c.request(), component,
                            Instant.now(), counts))).get();
                    reported.add(c.request());
                    LOG.info("erasure request {} at {} by {} completed: {}", c.request(), c.site(),
                            c.envelope().operator(), counts);
                } catch (Exception e) {
                    LOG.error("erasure request {}: completion not reported: {}", c.request(), e.toString());
                }
            };
            if (!reported.contains(c.request())) {
                unreported.put(c.request(), report);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            LOG.error("erasure request {} at {} failed: {}", c.request(), c.site(), e.toString());
        }
    }

    public long completed() {
        return completed;
    }

    public long refused() {
        return refused;
    }
}
