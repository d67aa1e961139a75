package org.privface.recognizer;

import java.time.Duration;

import io.micronaut.context.annotation.ConfigurationProperties;

/** The recognizer's configuration, bound from {@code recognizer.*}. */
@ConfigurationProperties("recognizer")
public class RecognizerSettings {
    private String groupId = "privface-recognizer";
    /** A model is (re)trained once this many enrollments exist and none arrived for the quiet period. */
    private int minEnrollments = 10;
    private Duration quietPeriod = Duration.ofSeconds(2);
    /** "small" or "peep-paper". */
    private String architecture = "small";
    /** Below this confidence a face is reported as unknown rather than forced onto an identity. */
    private double unknownThreshold = 0.0;
    private int maxBatch = 512;
    /** Where trained models are kept and reloaded from on restart; none when unset. */
    private java.nio.file.Path modelDir;
    /** Names this replica in the models it trains; random unless set (e.g. to the pod name). */
    private String instanceId = java.util.UUID.randomUUID().toString();

    public String getGroupId() { return groupId; }
    public void setGroupId(String groupId) { this.groupId = groupId; }
    public int getMinEnrollments() { return minEnrollments; }
    public void setMinEnrollments(int minEnrollments) { this.minEnrollments = minEnrollments; }
    public Duration getQuietPeriod() { return quietPeriod; }
    public void setQuietPeriod(Duration quietPeriod) { this.quietPeriod = quietPeriod; }
    public String getArchitecture() { return architecture; }
    public void setArchitecture(String architecture) { this.architecture = architecture; }
    public double getUnknownThreshold() { return unknownThreshold; }
    public void setUnknownThreshold(double unknownThreshold) { this.unknownThreshold = unknownThreshold; }
    public int getMaxBatch() { return maxBatch; }
    public java.nio.file.Path getModelDir() { return modelDir; }
    public String getInstanceId() { return instanceId; }
    public void setInstanceId(String instanceId) { this.instanceId = instanceId; }
    public void setModelDir(java.nio.file.Path modelDir) { this.modelDir = modelDir; }
    public void setMaxBatch(int maxBatch) { this.maxBatch = maxBatch; }
}
