package org.privface.agent;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import java.util.List;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import com.tngtech.archunit.library.dependencies.SliceRule;
import org.junit.jupiter.api.Test;

/**
 * The gateway's package layers, checked on its compiled main classes, as Kafka's
 * import-control.xml does: a new upward import or a new package cycle fails the build. Drawn in
 * docs/architecture.md, "Package layers".
 *
 * <pre>
 * app        org.privface.agent: AgentPipeline, CameraWorker, Enrollment, Mechanisms, FaceInput, tools
 * services   control   answer   enroll
 * settings   AgentSettings (the configuration bean; it builds finders, embedders, the link rule)
 * link       appearance linking and the per-person ledger
 * sources    capture (cameras)  →  dataset (data-set folders)  →  embed  →  detect
 * rules      policy  →  track;  publish;  synth
 * store      the gateway's private directories on disk (0700), beneath everything that writes there
 * </pre>
 *
 * The imports that break these layers today are listed in {@link #KNOWN}, each exactly (class to
 * class), so that no other import of theirs and no new one is let through. Remove an entry when
 * its import is gone (issue #40 plans each move).
 */
class LayeringTest {
    /** The existing upward imports, origin → target; the rules ignore these pairs only. */
    static final List<String[]> KNOWN = List.<String[]>of(
            // The health check reads the pipeline's cameras; should take the supervisor and uplink only.
            new String[] {"org.privface.agent.control.GatewayHealth", "org.privface.agent.AgentPipeline"},
            // Linking counts its decisions in the status counters; StatusCounts belongs in the privacy library.
            new String[] {"org.privface.agent.link.GatewayLinking", "org.privface.privacy.StatusCounts"},
            // The release gate (issue 39) counts persons seen and held the same way; same move.
            new String[] {"org.privface.agent.link.ReleaseGate", "org.privface.privacy.StatusCounts"},
            // YuNet's pin reads the settings bean and a camera's settings; should take plain values.
            new String[] {"org.privface.agent.detect.YunetPin", "org.privface.agent.AgentSettings"},
            new String[] {"org.privface.agent.detect.YunetPin", "org.privface.agent.capture.CameraSettings"},
            // Data sets decode images with capture's decoder while capture lists data-set folders:
            // ImageDecoder and OpenCv should sit in a low image package of their own.
            new String[] {"org.privface.agent.dataset.FaceDatasets", "org.privface.agent.image.ImageDecoder"});

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // Micronaut's generated bean definitions ($Foo$Definition) repeat their bean's imports.
            .withImportOption(location -> !location.contains("/$"))
            .importPackages("org.privface.agent");

    static final DescribedPredicate<JavaClass> SETTINGS = DescribedPredicate.describe("AgentSettings",
            c -> c.getName().equals("org.privface.agent.AgentSettings")
                    || c.getName().startsWith("org.privface.agent.AgentSettings$"));

    static final DescribedPredicate<JavaClass> APP = DescribedPredicate.describe("the root package but AgentSettings",
            c -> c.getPackageName().equals("org.privface.agent") && !SETTINGS.test(c));

    @Test
    void everyImportPointsDownOrIsAKnownOne() {
        LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("app").definedBy(APP)
                .layer("settings").definedBy(SETTINGS)
                .layer("control").definedBy("org.privface.agent.control..")
                .layer("answer").definedBy("org.privface.agent.answer..")
                .layer("enroll").definedBy("org.privface.agent.enroll..")
                .layer("link").definedBy("org.privface.agent.link..")
                .layer("capture").definedBy("org.privface.agent.capture..")
                .layer("dataset").definedBy("org.privface.agent.dataset..")
                .layer("embed").definedBy("org.privface.agent.embed..")
                .layer("detect").definedBy("org.privface.agent.detect..")
                .layer("policy").definedBy("org.privface.agent.policy..")
                .layer("track").definedBy("org.privface.agent.track..")
                .layer("publish").definedBy("org.privface.agent.publish..")
                .layer("synth").definedBy("org.privface.agent.synth..")
                .layer("store").definedBy("org.privface.agent.store..")
                .whereLayer("control").mayOnlyAccessLayers("settings", "capture", "policy", "track", "publish")
                .whereLayer("answer").mayOnlyAccessLayers("settings", "publish", "policy", "track")
                .whereLayer("enroll").mayOnlyAccessLayers("settings", "policy", "track", "publish", "store")
                .whereLayer("settings").mayOnlyAccessLayers("link", "capture", "dataset", "embed", "detect", "policy", "track",
                        "publish", "store")
                .whereLayer("link").mayOnlyAccessLayers("capture", "detect", "embed", "policy", "track", "store")
                .whereLayer("capture").mayOnlyAccessLayers("dataset", "embed", "detect", "policy", "track")
                .whereLayer("dataset").mayOnlyAccessLayers("embed", "detect")
                .whereLayer("embed").mayOnlyAccessLayers("detect")
                .whereLayer("detect").mayNotAccessAnyLayer()
                .whereLayer("policy").mayOnlyAccessLayers("track")
                .whereLayer("track").mayNotAccessAnyLayer()
                .whereLayer("publish").mayNotAccessAnyLayer()
                .whereLayer("synth").mayNotAccessAnyLayer()
                .whereLayer("store").mayNotAccessAnyLayer();
        for (String[] k : KNOWN) {
            layers = layers.ignoreDependency(k[0], k[1]);
        }
        layers.check(MAIN);
    }

    @Test
    void packagesFormNoCycleButTheKnownOnes() {
        // AgentSettings is a slice of its own, as it is a layer of its own above.
        SliceRule rule = slices().assignedFrom(new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                return SliceIdentifier.of(SETTINGS.test(c) ? "AgentSettings" : c.getPackageName());
            }

            @Override
            public String getDescription() {
                return "packages, AgentSettings apart";
            }
        }).should().beFreeOfCycles();
        for (String[] k : KNOWN) {
            rule = rule.ignoreDependency(k[0], k[1]);
        }
        rule.check(MAIN);
    }
}
