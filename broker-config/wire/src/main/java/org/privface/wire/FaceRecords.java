package org.privface.wire;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.message.BadHeaderException;
import org.apache.avro.message.MissingSchemaException;
import org.privface.wire.avro.FaceAnswer;
import org.privface.wire.avro.FaceGallery;
import org.privface.wire.avro.PerturbedFace;
import org.privface.wire.avro.RecognitionResult;
import org.privface.wire.avro.RecordKind;

/**
 * Encodes, decodes and validates the wire records. Avro single-object encoding carries the
 * schema fingerprint in every message, so a record written against another schema is rejected
 * instead of being misread.
 */
public final class FaceRecords {
    private static final Pattern ID = Pattern.compile(WireLimits.ID_PATTERN);

    private FaceRecords() {
    }

    public static byte[] encode(PerturbedFace face) {
        validate(face);
        return toBytes(() -> PerturbedFace.getEncoder().encode(face));
    }

    /** Every earlier writer schema of PerturbedFace, so records already in topics still decode. */
    private static final List<Schema> FACE_HISTORY = history("PerturbedFace-r1.avsc", "PerturbedFace-r2.avsc",
            "PerturbedFace-r3.avsc");

    private static final org.apache.avro.message.BinaryMessageDecoder<PerturbedFace> FACE_DECODER = faceDecoder();

    /** Writer schemas by fingerprint, for {@link AvroBounds}. */
    private static final Map<Long, Schema> FACE_WRITERS = byFingerprint(PerturbedFace.getClassSchema(), FACE_HISTORY);
    private static final Map<Long, Schema> RESULT_WRITERS = byFingerprint(RecognitionResult.getClassSchema(), List.of());
    private static final Map<Long, Schema> ANSWER_WRITERS = byFingerprint(FaceAnswer.getClassSchema(), List.of());
    /** FaceGallery revision 1 (no calibration ε or rule): a compacted gallery topic may still hold one. */
    private static final List<Schema> GALLERY_HISTORY = history("FaceGallery-r1.avsc");
    private static final Map<Long, Schema> GALLERY_WRITERS = byFingerprint(FaceGallery.getClassSchema(), GALLERY_HISTORY);
    private static final org.apache.avro.message.BinaryMessageDecoder<FaceGallery> GALLERY_DECODER = galleryDecoder();
    /** κ's denominator in an answer record: RandomizedResponse.KEEP_BITS = 62. */
    private static final long KEEP_DENOMINATOR = 1L << 62;

    private static List<Schema> history(String... files) {
        List<Schema> out = new java.util.ArrayList<>();
        for (String old : files) {
            try (var in = FaceRecords.class.getResourceAsStream("/org/privface/wire/schemas/history/" + old)) {
                if (in == null) {
                    throw new IllegalStateException("schema history " + old + " missing from the classpath");
                }
                out.add(new Schema.Parser().parse(in));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return List.copyOf(out);
    }

    private static org.apache.avro.message.BinaryMessageDecoder<PerturbedFace> faceDecoder() {
        var d = PerturbedFace.createDecoder(null);
        FACE_HISTORY.forEach(d::addSchema);
        return d;
    }

    private static org.apache.avro.message.BinaryMessageDecoder<FaceGallery> galleryDecoder() {
        var d = FaceGallery.createDecoder(null);
        GALLERY_HISTORY.forEach(d::addSchema);
        return d;
    }

    private static Map<Long, Schema> byFingerprint(Schema current, List<Schema> older) {
        Map<Long, Schema> m = new java.util.HashMap<>();
        m.put(SchemaNormalization.parsingFingerprint64(current), current);
        older.forEach(s -> m.put(SchemaNormalization.parsingFingerprint64(s), s));
        return Map.copyOf(m);
    }

    public static PerturbedFace decodeFace(byte[] bytes) {
        checkSize(bytes, WireLimits.MAX_RECORD_BYTES_WITH_IMAGE);
        AvroBounds.check(bytes, FACE_WRITERS);
        PerturbedFace face = fromBytes(bytes, () -> FACE_DECODER.decode(bytes));
        if (face.getSanitizedImage() == null && bytes.length > WireLimits.MAX_RECORD_BYTES) {
            throw new InvalidRecordException("record of " + bytes.length + " bytes exceeds " + WireLimits.MAX_RECORD_BYTES);
        }
        validate(face);
        return face;
    }

    /**
     * Decodes a record read from a per-site topic and checks it belongs there: an enrollment
     * topic carries only ENROLLMENT records, a query topic only QUERY records, each of that site.
     */
    public static PerturbedFace decodeFromTopic(String topic, byte[] bytes) {
        PerturbedFace f = decodeFace(bytes);
        RecordKind expected = topic.endsWith(".enrollment") ? RecordKind.ENROLLMENT : RecordKind.QUERY;
        if (f.getKind() != expected) {
            throw new InvalidRecordException(f.getKind() + " record on " + expected + " topic " + topic);
        }
        String site = org.privface.wire.topics.Topics.siteOf(topic);
        if (!f.getSiteId().equals(site)) {
            throw new InvalidRecordException("record of site " + f.getSiteId() + " on site " + site + "'s topic");
        }
        return f;
    }

    /** The perturbed vector as a float array, for models. */
    public static float[] vector(PerturbedFace f) {
        List<Float> v = f.getVector();
        float[] out = new float[v.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.get(i);
        }
        return out;
    }

    public static byte[] encode(RecognitionResult result) {
        validate(result);
        return toBytes(() -> RecognitionResult.getEncoder().encode(result));
    }

    public static RecognitionResult decodeResult(byte[] bytes) {
        checkSize(bytes, WireLimits.MAX_RECORD_BYTES);
        AvroBounds.check(bytes, RESULT_WRITERS);
        RecognitionResult result = fromBytes(bytes, () -> RecognitionResult.getDecoder().decode(bytes));
        validate(result);
        return result;
    }

    public static byte[] encode(FaceAnswer answer) {
        validate(answer);
        return toBytes(() -> FaceAnswer.getEncoder().encode(answer));
    }

    public static FaceAnswer decodeAnswer(byte[] bytes) {
        checkSize(bytes, WireLimits.MAX_RECORD_BYTES);
        AvroBounds.check(bytes, ANSWER_WRITERS);
        FaceAnswer a = fromBytes(bytes, () -> FaceAnswer.getDecoder().decode(bytes));
        validate(a);
        return a;
    }

    /** Decodes an answer read from {@code privface.<site>.answer} and checks it is that site's. */
    public static FaceAnswer decodeAnswerFromTopic(String topic, byte[] bytes) {
        FaceAnswer a = decodeAnswer(bytes);
        String site = org.privface.wire.topics.Topics.siteOf(topic);
        if (!a.getSiteId().equals(site)) {
            throw new InvalidRecordException("answer of site " + a.getSiteId() + " on site " + site + "'s topic");
        }
        return a;
    }

    public static byte[] encode(FaceGallery gallery) {
        validate(gallery);
        byte[] out = toBytes(() -> FaceGallery.getEncoder().encode(gallery));
        checkSize(out, WireLimits.MAX_GALLERY_BYTES);
        return out;
    }

    /**
     * Decodes a gallery model read from {@code privface.<site>.gallery} and checks it is that
     * site's. Nothing here says who made it: the gateway checks the signature
     * ({@link org.privface.wire.control.SignedControl#GALLERY_DOMAIN}) before it decodes.
     */
    public static FaceGallery decodeGalleryFromTopic(String topic, byte[] bytes) {
        checkSize(bytes, WireLimits.MAX_GALLERY_BYTES);
        AvroBounds.check(bytes, GALLERY_WRITERS);
        FaceGallery g = fromBytes(bytes, () -> GALLERY_DECODER.decode(bytes));
        validate(g);
        String site = org.privface.wire.topics.Topics.siteOf(topic);
        if (!g.getSiteId().equals(site)) {
            throw new InvalidRecordException("gallery of site " + g.getSiteId() + " on site " + site + "'s topic");
        }
        return g;
    }

    /** A gallery model's templates as C rows of k. */
    public static double[][] templates(FaceGallery g) {
        int k = g.getK();
        List<Double> flat = g.getTemplates();
        double[][] out = new double[g.getLabels().size()][k];
        for (int i = 0; i < flat.size(); i++) {
            out[i / k][i % k] = flat.get(i);
        }
        return out;
    }

    /** C rows of k, row by row, as the record's flat list. */
    public static List<Double> flatTemplates(double[][] templates) {
        List<Double> out = new java.util.ArrayList<>();
        for (double[] row : templates) {
            for (double v : row) {
                out.add(v);
            }
        }
        return out;
    }

    /**
     * Every rule an answer record must satisfy, including that its stated ε is not below the ε its
     * keep probability spends (ln(a·C/(2^62 − a)), checked here in doubles to a relative 1e-9; the
     * gateway states it rounded up from the integers).
     */
    public static void validate(FaceAnswer a) {
        envelope(a.getSchemaVersion(), a.getEventId(), a.getSiteId(), a.getCameraId(), a.getTrackId(),
                a.getCaptureTimestamp());
        var g = a.getGallery();
        if (g == null) {
            throw new InvalidRecordException("gallery missing");
        }
        if (g.getVersion() < 1) {
            throw new InvalidRecordException("gallery.version must be at least 1, was " + g.getVersion());
        }
        int c = g.getIdentities();
        if (c < 1 || c > WireLimits.MAX_GALLERY_IDENTITIES) {
            throw new InvalidRecordException("gallery.identities " + c + " outside [1, " + WireLimits.MAX_GALLERY_IDENTITIES + "]");
        }
        id("gallery.basisId", g.getBasisId());
        if (a.getOutput() < 0 || a.getOutput() > c) {
            throw new InvalidRecordException("output " + a.getOutput() + " outside [0, " + c + "]");
        }
        if ((a.getLabel() == null) != (a.getOutput() == c)) {
            throw new InvalidRecordException("label must be null exactly when output is unknown (" + c + ")");
        }
        if (a.getLabel() != null) {
            label(a.getLabel());
        }
        var m = a.getMechanism();
        if (m == null || !WireLimits.ANSWER_MECHANISM.equals(m.getName())) {
            throw new InvalidRecordException("mechanism must be " + WireLimits.ANSWER_MECHANISM);
        }
        if (m.getEpsilonCovers() == null) {
            throw new InvalidRecordException("mechanism.epsilonCovers missing");
        }
        long keep = m.getKeepNumerator();
        // κ in (1/(C + 1), 1): the true answer is kept more often than any other output.
        if (keep <= 0 || keep >= KEEP_DENOMINATOR || java.math.BigInteger.valueOf(keep)
                .multiply(java.math.BigInteger.valueOf(c + 1L)).compareTo(java.math.BigInteger.valueOf(KEEP_DENOMINATOR)) <= 0) {
            throw new InvalidRecordException("mechanism.keepNumerator " + keep + " is not a keep probability above 1/(C + 1)");
        }
        positiveFinite("mechanism.epsilonPerFace", m.getEpsilonPerFace());
        double spent = Math.log(keep) + Math.log(c) - Math.log((double) (KEEP_DENOMINATOR - keep));
        if (m.getEpsilonPerFace() < spent * (1 - 1e-9)) {
            throw new InvalidRecordException("mechanism.epsilonPerFace " + m.getEpsilonPerFace()
                    + " is below the " + spent + " its keep probability spends");
        }
        var t = a.getTrack();
        if (t != null) {
            if (t.getReleaseIndex() < 1) {
                throw new InvalidRecordException("track.releaseIndex must be at least 1, was " + t.getReleaseIndex());
            }
            positiveFinite("track.epsilonBudget", t.getEpsilonBudget());
            positiveFinite("track.epsilonSpentInWindow", t.getEpsilonSpentInWindow());
            if (t.getEpsilonSpentInWindow() > t.getEpsilonBudget() * (1 + 1e-9)) {
                throw new InvalidRecordException("track spent " + t.getEpsilonSpentInWindow() + ", over its budget "
                        + t.getEpsilonBudget());
            }
            if (t.getBudgetPolicy() == null || t.getBudgetPolicy().isBlank()
                    || t.getBudgetPolicy().length() > WireLimits.MAX_ID_LENGTH) {
                throw new InvalidRecordException("track.budgetPolicy missing or too long");
            }
            if ((t.getPersonEpsilonBudget() != null) != t.getLinking()) {
                throw new InvalidRecordException("track.personEpsilonBudget is set exactly when linking is on");
            }
            if (t.getPersonEpsilonBudget() != null) {
                positiveFinite("track.personEpsilonBudget", t.getPersonEpsilonBudget());
            }
        }
    }

    /** Every rule a gallery model must satisfy: bounded, one unit template per distinct label. */
    public static void validate(FaceGallery g) {
        if (g.getSchemaVersion() != WireLimits.SCHEMA_VERSION) {
            throw new InvalidRecordException("unsupported schemaVersion " + g.getSchemaVersion());
        }
        site(g.getSiteId());
        if (g.getVersion() < 1) {
            throw new InvalidRecordException("version must be at least 1, was " + g.getVersion());
        }
        if (g.getBuiltAt() == null) {
            throw new InvalidRecordException("builtAt missing");
        }
        id("basisId", g.getBasisId());
        int k = g.getK();
        if (k < 1 || k > WireLimits.MAX_DIMENSION) {
            throw new InvalidRecordException("k " + k + " outside [1, " + WireLimits.MAX_DIMENSION + "]");
        }
        List<String> labels = g.getLabels();
        if (labels == null || labels.isEmpty() || labels.size() > WireLimits.MAX_GALLERY_IDENTITIES) {
            throw new InvalidRecordException("a gallery holds 1 to " + WireLimits.MAX_GALLERY_IDENTITIES + " labels");
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (String l : labels) {
            if (l == null) {
                throw new InvalidRecordException("label missing");
            }
            label(l);
            if (!seen.add(l)) {
                throw new InvalidRecordException("label " + l + " appears twice");
            }
        }
        List<Double> t = g.getTemplates();
        if (t == null || t.size() != (long) labels.size() * k) {
            throw new InvalidRecordException("templates must hold C x k = " + labels.size() + " x " + k + " values");
        }
        for (int c = 0; c < labels.size(); c++) {
            double n = 0;
            for (int i = 0; i < k; i++) {
                Double v = t.get(c * k + i);
                if (v == null || !Double.isFinite(v)) {
                    throw new InvalidRecordException("template " + c + " holds a non-finite value");
                }
                n += v * v;
            }
            if (Math.abs(Math.sqrt(n) - 1) > 1e-6) {
                throw new InvalidRecordException("template " + c + " is not a unit vector");
            }
        }
        if (Double.isNaN(g.getThreshold())) {
            throw new InvalidRecordException("threshold is NaN");
        }
        if (g.getEnrollmentReleases() < labels.size()) {
            throw new InvalidRecordException("enrollmentReleases " + g.getEnrollmentReleases() + " below C " + labels.size());
        }
        var cal = g.getCalibration();
        if (cal != null) {
            id("calibration.strangerSet", cal.getStrangerSet());
            if (cal.getStrangers() < 1 || cal.getAccepted() < 0 || cal.getAccepted() > cal.getStrangers()) {
                throw new InvalidRecordException("calibration needs 0 <= accepted <= strangers, strangers >= 1");
            }
            if (!(cal.getTargetRate() >= 0 && cal.getTargetRate() <= 1)) {
                throw new InvalidRecordException("calibration.targetRate outside [0, 1]");
            }
            Double eps = cal.getEpsilon();
            if (eps != null && !(eps > 0 && Double.isFinite(eps))) {
                throw new InvalidRecordException("calibration.epsilon must be positive and finite, was " + eps);
            }
            if (cal.getRule() != null) {
                id("calibration.rule", cal.getRule());
            }
        }
    }

    /** The checks every record released from a face shares: version, ids, site and capture time. */
    private static void envelope(int schemaVersion, String eventId, String siteId, String cameraId,
                                 String trackId, Object captureTimestamp) {
        if (schemaVersion != WireLimits.SCHEMA_VERSION) {
            throw new InvalidRecordException("unsupported schemaVersion " + schemaVersion);
        }
        id("eventId", eventId);
        site(siteId);
        id("cameraId", cameraId);
        id("trackId", trackId);
        if (captureTimestamp == null) {
            throw new InvalidRecordException("captureTimestamp missing");
        }
    }

    /** Every rule a perturbed face must satisfy; the recognizer dead-letters records that fail. */
    public static void validate(PerturbedFace f) {
        envelope(f.getSchemaVersion(), f.getEventId(), f.getSiteId(), f.getCameraId(), f.getTrackId(),
                f.getCaptureTimestamp());
        var m = f.getMechanism();
        if (m == null) {
            throw new InvalidRecordException("mechanism missing");
        }
        id("mechanism.name", m.getName());
        id("mechanism.sensitivityMode", m.getSensitivityMode());
        id("mechanism.basisId", m.getBasisId());
        positiveFinite("epsilonPerCoordinate", m.getEpsilonPerCoordinate());
        positiveFinite("epsilonPerFace", m.getEpsilonPerFace());
        positiveFinite("noiseScale", m.getNoiseScale());
        if (!(m.getDelta() >= 0 && m.getDelta() < 1)) {
            throw new InvalidRecordException("delta must be in [0, 1), was " + m.getDelta());
        }
        if (m.getMu() != null) {
            positiveFinite("mu", m.getMu());
            if (m.getDelta() == 0) {
                throw new InvalidRecordException("a mu-GDP release states its epsilon at some delta > 0");
            }
        }
        // A face is at least one coordinate, so it can never be cheaper than one coordinate.
        if (m.getEpsilonPerFace() < m.getEpsilonPerCoordinate() * (1 - 1e-9)) {
            throw new InvalidRecordException("epsilonPerFace " + m.getEpsilonPerFace()
                    + " is below epsilonPerCoordinate " + m.getEpsilonPerCoordinate());
        }
        List<Float> v = f.getVector();
        if (v == null || f.getDimension() != v.size()) {
            throw new InvalidRecordException("dimension " + f.getDimension() + " does not match vector length "
                    + (v == null ? "null" : v.size()));
        }
        if (f.getDimension() < 1 || f.getDimension() > WireLimits.MAX_DIMENSION) {
            throw new InvalidRecordException("dimension " + f.getDimension() + " outside [1, " + WireLimits.MAX_DIMENSION + "]");
        }
        for (int i = 0; i < v.size(); i++) {
            Float x = v.get(i);
            if (x == null || !Float.isFinite(x)) {
                throw new InvalidRecordException("vector[" + i + "] is not a finite number");
            }
        }
        boolean labelled = f.getEnrollmentLabel() != null;
        if (f.getKind() == RecordKind.ENROLLMENT && !labelled) {
            throw new InvalidRecordException("ENROLLMENT record without enrollmentLabel");
        }
        if (f.getKind() == RecordKind.QUERY && labelled) {
            throw new InvalidRecordException("QUERY record must not carry an enrollmentLabel");
        }
        if (labelled) {
            label(f.getEnrollmentLabel());
        }
        var t = f.getTrack();
        if (t != null) {
            if (t.getReleaseIndex() < 1) {
                throw new InvalidRecordException("track.releaseIndex must be at least 1, was " + t.getReleaseIndex());
            }
            positiveFinite("track.epsilonBudget", t.getEpsilonBudget());
            positiveFinite("track.epsilonSpentInWindow", t.getEpsilonSpentInWindow());
            // Rounding of k shares of ε/k may exceed the cap by a few ulps, never more.
            if (t.getEpsilonSpentInWindow() > t.getEpsilonBudget() * (1 + 1e-9)) {
                throw new InvalidRecordException("track spent " + t.getEpsilonSpentInWindow() + ", over its budget "
                        + t.getEpsilonBudget());
            }
            // Revision 4 states the per-person bound only with linking on: the policy's cap, never a spend.
            Double personCap = t.getPersonEpsilonBudget();
            if (personCap != null) {
                positiveFinite("track.personEpsilonBudget", personCap);
            }
            if ((personCap != null) != Boolean.TRUE.equals(t.getLinking())) {
                throw new InvalidRecordException("track.personEpsilonBudget must be set exactly when track.linking is true");
            }
            if (t.getBudgetPolicy() == null || t.getBudgetPolicy().isBlank()
                    || t.getBudgetPolicy().length() > WireLimits.MAX_ID_LENGTH) {
                throw new InvalidRecordException("track.budgetPolicy missing or too long");
            }
        }
        var img = f.getSanitizedImage();
        if (img != null) {
            if (!WireLimits.IMAGE_MECHANISM.equals(m.getName())) {
                throw new InvalidRecordException("sanitizedImage is only allowed for " + WireLimits.IMAGE_MECHANISM
                        + ", not " + m.getName());
            }
            List<Float> px = img.getPixels();
            if (img.getWidth() < 1 || img.getHeight() < 1 || px == null
                    || (long) img.getWidth() * img.getHeight() != px.size() || px.size() > WireLimits.MAX_IMAGE_PIXELS) {
                throw new InvalidRecordException("sanitizedImage must be width*height <= " + WireLimits.MAX_IMAGE_PIXELS
                        + " pixels");
            }
            for (Float x : px) {
                if (x == null || !(x >= 0f && x <= 1f)) {
                    throw new InvalidRecordException("sanitizedImage pixels must be in [0, 1]");
                }
            }
        }
    }

    public static void validate(RecognitionResult r) {
        if (r.getSchemaVersion() != WireLimits.SCHEMA_VERSION) {
            throw new InvalidRecordException("unsupported schemaVersion " + r.getSchemaVersion());
        }
        id("eventId", r.getEventId());
        site(r.getSiteId());
        id("cameraId", r.getCameraId());
        id("trackId", r.getTrackId());
        id("modelVersion", r.getModelVersion());
        if (r.getPredictedLabel() != null) {
            label(r.getPredictedLabel());
        }
        if (!(r.getConfidence() >= 0f && r.getConfidence() <= 1f)) {
            throw new InvalidRecordException("confidence " + r.getConfidence() + " outside [0, 1]");
        }
        positiveFinite("epsilonPerFace", r.getEpsilonPerFace());
    }

    private static void id(String field, String value) {
        if (value == null || value.isEmpty()) {
            throw new InvalidRecordException(field + " missing");
        }
        if (value.length() > WireLimits.MAX_ID_LENGTH) {
            throw new InvalidRecordException(field + " longer than " + WireLimits.MAX_ID_LENGTH + " characters");
        }
        if (!ID.matcher(value).matches()) {
            throw new InvalidRecordException(field + " has characters outside " + WireLimits.ID_PATTERN);
        }
    }

    /** A site id names the site's topics, so it uses their narrower alphabet (no dots). */
    private static void site(String value) {
        id("siteId", value);
        try {
            org.privface.wire.topics.Topics.checkSite(value);
        } catch (IllegalArgumentException e) {
            throw new InvalidRecordException("siteId cannot name a site's topics: it must be 1 to 64 of [A-Za-z0-9_-]");
        }
    }

    private static void label(String label) {
        if (label.isBlank() || label.length() > WireLimits.MAX_ID_LENGTH) {
            throw new InvalidRecordException("label empty or longer than " + WireLimits.MAX_ID_LENGTH + " characters");
        }
        if (!ID.matcher(label).matches()) {
            throw new InvalidRecordException("label has characters outside " + WireLimits.ID_PATTERN);
        }
    }

    private static void positiveFinite(String field, double value) {
        if (!(value > 0) || !Double.isFinite(value)) {
            throw new InvalidRecordException(field + " must be positive and finite, was " + value);
        }
    }

    private static void checkSize(byte[] bytes, int max) {
        if (bytes == null || bytes.length == 0) {
            throw new InvalidRecordException("empty record");
        }
        if (bytes.length > max) {
            throw new InvalidRecordException("record of " + bytes.length + " bytes exceeds " + max);
        }
    }

    /** The record kind whose known schema (current or history) has the fingerprint of a single-object record, or null. */
    private static String kindOfFingerprint(byte[] bytes) {
        if (bytes == null || bytes.length < 10) {
            return null;
        }
        long fp = ByteBuffer.wrap(bytes, 2, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
        for (Map.Entry<String, Map<Long, Schema>> k : Map.of("PerturbedFace", FACE_WRITERS, "RecognitionResult", RESULT_WRITERS,
                "FaceAnswer", ANSWER_WRITERS, "FaceGallery", GALLERY_WRITERS).entrySet()) {
            if (k.getValue().containsKey(fp)) {
                return k.getKey();
            }
        }
        return null;
    }

    private interface IoSupplier<T> {
        T get() throws IOException;
    }

    private static byte[] toBytes(IoSupplier<ByteBuffer> encode) {
        try {
            ByteBuffer buf = encode.get();
            byte[] out = new byte[buf.remaining()];
            buf.get(out);
            return out;
        } catch (IOException e) {
            throw new InvalidRecordException("cannot encode record: " + e.getMessage(), e);
        }
    }

    private static <T> T fromBytes(byte[] bytes, IoSupplier<T> decode) {
        try {
            return decode.get();
        } catch (MissingSchemaException e) {
            // Another kind's schema (a result on a query topic) is bad input; a fingerprint no schema of
            // this build has is most likely a newer revision, which a consumer parks instead.
            String other = kindOfFingerprint(bytes);
            if (other != null) {
                throw new InvalidRecordException("unknown schema fingerprint for this kind: a " + other + " record", e);
            }
            throw new UnknownSchemaException("unknown schema fingerprint (a newer revision?)", e);
        } catch (BadHeaderException e) {
            throw new InvalidRecordException("not an Avro single-object record", e);
        } catch (IOException | RuntimeException e) {
            // Avro reports truncated or garbled bodies with assorted runtime exceptions.
            throw new InvalidRecordException("malformed record: " + e.getClass().getSimpleName(), e);
        }
    }
}
