package org.privface.recognizer.api;

import java.io.IOException;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import io.micronaut.http.HttpResponse;
import io.micronaut.http.annotation.Body;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.http.annotation.Post;
import io.micronaut.security.annotation.Secured;
import io.micronaut.security.rules.SecurityRule;
import io.micronaut.serde.annotation.Serdeable;
import org.privface.recognizer.RecognizerSettings;
import org.privface.recognizer.model.ModelKey;
import org.privface.recognizer.model.ModelRegistry;
import org.privface.recognizer.model.TrainedModel;

/**
 * Read-only model status and a predict endpoint for one perturbed vector, for logged-in
 * operators (cookie or bearer token from POST /login).
 */
@Controller
@Secured(SecurityRule.IS_AUTHENTICATED)
public class ModelController {
    private final ModelRegistry registry;
    private final RecognizerSettings settings;

    public ModelController(ModelRegistry registry, RecognizerSettings settings) {
        this.registry = registry;
        this.settings = settings;
    }

    @Serdeable
    public record ModelView(String site, String basisId, String mechanism, String version, String trainedAt,
                            int trainingSize, int enrollments, List<String> labels, double trainingAccuracy,
                            Double validationAccuracy, String served, boolean servedForced, Double heldOutMlpAccuracy,
                            Double heldOutNcmAccuracy, int heldOutEnrollments, OpenSetView openSet) {
    }

    /**
     * The open-set threshold as calibrated on public strangers, or null (the fixed margin rule).
     * heldOutFpir is measured on strangers of people the threshold never saw, with its
     * 95 % Wilson interval.
     */
    @Serdeable
    public record OpenSetView(double fpirTarget, double threshold, int calibrationStrangers, int calibrationPeople,
                              int heldOutStrangers, int heldOutPeople, int heldOutAccepted, double heldOutFpir,
                              double heldOutFpirLow95, double heldOutFpirHigh95) {
    }

    @Serdeable
    public record PredictRequest(String site, String basisId, String mechanism, float[] vector) {
    }

    @Serdeable
    public record Prediction(String label, float confidence, String modelVersion) {
    }

    @Get("/models")
    public List<ModelView> models() {
        return registry.models().values().stream().sorted(Comparator.comparing(m -> m.key().toString()))
                .map(this::view).toList();
    }

    @Serdeable
    public record TrainingView(boolean running, String model, int enrollments, int epoch, int epochs, Float loss,
                               String startedAt) {
    }

    /** Progress of the training run in progress, if any. */
    @Get("/models/training")
    public TrainingView training() {
        return registry.training()
                .map(t -> new TrainingView(true, t.model(), t.enrollments(), t.epoch(), t.epochs(),
                        Float.isNaN(t.loss()) ? null : t.loss(), t.startedAt().toString()))
                .orElse(new TrainingView(false, null, 0, 0, 0, null, null));
    }

    /**
     * Retrains a model now. State-changing, so it needs {@code Authorization: Bearer <token>}
     * matching {@code recognizer.admin-token}; without a configured token the endpoint is off.
     */
    @Post("/models/{site}/{basisId}/{mechanism}/retrain")
    @Secured(SecurityRule.IS_ANONYMOUS) // it checks its own admin token
    public HttpResponse<?> retrain(String site, String basisId, String mechanism,
                                   @io.micronaut.http.annotation.Header(value = "Authorization", defaultValue = "")
                                   String authorization) {
        String token = settings.getAdminToken();
        if (token == null || token.isBlank()) {
            return HttpResponse.status(io.micronaut.http.HttpStatus.FORBIDDEN)
                    .body(Map.of("error", "state-changing endpoints are disabled: set recognizer.admin-token"));
        }
        byte[] expected = ("Bearer " + token).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] given = authorization.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (!java.security.MessageDigest.isEqual(expected, given)) {
            return HttpResponse.unauthorized();
        }
        boolean accepted = registry.requestRetrain(new ModelKey(site, basisId, mechanism));
        return accepted ? HttpResponse.accepted()
                : HttpResponse.notFound(Map.of("error", "this replica does not train " + site + "/" + basisId + "/" + mechanism));
    }

    @Get("/models/{site}/{basisId}/{mechanism}/history")
    public List<Map<String, String>> history(String site, String basisId, String mechanism) throws IOException {
        return registry.history(new ModelKey(site, basisId, mechanism)).stream().map(ModelController::toMap).toList();
    }

    @Post("/predict")
    public HttpResponse<?> predict(@Body PredictRequest req) {
        if (req == null || req.vector() == null || req.site() == null || req.basisId() == null || req.mechanism() == null) {
            return HttpResponse.badRequest(Map.of("error", "site, basisId, mechanism and vector are required"));
        }
        TrainedModel m = registry.model(new ModelKey(req.site(), req.basisId(), req.mechanism())).orElse(null);
        if (m == null) {
            return HttpResponse.notFound(Map.of("error", "no model for " + req.site() + "/" + req.basisId() + "/"
                    + req.mechanism()));
        }
        if (req.vector().length != m.mlp().inputDim()) {
            return HttpResponse.badRequest(Map.of("error", "vector has " + req.vector().length
                    + " values, the model takes " + m.mlp().inputDim()));
        }
        for (float v : req.vector()) {
            if (!Float.isFinite(v)) {
                return HttpResponse.badRequest(Map.of("error", "vector values must be finite"));
            }
        }
        TrainedModel.Decision d = m.decide(new float[][] {req.vector()}, settings.getUnknownThreshold(),
                settings.getOpenSetMargin()).get(0);
        return HttpResponse.ok(new Prediction(d.label(), d.confidence(), m.version()));
    }

    private ModelView view(TrainedModel m) {
        return new ModelView(m.key().site(), m.key().basisId(), m.key().mechanism(), m.version(),
                m.trainedAt().toString(), m.trainingSize(), registry.enrollmentCount(m.key()), m.labels(),
                m.trainingAccuracy(), orNull(m.validationAccuracy()), m.choice().served().wireName(),
                m.choice().forced(), orNull(m.choice().mlpAccuracy()), orNull(m.choice().ncmAccuracy()),
                m.choice().heldOut(), openSet(m.calibration()));
    }

    private static Double orNull(double v) {
        return Double.isNaN(v) ? null : v;
    }

    private static OpenSetView openSet(org.privface.recognizer.model.OpenSetCalibration c) {
        return c == null ? null : new OpenSetView(c.fpirTarget(), c.threshold(), c.calibration().total(),
                c.calibrationPeople(), c.heldOut().total(), c.heldOutPeople(), c.heldOut().accepted(), c.heldOut().rate(),
                c.heldOut().low(), c.heldOut().high());
    }

    private static Map<String, String> toMap(Properties p) {
        return p.stringPropertyNames().stream().collect(java.util.stream.Collectors.toMap(k -> k, p::getProperty));
    }
}
