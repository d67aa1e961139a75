package org.privface.wire;

/**
 * A record whose schema fingerprint this build does not know: most likely written by a newer
 * revision (a gateway upgraded before the recognizer). Unlike a malformed record it is not bad
 * input, so a consumer parks or skips it, never dead-letters and commits it, and a consumer that
 * knows the revision reads it later (docs/operations.md, "Upgrades"; docs/wire.md, "Schema history").
 */
public class UnknownSchemaException extends InvalidRecordException {
    public UnknownSchemaException(String reason, Throwable cause) {
        super(reason, cause);
    }
}
