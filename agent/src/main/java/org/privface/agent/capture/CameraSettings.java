package org.privface.agent.capture;

import io.micronaut.context.annotation.EachProperty;
import io.micronaut.context.annotation.Parameter;
import org.privface.agent.policy.PolicyOverride;

/**
 * {@code agent.cameras.<camera>.*}: where a camera streams from, how faces are detected in it,
 * and any local privacy overrides for it (which can only lower ε below the site's).
 */
@EachProperty("agent.cameras")
public class CameraSettings extends PolicyOverride {
    private final String camera;
    /** rtsp://, http(s):// MJPEG, /dev/videoN, a video file or an image folder. */
    private String url;
    private Integer minFaceSize;
    private Double scaleFactor;
    private Integer minNeighbors;
    private String cascade;
    private Integer maxDetectWidth;
    /** haar, yunet or ultraface; unset: agent.detector. */
    private String detector;

    public CameraSettings(@Parameter String camera) {
        this.camera = camera;
    }

    public String camera() { return camera; }
    public String getUrl() { return url; }
    public void setUrl(String url) { this.url = url; }
    public Integer getMinFaceSize() { return minFaceSize; }
    public void setMinFaceSize(Integer minFaceSize) { this.minFaceSize = minFaceSize; }
    public Double getScaleFactor() { return scaleFactor; }
    public void setScaleFactor(Double scaleFactor) { this.scaleFactor = scaleFactor; }
    public Integer getMinNeighbors() { return minNeighbors; }
    public void setMinNeighbors(Integer minNeighbors) { this.minNeighbors = minNeighbors; }
    public String getCascade() { return cascade; }
    public void setCascade(String cascade) { this.cascade = cascade; }
    public Integer getMaxDetectWidth() { return maxDetectWidth; }
    public void setMaxDetectWidth(Integer maxDetectWidth) { this.maxDetectWidth = maxDetectWidth; }
    public String getDetector() { return detector; }
    public void setDetector(String detector) { this.detector = detector; }
}
