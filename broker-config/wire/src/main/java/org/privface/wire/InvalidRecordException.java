package org.privface.wire;

/** A record that breaks the wire contract. The message says which rule, never the payload. */
public class InvalidRecordException extends RuntimeException {
    public InvalidRecordException(String reason) {
        super(reason);
    }

    public InvalidRecordException(String reason, Throwable cause) {
        super(reason, cause);
    }
}
