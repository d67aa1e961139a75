package org.privface.wire;

/** Hard limits of the wire contract, kept in one place for producers and consumers alike. */
public final class WireLimits {
    /** The only schema version this build writes and reads. */
    public static final int SCHEMA_VERSION = 1;

    /**
     * Largest vector a record may carry. Well below the 2,914 pixels of a 47x62 crop, so no
     * record can carry a face image, whatever a buggy or hostile producer puts in it.
     */
    public static final int MAX_DIMENSION = 512;

    /** Longest identifier or label; too short to smuggle a crop as text. */
    public static final int MAX_ID_LENGTH = 128;

    /** Largest encoded record accepted: MAX_DIMENSION floats plus generous room for ids. */
    public static final int MAX_RECORD_BYTES = 8 * 1024;

    /** Largest sanitized image a record may carry: RDP's 64×64, and only when the gateway enables image release. */
    public static final int MAX_IMAGE_PIXELS = 64 * 64;

    /** Largest encoded record that carries a sanitized image. */
    public static final int MAX_RECORD_BYTES_WITH_IMAGE = MAX_RECORD_BYTES + 4 * MAX_IMAGE_PIXELS + 64;

    /** Most people a gallery model may hold (C). */
    public static final int MAX_GALLERY_IDENTITIES = 1000;

    /** Largest encoded gallery model: under Kafka's default 1 MiB message limit. */
    public static final int MAX_GALLERY_BYTES = 1_000_000;

    /** The only mechanism an answer record may name: exact k-ary randomized response. */
    public static final String ANSWER_MECHANISM = "RR";

    /** The only mechanism whose output image is itself the protected release. */
    public static final String IMAGE_MECHANISM = "RDP";

    /** Identifiers appear in topic names and metrics, so they use Kafka's topic alphabet. */
    public static final String ID_PATTERN = "[A-Za-z0-9._-]+";

    private WireLimits() {
    }
}
