package org.privface.recognizer.api;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import io.micronaut.serde.ObjectMapper;
import jakarta.inject.Singleton;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.privface.recognizer.RecognizerSettings;
import org.privface.recognizer.ownership.SiteOwnership;
import org.privface.recognizer.polling.PollingWorker;
import org.privface.wire.KafkaClientProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole fleet's per-site statistics, whichever replica answers: every
 * {@value #PUBLISH_MS} ms each replica writes one summary per site it owns to the compacted topic
 * {@value #TOPIC} (key = site; counts and models, no face data), and every replica follows that
 * topic. A site's row is its owner's; after a failover the new owner's row replaces it within one
 * period of the acquisition.
 */
@Singleton
public class FleetSummaries extends PollingWorker {
    private static final Logger LOG = LoggerFactory.getLogger(FleetSummaries.class);
    public static final String TOPIC = "privface.fleet-sites";
    static final long PUBLISH_MS = 5_000;
    /** A summary is a few hundred bytes; anything far larger is not a replica's. */
    private static final int MAX_BYTES = 16 * 1024;

    private final KafkaClientProperties kafka;
    private final RecognizerSettings settings;
    private final SiteOwnership ownership;
    private final ObjectMapper json;
    private final Map<String, SiteController.SiteStats> fleet = new ConcurrentHashMap<>();
    private final io.micrometer.core.instrument.MeterRegistry meters;
    private final org.privface.recognizer.model.ModelRegistry registry;
    private final org.privface.recognizer.answer.GalleryService galleries;

    public FleetSummaries(KafkaClientProperties kafka, RecognizerSettings settings, SiteOwnership ownership,
                          ObjectMapper json, io.micrometer.core.instrument.MeterRegistry meters,
                          org.privface.recognizer.model.ModelRegistry registry,
                          org.privface.recognizer.answer.GalleryService galleries) {
        super("fleet-summaries");
        this.kafka = kafka;
        this.settings = settings;
        this.ownership = ownership;
        this.json = json;
        this.meters = meters;
        this.registry = registry;
        this.galleries = galleries;
    }

    /** This replica's live row of a site, from its meters, models and gallery. */
    SiteController.SiteStats local(String site) {
        return SiteController.stats(meters, registry, galleries, site,
                ownership.owns(site) ? settings.getInstanceId() : null, ownership.epoch(site));
    }

    /** The latest row of every site in the fleet, by site. */
    public Map<String, SiteController.SiteStats> fleet() {
        return new TreeMap<>(fleet);
    }

    @Override
    protected void runLoop() throws Exception {
        Properties cp = kafka.consumer();
        cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        cp.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, false);
        cp.put(ConsumerConfig.CLIENT_ID_CONFIG, "privface-recognizer-fleet");
        Properties pp = kafka.producer();
        pp.put(ProducerConfig.ACKS_CONFIG, "all");
        pp.put(ProducerConfig.CLIENT_ID_CONFIG, "privface-recognizer-fleet");
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(cp, new StringDeserializer(), new ByteArrayDeserializer());
             KafkaProducer<String, byte[]> p = new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer())) {
            register(c);
            boolean assigned = false;
            long nextPublish = 0;
            while (running()) {
                if (!assigned) {
                    var parts = c.partitionsFor(TOPIC, Duration.ofSeconds(10));
                    if (parts == null || parts.isEmpty()) {
                        Thread.sleep(1_000); // not created (yet): no fleet view, /sites shows this replica only
                        continue;
                    }
                    List<TopicPartition> tps = parts.stream().map(pi -> new TopicPartition(TOPIC, pi.partition())).toList();
                    c.assign(tps);
                    c.seekToBeginning(tps);
                    assigned = true;
                }
                for (var rec : c.poll(Duration.ofMillis(500))) {
                    if (rec.key() == null || rec.value() == null || rec.value().length > MAX_BYTES) {
                        continue;
                    }
                    try {
                        SiteController.SiteStats s = json.readValue(rec.value(), SiteController.SiteStats.class);
                        if (s != null && rec.key().equals(s.site())) {
                            fleet.merge(s.site(), s, (old, now) -> now.epoch() >= old.epoch() ? now : old);
                        }
                    } catch (Exception e) {
                        LOG.warn("unreadable fleet summary for {}: {}", rec.key(), e.getClass().getSimpleName());
                    }
                }
                if (System.currentTimeMillis() >= nextPublish) {
                    for (String site : ownership.sites()) {
                        SiteController.SiteStats s = local(site);
                        p.send(new ProducerRecord<>(TOPIC, site, json.writeValueAsBytes(s)));
                    }
                    nextPublish = System.currentTimeMillis() + PUBLISH_MS;
                }
            }
        } catch (WakeupException e) {
            // stop()
        }
    }
}
