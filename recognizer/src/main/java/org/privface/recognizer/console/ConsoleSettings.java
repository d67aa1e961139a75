package org.privface.recognizer.console;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.micronaut.context.annotation.ConfigurationProperties;

/** The operator console's configuration, bound from {@code recognizer.console.*}. */
@ConfigurationProperties("recognizer.console")
public class ConsoleSettings {
    /** Operator name → PBKDF2 hash from {@link PasswordHash}; nobody can log in while it is empty. */
    private Map<String, String> operators = new LinkedHashMap<>();
    /** A file of {@code name:hash} lines (a mounted secret), read at start, added to {@link #operators}. */
    private Path operatorsFile;
    /**
     * Secret (at least 32 characters) that signs the login tokens. Replicas behind one address
     * need the same one; unset, each start draws a random one and earlier logins end.
     */
    private String tokenSecret;
    /** How often the throughput and recognition series take a sample. */
    private Duration sampleInterval = Duration.ofSeconds(5);
    /** Samples kept per site (720 × 5 s = one hour). */
    private int samplesKept = 720;
    /** A gateway whose latest report is older than this is shown as not live. */
    private Duration liveWithin = Duration.ofSeconds(35);
    /** Where proposals are appended as JSON lines; unset keeps them in memory only. */
    private Path auditFile;
    /**
     * The operator signing key (base64 PKCS#8 Ed25519, as written by
     * {@code org.privface.wire.control.SignedControl}) in a file, usually a mounted Secret. Without
     * it (or {@link #signingKey}) the console cannot propose: gateways obey signed records only.
     */
    private Path signingKeyFile;
    /** The same key inline; for tests and the demo. */
    private String signingKey;
    /** The name under which gateways list this key's public half ({@code agent.control.operator-keys.<id>}). */
    private String signingKeyId = "console";

    public Map<String, String> getOperators() { return operators; }
    public void setOperators(Map<String, String> operators) { this.operators = operators; }
    public Path getOperatorsFile() { return operatorsFile; }
    public void setOperatorsFile(Path operatorsFile) { this.operatorsFile = operatorsFile; }
    public String getTokenSecret() { return tokenSecret; }
    public void setTokenSecret(String tokenSecret) { this.tokenSecret = tokenSecret; }
    public Duration getSampleInterval() { return sampleInterval; }
    public void setSampleInterval(Duration sampleInterval) { this.sampleInterval = sampleInterval; }
    public int getSamplesKept() { return samplesKept; }
    public void setSamplesKept(int samplesKept) { this.samplesKept = samplesKept; }
    public Duration getLiveWithin() { return liveWithin; }
    public void setLiveWithin(Duration liveWithin) { this.liveWithin = liveWithin; }
    public Path getAuditFile() { return auditFile; }
    public void setAuditFile(Path auditFile) { this.auditFile = auditFile; }
    public Path getSigningKeyFile() { return signingKeyFile; }
    public void setSigningKeyFile(Path signingKeyFile) { this.signingKeyFile = signingKeyFile; }
    public String getSigningKey() { return signingKey; }
    public void setSigningKey(String signingKey) { this.signingKey = signingKey; }
    public String getSigningKeyId() { return signingKeyId; }
    public void setSigningKeyId(String signingKeyId) { this.signingKeyId = signingKeyId; }
}
