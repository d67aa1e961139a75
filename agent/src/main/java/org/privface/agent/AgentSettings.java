package org.privface.agent;

import java.nio.file.Path;

import io.micronaut.context.annotation.ConfigurationProperties;

/** The agent's configuration, bound from {@code agent.*} in application.yml or AGENT_* variables. */
@ConfigurationProperties("agent")
public class AgentSettings {
    private String siteId = "demo-site";
    private String cameraId = "cam-1";
    /** Image folder or video file to read frames from. */
    private Path source;
    /** Folder-per-person faces on the gateway: fits the basis and, if enabled, enrolls them. */
    private Path enrollFolder;
    /** Where the fitted basis is kept on the gateway; reused when present. */
    private Path basisFile;
    private boolean publishEnrollments = true;
    /** Independent releases per enrolled image; each one spends the per-face ε again. */
    private int enrollReleases = 1;
    private int components = 8;
    private String sensitivityMode = "l1-clip";
    /** Per face in mode "vector"; per coordinate in the paper modes. */
    private double epsilon = 16.0;
    private boolean exitWhenDone;
    /** Optional local CSV of eventId,origin for evaluating a run against known labels. Stays on the gateway. */
    private Path ledger;
    private String cascade = "haarcascades/haarcascade_frontalface_default.xml";
    private double scaleFactor = 1.1;
    private int minNeighbors = 4;
    private int minFaceSize = 40;

    public String getSiteId() { return siteId; }
    public void setSiteId(String siteId) { this.siteId = siteId; }
    public String getCameraId() { return cameraId; }
    public void setCameraId(String cameraId) { this.cameraId = cameraId; }
    public Path getSource() { return source; }
    public void setSource(Path source) { this.source = source; }
    public Path getEnrollFolder() { return enrollFolder; }
    public void setEnrollFolder(Path enrollFolder) { this.enrollFolder = enrollFolder; }
    public Path getBasisFile() { return basisFile; }
    public void setBasisFile(Path basisFile) { this.basisFile = basisFile; }
    public boolean isPublishEnrollments() { return publishEnrollments; }
    public void setPublishEnrollments(boolean publishEnrollments) { this.publishEnrollments = publishEnrollments; }
    public int getEnrollReleases() { return enrollReleases; }
    public void setEnrollReleases(int enrollReleases) { this.enrollReleases = enrollReleases; }
    public int getComponents() { return components; }
    public void setComponents(int components) { this.components = components; }
    public String getSensitivityMode() { return sensitivityMode; }
    public void setSensitivityMode(String sensitivityMode) { this.sensitivityMode = sensitivityMode; }
    public double getEpsilon() { return epsilon; }
    public void setEpsilon(double epsilon) { this.epsilon = epsilon; }
    public boolean isExitWhenDone() { return exitWhenDone; }
    public void setExitWhenDone(boolean exitWhenDone) { this.exitWhenDone = exitWhenDone; }
    public Path getLedger() { return ledger; }
    public void setLedger(Path ledger) { this.ledger = ledger; }
    public String getCascade() { return cascade; }
    public void setCascade(String cascade) { this.cascade = cascade; }
    public double getScaleFactor() { return scaleFactor; }
    public void setScaleFactor(double scaleFactor) { this.scaleFactor = scaleFactor; }
    public int getMinNeighbors() { return minNeighbors; }
    public void setMinNeighbors(int minNeighbors) { this.minNeighbors = minNeighbors; }
    public int getMinFaceSize() { return minFaceSize; }
    public void setMinFaceSize(int minFaceSize) { this.minFaceSize = minFaceSize; }
}
