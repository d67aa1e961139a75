package org.privface.agent;

import java.util.ArrayList;
import java.util.List;

import io.micronaut.context.annotation.Context;
import io.micronaut.context.annotation.Factory;
import org.privface.agent.capture.CameraSettings;
import org.privface.agent.detect.YunetPin;

/** Checks the pinned models while the agent starts, from the settings read here (detect takes plain values). */
@Factory
class ModelPins {
    @Context
    YunetPin yunetPin(AgentSettings settings, List<CameraSettings> cameras) {
        List<String> detectors = new ArrayList<>();
        detectors.add(settings.getDetector());
        cameras.forEach(c -> detectors.add(c.getDetector()));
        return new YunetPin(detectors, settings.getYunetModel());
    }
}
