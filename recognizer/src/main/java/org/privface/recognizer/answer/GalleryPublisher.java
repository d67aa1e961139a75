package org.privface.recognizer.answer;

import java.security.PrivateKey;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.privface.wire.FaceRecords;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;

/**
 * Signs a site's gallery model with the recognizer's Ed25519 key (as the console signs control
 * records, in the gallery domain) and writes it to the site's compacted gallery topic, key = site.
 */
public final class GalleryPublisher {
    /** The name in the signer header of a gallery. */
    public static final String SIGNER = "recognizer";

    private final PrivateKey key;
    private final String keyId;

    public GalleryPublisher(PrivateKey key, String keyId) {
        SignedControl.checkName("key id", keyId);
        this.key = key;
        this.keyId = keyId;
    }

    /** The signed record, not yet sent. */
    public ProducerRecord<String, byte[]> record(FaceGallery g, long issuedAt) {
        byte[] body = FaceRecords.encode(g);
        String site = g.getSiteId();
        ProducerRecord<String, byte[]> r = new ProducerRecord<>(Topics.gallery(site), site, body);
        SignedControl.sign(SignedControl.GALLERY_DOMAIN, key, keyId, site, SIGNER, issuedAt, body).addTo(r.headers());
        return r;
    }

    /** Sends and waits for the broker's acknowledgement. */
    public void publish(Producer<String, byte[]> producer, FaceGallery g) throws InterruptedException, ExecutionException {
        producer.send(record(g, System.currentTimeMillis())).get();
    }
}
