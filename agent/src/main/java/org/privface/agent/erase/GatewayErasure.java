package org.privface.agent.erase;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.ProducerRecord;
import org.privface.agent.enroll.EnrollmentLedger;
import org.privface.agent.publish.FacePublisher;
import org.privface.agent.publish.Uplink;
import org.privface.wire.erasure.PersonKeys;
import org.privface.wire.topics.Topics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forgets one enrolled person on this gateway (docs/operations.md, "Forgetting a person"): finds the
 * person folder of the enrollment folder whose label has the command's pseudonym, and for each of
 * its images enrolled before the command was issued
 * <ol>
 *   <li>waits until the uplink has sent what it holds, so no record of the person is still spooled
 *       behind the tombstones;</li>
 *   <li>writes a tombstone for every key its releases can have had ({@link PersonKeys#recordKey},
 *       indices 1 … the image's releases in its ledger entry), acknowledged by the broker;</li>
 *   <li>erases its ledger entry down to its spent ε ({@link EnrollmentLedger#erase});</li>
 *   <li>overwrites the image file with zeros and deletes it, then the folder once empty. A symbolic
 *       link is removed, never followed: the file it points to is not the gateway's.</li>
 * </ol>
 * Images added after the command was issued (a new consent) are left alone, so replaying an old
 * command cannot erase a later enrollment. The caller holds the enrollment's lock, so no
 * publication of the person runs in between.
 */
public final class GatewayErasure {
    private static final Logger LOG = LoggerFactory.getLogger(GatewayErasure.class);

    private final String site;
    private final Path folder;
    private final EnrollmentLedger ledger;
    private final PersonKeys keys;
    private final FacePublisher publisher;
    private final Uplink uplink;
    private final Duration wait;

    public GatewayErasure(String site, Path folder, EnrollmentLedger ledger, PersonKeys keys, FacePublisher publisher,
                          Uplink uplink, Duration wait) {
        this.site = site;
        this.folder = folder;
        this.ledger = ledger;
        this.keys = keys;
        this.publisher = publisher;
        this.uplink = uplink;
        this.wait = wait;
    }

    /** The label folder of a pseudonym, if this gateway enrolls that person. */
    public java.util.Optional<Path> personFolder(String pseudonym) throws IOException {
        if (folder == null || !Files.isDirectory(folder)) {
            return java.util.Optional.empty();
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(folder)) {
            for (Path p : ds) {
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) && pseudonym.equals(keys.pseudonym(site,
                        p.getFileName().toString()))) {
                    return java.util.Optional.of(p);
                }
            }
        }
        return java.util.Optional.empty();
    }

    /**
     * Erases the person's images enrolled before {@code issuedBefore}; returns the counts for the
     * completion report (images, tombstones, ledger entries). Idempotent: a second run finds nothing.
     */
    public Map<String, String> erase(String pseudonym, Instant issuedBefore) throws IOException, InterruptedException {
        PersonKeys.checkPseudonym(pseudonym);
        Map<String, String> counts = new LinkedHashMap<>();
        java.util.Optional<Path> dir = personFolder(pseudonym);
        List<Path> files = new ArrayList<>();
        List<String> hashes = new ArrayList<>();
        if (dir.isPresent()) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir.get())) {
                for (Path f : ds) {
                    if (!Files.isRegularFile(f)) {
                        continue;
                    }
                    String h = EnrollmentLedger.sha256(f);
                    EnrollmentLedger.Entry e = ledger == null ? null : ledger.entry(h);
                    Instant since = e != null ? e.first() : Files.getLastModifiedTime(f, LinkOption.NOFOLLOW_LINKS).toInstant();
                    if (since.isAfter(issuedBefore)) {
                        LOG.info("erasure of {}: an image enrolled after the command was issued is kept", pseudonym);
                        continue;
                    }
                    files.add(f);
                    hashes.add(h);
                }
            }
        }
        // 1. Nothing of the person left in the spool behind the tombstones.
        if (uplink != null && !uplink.drain(wait)) {
            throw new IOException("the uplink did not empty its spool within " + wait + ": tombstones not written yet");
        }
        // 2. Tombstones for every key the person's releases can have had, acknowledged.
        List<CompletableFuture<Void>> acks = new ArrayList<>();
        for (String h : hashes) {
            EnrollmentLedger.Entry e = ledger == null ? null : ledger.entry(h);
            long n = e == null ? 0 : e.releases();
            // Every form the image may have gone out in (PersonKeys.FORMS); a tombstone of a key never
            // written costs nothing and removes nothing.
            for (int form = 0; form < PersonKeys.FORMS; form++) {
                for (int i = 1; i <= n; i++) {
                    CompletableFuture<Void> done = new CompletableFuture<>();
                    publisher.sendRaw(new ProducerRecord<>(Topics.enrollment(site), PersonKeys.recordKey(pseudonym,
                            keys.imageTag(h, form), i), null), (md, ex) -> {
                        if (ex != null) {
                            done.completeExceptionally(ex);
                        } else {
                            done.complete(null);
                        }
                    });
                    acks.add(done);
                }
            }
        }
        try {
            CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IOException("tombstones not acknowledged: " + e, e);
        }
        // 3. The ledger keeps the ε only; 4. the files go.
        int entries = ledger == null ? 0 : ledger.erase(hashes, Instant.now());
        for (Path f : files) {
            wipe(f);
        }
        if (dir.isPresent()) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir.get())) {
                if (!ds.iterator().hasNext()) {
                    Files.delete(dir.get());
                }
            }
        }
        counts.put("images", Integer.toString(files.size()));
        counts.put("tombstones", Integer.toString(acks.size()));
        counts.put("ledgerEntries", Integer.toString(entries));
        LOG.info("erasure of {}: {} image(s) wiped, {} tombstone(s) acknowledged, {} ledger entr(ies) reduced to their ε",
                pseudonym, files.size(), acks.size(), entries);
        return counts;
    }

    /** Overwrites a regular file with zeros, syncs and deletes it; a link is only removed. */
    static void wipe(Path f) throws IOException {
        if (Files.isSymbolicLink(f)) {
            Files.delete(f);
            return;
        }
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
            long size = ch.size();
            ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(Math.max(size, 1), 1 << 16));
            for (long pos = 0; pos < size; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), size - pos));
                pos += ch.write(zeros, pos);
            }
            ch.force(true);
        }
        Files.delete(f);
    }
}
