package org.privface.localstack;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.privface.wire.WireLimits;
import org.privface.wire.control.SignedControl;
import org.privface.wire.topics.Topics;

/**
 * Reads every record of every topic on a broker (internal topics included) and checks each one
 * against what its topic is declared to carry: the Avro schemas in broker-config/schemas, the JSON
 * of the control and status topics, and an allow-list of headers. Problems are collected, not
 * thrown, so one run reports all of them.
 */
final class TopicAudit {
    /** Longest run of the standard base64 alphabet a field may hold: 48 bytes of payload, far below an 8×8 crop. */
    static final int MAX_BASE64_RUN = 64;
    /** Longest JSON string in a status or control record (error texts included). */
    static final int MAX_JSON_STRING = 512;
    /** Largest record of an internal topic (group metadata, offsets). */
    static final int MAX_INTERNAL_BYTES = 64 * 1024;
    private static final Pattern BASE64_RUN = Pattern.compile("[A-Za-z0-9+/]{" + MAX_BASE64_RUN + ",}={0,2}");
    private static final Pattern ID = Pattern.compile(WireLimits.ID_PATTERN);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Operator keys by id, as the site's gateways trust them: control records must verify with one. */
    final Map<String, PublicKey> operatorKeys = new HashMap<>();
    /** Recognizer keys by id, as the gateways trust them (agent.answer.gallery-keys): gallery records must verify with one. */
    final Map<String, PublicKey> recognizerKeys = new HashMap<>();

    /** One record as it sits on the broker. */
    record Captured(String topic, int partition, long offset, byte[] key, byte[] value, List<Header> headers) {
        long bytes() {
            long n = (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
            for (Header h : headers) {
                n += h.key().getBytes(StandardCharsets.UTF_8).length + (h.value() == null ? 0 : h.value().length);
            }
            return n;
        }
    }

    /** Per topic: records and bytes (key + value + headers). */
    record Volume(long records, long bytes) {
    }

    private final Map<Long, Schema> faceSchemas = new HashMap<>();
    private final Map<Long, Schema> resultSchemas = new HashMap<>();
    private final Map<Long, Schema> answerSchemas = new HashMap<>();
    private final Map<Long, Schema> gallerySchemas = new HashMap<>();
    private final boolean imageRelease;
    final List<String> problems = new ArrayList<>();
    final Map<String, Volume> volume = new TreeMap<>();
    final Map<String, List<GenericRecord>> decoded = new TreeMap<>();

    /**
     * @param schemas      broker-config/schemas: PerturbedFace.avsc, RecognitionResult.avsc, FaceAnswer.avsc,
     *                     FaceGallery.avsc and history/
     * @param imageRelease whether a gateway was configured to release sanitized images
     */
    TopicAudit(Path schemas, boolean imageRelease) throws IOException {
        this.imageRelease = imageRelease;
        List<Path> faces = new ArrayList<>(List.of(schemas.resolve("PerturbedFace.avsc")));
        try (Stream<Path> s = Files.list(schemas.resolve("history"))) {
            s.filter(p -> p.getFileName().toString().startsWith("PerturbedFace")).sorted().forEach(faces::add);
        }
        for (Path p : faces) {
            Schema s = new Schema.Parser().parse(p.toFile());
            noBinaryTypes(s, p.getFileName().toString(), Set.of());
            faceSchemas.put(SchemaNormalization.parsingFingerprint64(s), s);
        }
        Schema r = new Schema.Parser().parse(schemas.resolve("RecognitionResult.avsc").toFile());
        noBinaryTypes(r, "RecognitionResult.avsc", Set.of());
        resultSchemas.put(SchemaNormalization.parsingFingerprint64(r), r);
        Schema a = new Schema.Parser().parse(schemas.resolve("FaceAnswer.avsc").toFile());
        noBinaryTypes(a, "FaceAnswer.avsc", Set.of());
        noArrays(a, "FaceAnswer.avsc");
        answerSchemas.put(SchemaNormalization.parsingFingerprint64(a), a);
        Schema g = new Schema.Parser().parse(schemas.resolve("FaceGallery.avsc").toFile());
        noBinaryTypes(g, "FaceGallery.avsc", Set.of());
        gallerySchemas.put(SchemaNormalization.parsingFingerprint64(g), g);
    }

    Set<Long> faceFingerprints() {
        return faceSchemas.keySet();
    }

    Set<Long> resultFingerprints() {
        return resultSchemas.keySet();
    }

    /** Every record of every topic, internal ones included, from offset 0 to the end offsets read at the start. */
    static List<Captured> readEverything(String bootstrap, Duration timeout) throws Exception {
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        Set<String> topics;
        try (Admin admin = Admin.create(ap)) {
            topics = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get();
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.EXCLUDE_INTERNAL_TOPICS_CONFIG, false);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        List<Captured> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : topics) {
                c.partitionsFor(t, Duration.ofSeconds(10)).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofSeconds(10));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!tps.stream().allMatch(tp -> c.position(tp) >= end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("could not read every topic to its end within " + timeout);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    if (r.offset() < end.get(new TopicPartition(r.topic(), r.partition()))) {
                        out.add(new Captured(r.topic(), r.partition(), r.offset(), r.key(), r.value(),
                                List.of(r.headers().toArray())));
                    }
                }
            }
            // Topics with no record at all still appear in the volume table.
            for (String t : topics) {
                out.add(new Captured(t, -1, -1, null, null, List.of()));
            }
        }
        return out;
    }

    void check(List<Captured> records) {
        for (Captured r : records) {
            if (r.partition() < 0) {
                volume.putIfAbsent(r.topic(), new Volume(0, 0));
                continue;
            }
            volume.merge(r.topic(), new Volume(1, r.bytes()), (a, b) -> new Volume(a.records() + 1, a.bytes() + b.bytes()));
            check(r);
        }
    }

    private void check(Captured r) {
        String where = r.topic() + "/" + r.partition() + "@" + r.offset();
        String t = r.topic();
        if (t.startsWith("__")) {
            internal(r, where);
            return;
        }
        if (r.value() == null && (Topics.ALL_ENROLLMENT.matcher(t).matches() || t.matches("privface\\.[A-Za-z0-9_-]+\\.gallery"))) {
            // A tombstone of an erased person's record, or of a withdrawn gallery: a key, nothing else.
            headers(r, where, Set.of());
            idKey(r, where);
        } else if (Topics.ALL_ENROLLMENT.matcher(t).matches() || Topics.ALL_QUERY.matcher(t).matches()) {
            headers(r, where, Set.of());
            idKey(r, where);
            avro(r, where, faceSchemas, "PerturbedFace");
        } else if (Topics.ALL_ANSWER.matcher(t).matches()) {
            // Only the declared answer fields: the schema has no array, so no vector or pixels can ride along.
            headers(r, where, Set.of());
            idKey(r, where);
            avro(r, where, answerSchemas, "FaceAnswer");
        } else if (t.matches("privface\\.[A-Za-z0-9_-]+\\.gallery")) {
            headers(r, where, Set.of(SignedControl.KEY_HEADER, SignedControl.OPERATOR_HEADER, SignedControl.ISSUED_AT_HEADER,
                    SignedControl.SIGNATURE_HEADER));
            idKey(r, where);
            avro(r, where, gallerySchemas, "FaceGallery");
            signed(r, where, SignedControl.GALLERY_DOMAIN, recognizerKeys);
        } else if (t.equals(Topics.RESULTS)) {
            headers(r, where, Set.of());
            idKey(r, where);
            avro(r, where, resultSchemas, "RecognitionResult");
        } else if (t.equals(Topics.DEAD_LETTER)) {
            // Nothing this run produces is invalid; a dead letter is a copy of a bad record.
            problems.add(where + ": a dead letter (" + header(r, "privface.reason") + ")");
            headers(r, where, Set.of("privface.reason", "privface.source"));
        } else if (t.equals("privface.fleet-sites")) {
            // Each site's owner replica's row for /sites (issue 41): counts, owner, epoch, gallery version.
            headers(r, where, Set.of());
            idKey(r, where);
            json(r, where, FLEET_SITE);
        } else if (Topics.ALL_STATUS.matcher(t).matches()) {
            headers(r, where, Set.of());
            idKey(r, where);
            json(r, where, STATUS);
        } else if (t.matches("privface\\.[A-Za-z0-9_-]+\\.control")) {
            headers(r, where, Set.of(SignedControl.KEY_HEADER, SignedControl.OPERATOR_HEADER, SignedControl.ISSUED_AT_HEADER,
                    SignedControl.SIGNATURE_HEADER));
            idKey(r, where);
            if (r.value() != null) {
                json(r, where, CONTROL);
                signed(r, where, null, operatorKeys);
            }
        } else if (Topics.ALL_ERASURE.matcher(t).matches()) {
            // The erasure audit trail: a signed command or a component's report, pseudonyms and counts only.
            idKey(r, where);
            if (org.privface.wire.erasure.Erasures.isCommand(r.value())) {
                headers(r, where, Set.of(SignedControl.KEY_HEADER, SignedControl.OPERATOR_HEADER,
                        SignedControl.ISSUED_AT_HEADER, SignedControl.SIGNATURE_HEADER));
                try {
                    org.privface.wire.erasure.Erasures.readCommand(new org.apache.kafka.clients.consumer.ConsumerRecord<>(
                            r.topic(), r.partition(), r.offset(), 0L, org.apache.kafka.common.record.TimestampType.CREATE_TIME,
                            0, 0, new String(r.key(), StandardCharsets.UTF_8), r.value(),
                            new org.apache.kafka.common.header.internals.RecordHeaders(
                                    r.headers().toArray(org.apache.kafka.common.header.Header[]::new)),
                            java.util.Optional.empty()));
                } catch (RuntimeException e) {
                    problems.add(where + ": not an erasure command: " + e.getMessage());
                }
                signed(r, where, SignedControl.ERASURE_DOMAIN, operatorKeys);
            } else {
                headers(r, where, Set.of());
                try {
                    org.privface.wire.erasure.Erasures.readReport(r.value());
                } catch (RuntimeException e) {
                    problems.add(where + ": not an erasure report: " + e.getMessage());
                }
            }
        } else {
            problems.add(where + ": a topic nobody declares (" + t + ")");
        }
    }

    // ------------------------------------------------------------------ Avro

    private void avro(Captured r, String where, Map<Long, Schema> declared, String type) {
        byte[] b = r.value();
        if (b == null || b.length < 10 || (b[0] & 0xff) != 0xC3 || b[1] != 0x01) {
            problems.add(where + ": not an Avro single-object record");
            return;
        }
        long fingerprint = ByteBuffer.wrap(b, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        Schema writer = declared.get(fingerprint);
        if (writer == null) {
            problems.add(where + ": written with a schema that is not a declared " + type + " schema");
            return;
        }
        try {
            BinaryDecoder in = DecoderFactory.get().binaryDecoder(b, 10, b.length - 10, null);
            GenericRecord rec = new GenericDatumReader<GenericRecord>(writer).read(null, in);
            if (!in.isEnd()) {
                problems.add(where + ": bytes after the end of the record");
            }
            walk(rec, writer, type, where);
            decoded.computeIfAbsent(r.topic(), k -> new ArrayList<>()).add(rec);
        } catch (IOException | RuntimeException e) {
            problems.add(where + ": does not parse against its declared schema: " + e);
        }
    }

    private void walk(Object value, Schema schema, String path, String where) {
        switch (schema.getType()) {
            case RECORD -> {
                GenericRecord rec = (GenericRecord) value;
                for (Schema.Field f : schema.getFields()) {
                    walk(rec.get(f.pos()), f.schema(), path + "." + f.name(), where);
                }
            }
            case UNION -> {
                int branch = GenericData.get().resolveUnion(schema, value);
                walk(value, schema.getTypes().get(branch), path, where);
            }
            case STRING -> {
                String s = value.toString();
                if (s.length() > WireLimits.MAX_ID_LENGTH) {
                    problems.add(where + ": " + path + " is " + s.length() + " characters");
                }
                base64(s, where + ": " + path);
            }
            case ARRAY -> {
                List<?> a = (List<?>) value;
                if (path.contains("sanitizedImage") && !imageRelease) {
                    problems.add(where + ": " + path + " holds " + a.size() + " pixels with image release off");
                } else if (!path.contains("sanitizedImage") && a.size() > (path.startsWith("FaceGallery.")
                        ? WireLimits.MAX_GALLERY_IDENTITIES * WireLimits.MAX_DIMENSION : WireLimits.MAX_DIMENSION)) {
                    problems.add(where + ": " + path + " holds " + a.size() + " values");
                }
                for (Object x : a) {
                    walk(x, schema.getElementType(), path + "[]", where);
                }
            }
            case FLOAT, DOUBLE -> {
                double d = ((Number) value).doubleValue();
                // A closed-set gallery's threshold is -infinity (every face is someone): declared, and no payload.
                boolean closedSet = path.equals("FaceGallery.threshold") && d == Double.NEGATIVE_INFINITY;
                if (!Double.isFinite(d) && !closedSet) {
                    problems.add(where + ": " + path + " is not finite");
                }
            }
            case BYTES, FIXED, MAP -> problems.add(where + ": " + path + " is a " + schema.getType() + " field");
            default -> {
                // int, long, boolean, enum, null: bounded scalars
            }
        }
    }

    /** A declared schema of scalars only: no array anywhere, so neither a vector nor pixels fit. */
    private static void noArrays(Schema s, String path) {
        switch (s.getType()) {
            case ARRAY -> throw new IllegalStateException(path + " declares an array");
            case RECORD -> s.getFields().forEach(f -> noArrays(f.schema(), path + "." + f.name()));
            case UNION -> s.getTypes().forEach(b -> noArrays(b, path));
            default -> {
            }
        }
    }

    /** The declared schemas themselves: no bytes, fixed or map anywhere, so no pixels fit. */
    private static void noBinaryTypes(Schema s, String path, Set<String> seen) {
        switch (s.getType()) {
            case BYTES, FIXED, MAP -> throw new IllegalStateException(path + " declares a " + s.getType() + " field");
            case RECORD -> {
                if (seen.contains(s.getFullName())) {
                    return;
                }
                Set<String> now = new java.util.HashSet<>(seen);
                now.add(s.getFullName());
                for (Schema.Field f : s.getFields()) {
                    noBinaryTypes(f.schema(), path + "." + f.name(), now);
                }
            }
            case UNION -> s.getTypes().forEach(b -> noBinaryTypes(b, path, seen));
            case ARRAY -> noBinaryTypes(s.getElementType(), path + "[]", seen);
            default -> {
            }
        }
    }

    // ------------------------------------------------------------------ JSON

    /** A JSON shape: an object's allowed keys, each with its own shape (LEAF for a scalar). */
    private record Shape(Map<String, Shape> keys, Shape anyKey, Shape items) {
    }

    private static final Shape LEAF = new Shape(null, null, null);

    /** Keys in order; a key followed by a Shape has that shape, any other key is a scalar. */
    private static Shape obj(Object... items) {
        Map<String, Shape> m = new LinkedHashMap<>();
        for (int i = 0; i < items.length; i++) {
            String k = (String) items[i];
            if (i + 1 < items.length && items[i + 1] instanceof Shape s) {
                m.put(k, s);
                i++;
            } else {
                m.put(k, LEAF);
            }
        }
        return new Shape(m, null, null);
    }

    private static Shape anyKey(Shape each) {
        return new Shape(null, each, null);
    }

    /** A JSON array, each element of the shape given (at most MAX_JSON_ARRAY of them). */
    private static Shape listOf(Shape each) {
        return new Shape(null, null, each);
    }

    private static final int MAX_JSON_ARRAY = 64;

    /** One policy change as a gateway reports it (agent's GatewayState.change). */
    private static final Shape CHANGE = obj("at", "source", "principal", "outcome", "epsilonRequested", "epsilonApplied",
            "version", "reason");

    /** An operator's policy change (agent's PolicyOverride). */
    private static final Shape CONTROL = obj("mechanism", "mode", "epsilon", "budget", "window", "imageRelease");

    /** How a status count was noised (agent's StatusCounts.section). */
    private static final Shape NOISE = obj("unit", "perUnitAtMostOncePer", "epsilonPerCount", "epsilonPerUnitPerDay",
            "epsilonPerUnitPerWindow", "window", "mechanism");

    /** A gateway's report (agent's GatewayState.report, with AgentPipeline's uplink and cameras sections). */
    /** A row of privface.fleet-sites: SiteController.SiteStats, counts only. */
    private static final Shape FLEET_SITE = obj("site", "enrollments", "identified", "unknown", "deadLetters", "duplicates",
            "meanEpsilonPerFace", "models", "owner", "epoch", "galleryVersion");

    private static final Shape STATUS = obj("gateway", "site", "at", "startedAt", "policyVersion",
            "policy", obj("mechanism", "mode", "epsilonPerTrack", "budget", "epsilonPerRelease", "window", "imageRelease"),
            "floor", obj("epsilonMin", "epsilonMax", "windowMin"),
            "lastChange", CHANGE,
            "recentChanges", listOf(CHANGE),
            "uplink", obj("spoolDepth", "spoolBytes", "spoolDropped", "spoolDroppedByReason",
                    obj("FULL", "EVICTED", "TOO_LARGE", "IO_ERROR", "CORRUPT"), "acknowledged", "deliveryFailures",
                    "brokerHealthy"),
            // Exact face, frame and withheld counts stay on the gateway's REST status; the topic gets persons (tracks)
            // seen and held, each at most once a day, noised (StatusCounts), and the frames read.
            "cameras", anyKey(obj("state", "since", "lastFrameAt", "reconnects", "lastError", "frames",
                    "releases", "droppedBySpool", "epsilonSpent", "budgetPolicy",
                    "noised", obj("seen", "withheld", "noise", NOISE))),
            // The enrollment ledger's figures (Enrollment.report), or its error when the ledger cannot open.
            "enrollment", obj("images", "releases", "refusedReleases", "maxComposedEpsilon", "totalComposedEpsilon",
                    "epsilonCap", "releasedThisRun", "refusedThisRun", "withheldUnrecordedThisRun", "error"),
            // Appearance linking's settings and noised counts (GatewayLinking.report); never an embedding, a
            // person id or a person's spend (issue 33).
            "linking", obj("enabled", "budgetScope", "reason", "threshold", "network", "matches", "facesToLink", "disjointViews",
                    "noised", obj("persons", "linkedPersons", "noise", NOISE)),
            // What the noised counts together cost one person (AgentPipeline).
            "statusCounts", obj("unit", "epsilonPerPersonPerWindow", "epsilonPerPersonPerDay", "covers"),
            // The answer release (QueryAnswerer.report): the setting, the ε per answer, the gallery held and why
            // galleries or faces were refused; counts of the gateway's own answers, nothing of a person (issue 38).
            "answer", obj("release", "answerEpsilon", "gallery", obj("version", "identities", "basisId", "builtAt",
                    "calibrationEpsilon", "calibrationRule", "calibrationStrangers", "none", "refused", "lastRefusal"),
                    "answers", "unanswerableBecause", "droppedBySpool",
                    "queriesWithheldBecause", "lastProblem"));

    private void json(Captured r, String where, Shape shape) {
        JsonNode n;
        try {
            n = JSON.readTree(r.value());
        } catch (IOException e) {
            problems.add(where + ": not JSON: " + e.getClass().getSimpleName());
            return;
        }
        json(n, shape, "$", where);
        if (shape == STATUS && n.path("policy").path("imageRelease").asBoolean(false) && !imageRelease) {
            problems.add(where + ": reports image release on");
        }
    }

    private void json(JsonNode n, Shape shape, String path, String where) {
        if (shape == LEAF) {
            if (n.isContainerNode()) {
                problems.add(where + ": " + path + " is a " + n.getNodeType() + " where a scalar is declared");
            } else if (n.isTextual()) {
                String s = n.asText();
                if (s.length() > MAX_JSON_STRING) {
                    problems.add(where + ": " + path + " is " + s.length() + " characters");
                }
                base64(s, where + ": " + path);
            } else if (n.isNumber() && !Double.isFinite(n.asDouble())) {
                problems.add(where + ": " + path + " is not finite");
            }
            return;
        }
        if (shape.items() != null) {
            if (!n.isArray() || n.size() > MAX_JSON_ARRAY) {
                problems.add(where + ": " + path + " is not an array of at most " + MAX_JSON_ARRAY);
                return;
            }
            for (int i = 0; i < n.size(); i++) {
                json(n.get(i), shape.items(), path + "[" + i + "]", where);
            }
            return;
        }
        if (!n.isObject()) {
            problems.add(where + ": " + path + " is not an object");
            return;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Shape s = shape.anyKey() != null ? shape.anyKey() : shape.keys().get(e.getKey());
            if (s == null) {
                problems.add(where + ": " + path + "." + e.getKey() + " is not a declared field");
                continue;
            }
            if (shape.anyKey() != null && (e.getKey().length() > WireLimits.MAX_ID_LENGTH || !ID.matcher(e.getKey()).matches())) {
                problems.add(where + ": " + path + " has a key that is not an identifier");
            }
            json(e.getValue(), s, path + "." + e.getKey(), where);
        }
    }

    // ------------------------------------------------------------------ keys, headers, internal topics

    private void idKey(Captured r, String where) {
        String k = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
        if (k == null || k.length() > WireLimits.MAX_ID_LENGTH || !ID.matcher(k).matches()) {
            problems.add(where + ": key is not an identifier");
        }
    }

    /**
     * A control or gallery record's signature header is 64 bytes no field limit would allow, so it
     * passes only when it verifies with one of {@code keys} ({@link #operatorKeys}, {@link
     * #recognizerKeys}): then the signer's key fixed every byte.
     *
     * @param domain the signature's domain; null for the control domain
     */
    private void signed(Captured r, String where, String domain, Map<String, PublicKey> keys) {
        try {
            SignedControl.Envelope e = SignedControl.Envelope.of(new RecordHeaders(r.headers().toArray(new Header[0])));
            PublicKey key = keys.get(e.keyId());
            if (key == null || !(domain == null ? SignedControl.verify(key, Topics.siteOf(r.topic()), e, r.value())
                    : SignedControl.verify(domain, key, Topics.siteOf(r.topic()), e, r.value()))) {
                problems.add(where + ": signature of key " + e.keyId() + " does not verify (64 bytes of unproven data)");
            }
        } catch (IllegalArgumentException e) {
            problems.add(where + ": " + e.getMessage());
        }
    }

    private void headers(Captured r, String where, Set<String> allowed) {
        for (Header h : r.headers()) {
            if (!allowed.contains(h.key())) {
                problems.add(where + ": header " + h.key() + " is not allowed on this topic");
            } else if (h.value() != null && h.value().length > 512) {
                problems.add(where + ": header " + h.key() + " is " + h.value().length + " bytes");
            } else if (h.value() != null && !h.key().equals(SignedControl.SIGNATURE_HEADER)) {
                base64(new String(h.value(), StandardCharsets.UTF_8), where + ": header " + h.key());
            }
        }
    }

    private static String header(Captured r, String name) {
        for (Header h : r.headers()) {
            if (h.key().equals(name) && h.value() != null) {
                return new String(h.value(), StandardCharsets.UTF_8);
            }
        }
        return "no " + name;
    }

    /** Kafka's own records (group metadata, offsets) are opaque; they must still be small and hold no image. */
    private void internal(Captured r, String where) {
        for (byte[] b : new byte[][] {r.key(), r.value()}) {
            if (b == null) {
                continue;
            }
            if (b.length > MAX_INTERNAL_BYTES) {
                problems.add(where + ": " + b.length + " bytes");
            }
            String magic = imageMagic(b);
            if (magic != null) {
                problems.add(where + ": holds a " + magic + " signature");
            }
            base64(new String(b, StandardCharsets.ISO_8859_1), where);
        }
        if (!r.headers().isEmpty()) {
            problems.add(where + ": headers on an internal record");
        }
    }

    private void base64(String s, String what) {
        if (BASE64_RUN.matcher(s).find()) {
            problems.add(what + " holds a base64-like run of " + MAX_BASE64_RUN + "+ characters");
        }
        String magic = imageMagic(s.getBytes(StandardCharsets.ISO_8859_1));
        if (magic != null) {
            problems.add(what + " holds a " + magic + " signature");
        }
    }

    /** JPEG, PNG, GIF or a PGM/PPM header, anywhere in the bytes. */
    static String imageMagic(byte[] b) {
        for (int i = 0; i + 3 < b.length; i++) {
            int a0 = b[i] & 0xff;
            if (a0 == 0xFF && (b[i + 1] & 0xff) == 0xD8 && (b[i + 2] & 0xff) == 0xFF) {
                return "JPEG";
            }
            if (a0 == 0x89 && b[i + 1] == 'P' && b[i + 2] == 'N' && b[i + 3] == 'G') {
                return "PNG";
            }
            if (a0 == 'G' && b[i + 1] == 'I' && b[i + 2] == 'F' && b[i + 3] == '8') {
                return "GIF";
            }
            if (a0 == 'P' && (b[i + 1] == '5' || b[i + 1] == '6') && (b[i + 2] == '\n' || b[i + 2] == ' ')
                    && Character.isDigit(b[i + 3])) {
                return "PGM/PPM";
            }
        }
        return null;
    }
}
