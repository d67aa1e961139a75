package org.privface.recognizer.erase;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.micronaut.context.annotation.ConfigurationProperties;

/** {@code recognizer.erasure.*}: whose erasure commands the recognizer carries out (docs/operations.md). */
@ConfigurationProperties("recognizer.erasure")
public class ErasureSettings {
    /** Key id → base64 X.509 Ed25519 public key of an operator, as the gateways list them (agent.control.operator-keys). */
    private Map<String, String> operatorKeys = new LinkedHashMap<>();
    /** A file of {@code key-id: base64} lines, as agent.control.keys-file. */
    private Path keysFile;
    /** A command issued further in the future than this is refused. */
    private Duration maxClockSkew = Duration.ofMinutes(5);
    /** How long the completion report waits for the site's gallery to be rebuilt. */
    private Duration galleryWait = Duration.ofSeconds(60);

    public Map<String, String> getOperatorKeys() { return operatorKeys; }
    public void setOperatorKeys(Map<String, String> operatorKeys) { this.operatorKeys = operatorKeys; }
    public Path getKeysFile() { return keysFile; }
    public void setKeysFile(Path keysFile) { this.keysFile = keysFile; }
    public Duration getMaxClockSkew() { return maxClockSkew; }
    public void setMaxClockSkew(Duration maxClockSkew) { this.maxClockSkew = maxClockSkew; }
    public Duration getGalleryWait() { return galleryWait; }
    public void setGalleryWait(Duration galleryWait) { this.galleryWait = galleryWait; }
}
