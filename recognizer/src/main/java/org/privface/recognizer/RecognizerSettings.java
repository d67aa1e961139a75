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
    /** Retrain once this many enrollments arrived since the last training (and the quiet period passed). */
    private int retrainAfter = 1;
    /** Retrain at least this often while new enrollments wait; unset means only by count. */
    private Duration retrainInterval;
    /** Bearer token for state-changing endpoints; unset disables them. */
    private String adminToken;
    /** "small" or "peep-paper". */
    private String architecture = "small";
    /** Below this confidence a face is reported as unknown rather than forced onto an identity. */
    private double unknownThreshold = 0.0;
    private int maxBatch = 512;
    /**
     * A face farther than this many class radii (95th percentile of the class' enrollment
     * distances) from its predicted class is unknown; 0 switches the distance test off.
     */
    private double openSetMargin = 1.5;
    /** Which model a version serves: best (held-out enrollments decide), mlp or ncm (docs/recognizer.md). */
    private String serve = "best";
    /** Public strangers' releases the open-set threshold is calibrated on; none when unset. */
    private java.nio.file.Path strangersFile;
    /** The open-set FPIR the threshold is calibrated for (needs 20/FPIR calibration strangers). */
    private double openSetFpir = 0.01;
    /** Where trained models are kept and reloaded from on restart; none when unset. */
    private java.nio.file.Path modelDir;
    /**
     * How long a query waits for its model (from the record's timestamp) before it is
     * dead-lettered, so a query for a model that never comes cannot stall its partition.
     */
    private Duration modelWait = Duration.ofMinutes(10);
    /** Every n-th enrollment of a person is held out to estimate validation accuracy; below 2 switches it off. */
    private int validationEvery = 5;
    /** Names this replica in the models it trains; random unless set (e.g. to the pod name). */
    private String instanceId = java.util.UUID.randomUUID().toString();
    /** Stored model versions kept per model key; older ones are deleted (docs/operations.md, "Retention"). */
    private int modelVersionsKept = 5;

    public int getModelVersionsKept() { return modelVersionsKept; }
    public void setModelVersionsKept(int modelVersionsKept) { this.modelVersionsKept = modelVersionsKept; }

    /** Models trained at once, across the sites this replica owns. */
    private int trainingThreads = 2;
    /**
     * How long the group waits for a silent replica before its sites move (consumer session
     * timeout of the owners' group; the broker's group.min.session.timeout.ms, 6 s by default, is the floor).
     */
    private Duration ownershipSessionTimeout = Duration.ofSeconds(10);

    /**
     * The site ids this fleet of replicas shares (a regular expression over the site id); every
     * site by default. Two fleets on one cluster, each with its own group id, split sites this way.
     */
    private String sites = "[A-Za-z0-9_-]+";

    public String getSites() { return sites; }
    public void setSites(String sites) { this.sites = sites; }
    public int getTrainingThreads() { return trainingThreads; }
    public void setTrainingThreads(int trainingThreads) { this.trainingThreads = trainingThreads; }
    public Duration getOwnershipSessionTimeout() { return ownershipSessionTimeout; }
    public void setOwnershipSessionTimeout(Duration t) { this.ownershipSessionTimeout = t; }
    public String getGroupId() { return groupId; }
    public void setGroupId(String groupId) { this.groupId = groupId; }
    public int getMinEnrollments() { return minEnrollments; }
    public void setMinEnrollments(int minEnrollments) { this.minEnrollments = minEnrollments; }
    public Duration getQuietPeriod() { return quietPeriod; }
    public int getRetrainAfter() { return retrainAfter; }
    public void setRetrainAfter(int retrainAfter) { this.retrainAfter = retrainAfter; }
    public Duration getRetrainInterval() { return retrainInterval; }
    public void setRetrainInterval(Duration retrainInterval) { this.retrainInterval = retrainInterval; }
    public String getAdminToken() { return adminToken; }
    public void setAdminToken(String adminToken) { this.adminToken = adminToken; }
    public void setQuietPeriod(Duration quietPeriod) { this.quietPeriod = quietPeriod; }
    public String getArchitecture() { return architecture; }
    public void setArchitecture(String architecture) { this.architecture = architecture; }
    public double getUnknownThreshold() { return unknownThreshold; }
    public void setUnknownThreshold(double unknownThreshold) { this.unknownThreshold = unknownThreshold; }
    public int getMaxBatch() { return maxBatch; }
    public int getValidationEvery() { return validationEvery; }
    public Duration getModelWait() { return modelWait; }
    public void setModelWait(Duration modelWait) { this.modelWait = modelWait; }
    public void setValidationEvery(int validationEvery) { this.validationEvery = validationEvery; }
    public double getOpenSetMargin() { return openSetMargin; }
    public void setOpenSetMargin(double openSetMargin) { this.openSetMargin = openSetMargin; }
    public java.nio.file.Path getModelDir() { return modelDir; }
    public String getInstanceId() { return instanceId; }
    public void setInstanceId(String instanceId) { this.instanceId = instanceId; }
    public void setModelDir(java.nio.file.Path modelDir) { this.modelDir = modelDir; }
    public String getServe() { return serve; }
    public void setServe(String serve) { this.serve = serve; }
    public java.nio.file.Path getStrangersFile() { return strangersFile; }
    public void setStrangersFile(java.nio.file.Path strangersFile) { this.strangersFile = strangersFile; }
    public double getOpenSetFpir() { return openSetFpir; }
    public void setOpenSetFpir(double openSetFpir) { this.openSetFpir = openSetFpir; }
    public void setMaxBatch(int maxBatch) { this.maxBatch = maxBatch; }
}
