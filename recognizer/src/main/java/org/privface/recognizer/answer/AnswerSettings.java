package org.privface.recognizer.answer;

import java.nio.file.Path;
import java.time.Duration;

import io.micronaut.context.annotation.ConfigurationProperties;
import org.privface.privacy.answer.Gallery;

/** {@code recognizer.answer.*}: the sites' gallery models and the answers read back (docs/recognizer.md). */
@ConfigurationProperties("recognizer.answer")
public class AnswerSettings {
    /** The recognizer's Ed25519 private key (PKCS#8, base64; SignedControl writes one); unset, no gallery is published. */
    private Path signingKeyFile;
    /** The key id the gateways list in agent.answer.gallery-keys. */
    private String keyId = "recognizer";
    /** Public strangers' projections (PublicStrangers); unset, galleries are closed-set. */
    private Path strangersFile;
    /** The strangers file's SHA-256 (hex), pinned: a file that does not match it is refused at start. */
    private String strangersSha256;

    public String getStrangersSha256() { return strangersSha256; }
    public void setStrangersSha256(String strangersSha256) { this.strangersSha256 = strangersSha256; }
    /**
     * The ε per answer to calibrate a site's gallery for only until one of its gateways reports the
     * ε it answers with (status topic, {@code answer.answerEpsilon}); from then on the gateways'
     * ε is used and the gallery is rebuilt whenever it changes (GalleryService).
     */
    private double epsilon = 20;
    /** The rate at which an answer should name a stranger. */
    private double releasedRate = 0.01;
    /**
     * How the threshold bounds the strangers' rate: the upper end of its 95 % Wilson interval
     * (wilson), or the measured rate (estimate), which measured 1.3–2.3 % for a 1 % target on
     * other people (docs/frontier.md).
     */
    private Gallery.Bound calibrationBound = Gallery.Bound.WILSON;
    /** A site's gallery is rebuilt once no enrollment arrived for this long. */
    private Duration quietPeriod = Duration.ofSeconds(5);
    /** A published gallery is rebuilt and republished after this long, well within the gateways' maximum age (7 days). */
    private Duration republishAfter = Duration.ofDays(1);

    public Duration getRepublishAfter() { return republishAfter; }
    public void setRepublishAfter(Duration republishAfter) { this.republishAfter = republishAfter; }

    public Path getSigningKeyFile() { return signingKeyFile; }
    public void setSigningKeyFile(Path signingKeyFile) { this.signingKeyFile = signingKeyFile; }
    public String getKeyId() { return keyId; }
    public void setKeyId(String keyId) { this.keyId = keyId; }
    public Path getStrangersFile() { return strangersFile; }
    public void setStrangersFile(Path strangersFile) { this.strangersFile = strangersFile; }
    public double getEpsilon() { return epsilon; }
    public void setEpsilon(double epsilon) { this.epsilon = epsilon; }
    public double getReleasedRate() { return releasedRate; }
    public void setReleasedRate(double releasedRate) { this.releasedRate = releasedRate; }
    public Gallery.Bound getCalibrationBound() { return calibrationBound; }
    public void setCalibrationBound(Gallery.Bound calibrationBound) { this.calibrationBound = calibrationBound; }
    public Duration getQuietPeriod() { return quietPeriod; }
    public void setQuietPeriod(Duration quietPeriod) { this.quietPeriod = quietPeriod; }
}
