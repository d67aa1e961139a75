package org.privface.agent;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

/**
 * The gateway's package layers, checked on its compiled main classes, as Kafka's
 * import-control.xml does: an upward import or a package cycle fails the build. No exemptions (the
 * six upward imports issue #40 found are gone). Drawn in docs/architecture.md, "Package layers".
 *
 * <pre>
 * app        org.privface.agent: AgentPipeline, CameraWorker, Enrollment, tools
 * release    the release desk: grant → ε split → mechanism → record → uplink (Mechanisms, FaceInput)
 * services   control   answer   enroll
 * settings   AgentSettings (the configuration bean; it builds finders, embedders, the link rule)
 * link       appearance linking and the per-person ledger
 * sources    capture (cameras)  →  dataset (data-set folders)  →  embed  →  detect  →  image (OpenCV, decoding)
 * infer      the shared models' queues (issue 44), above embed and detect
 * rules      policy  →  track;  publish;  synth
 * store      the gateway's private directories on disk (0700), beneath everything that writes there
 * </pre>
 */
class LayeringTest {
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
    void everyImportPointsDown() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("app").definedBy(APP)
                .layer("release").definedBy("org.privface.agent.release..")
                .layer("settings").definedBy(SETTINGS)
                .layer("control").definedBy("org.privface.agent.control..")
                .layer("answer").definedBy("org.privface.agent.answer..")
                .layer("enroll").definedBy("org.privface.agent.enroll..")
                .layer("link").definedBy("org.privface.agent.link..")
                .layer("capture").definedBy("org.privface.agent.capture..")
                .layer("dataset").definedBy("org.privface.agent.dataset..")
                .layer("infer").definedBy("org.privface.agent.infer..")
                .layer("embed").definedBy("org.privface.agent.embed..")
                .layer("detect").definedBy("org.privface.agent.detect..")
                .layer("image").definedBy("org.privface.agent.image..")
                .layer("policy").definedBy("org.privface.agent.policy..")
                .layer("track").definedBy("org.privface.agent.track..")
                .layer("publish").definedBy("org.privface.agent.publish..")
                .layer("synth").definedBy("org.privface.agent.synth..")
                .layer("store").definedBy("org.privface.agent.store..")
                .whereLayer("release").mayOnlyAccessLayers("settings", "answer", "enroll", "link", "dataset", "embed",
                        "detect", "image", "policy", "track", "publish")
                .whereLayer("control").mayOnlyAccessLayers("settings", "capture", "policy", "track", "publish")
                .whereLayer("answer").mayOnlyAccessLayers("settings", "publish", "policy", "track")
                .whereLayer("enroll").mayOnlyAccessLayers("settings", "policy", "track", "publish", "store")
                .whereLayer("settings").mayOnlyAccessLayers("link", "capture", "dataset", "embed", "detect", "image", "policy",
                        "track", "publish", "store")
                .whereLayer("link").mayOnlyAccessLayers("capture", "detect", "embed", "image", "policy", "track", "store")
                .whereLayer("capture").mayOnlyAccessLayers("dataset", "embed", "detect", "image", "policy", "track")
                .whereLayer("dataset").mayOnlyAccessLayers("embed", "detect", "image")
                .whereLayer("infer").mayOnlyAccessLayers("embed", "detect", "image")
                .whereLayer("embed").mayOnlyAccessLayers("detect", "image")
                .whereLayer("detect").mayOnlyAccessLayers("image")
                .whereLayer("image").mayNotAccessAnyLayer()
                .whereLayer("policy").mayOnlyAccessLayers("track")
                .whereLayer("track").mayNotAccessAnyLayer()
                .whereLayer("publish").mayNotAccessAnyLayer()
                .whereLayer("synth").mayNotAccessAnyLayer()
                .whereLayer("store").mayNotAccessAnyLayer()
                .check(MAIN);
    }

    @Test
    void packagesFormNoCycle() {
        // AgentSettings is a slice of its own, as it is a layer of its own above.
        slices().assignedFrom(new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                return SliceIdentifier.of(SETTINGS.test(c) ? "AgentSettings" : c.getPackageName());
            }

            @Override
            public String getDescription() {
                return "packages, AgentSettings apart";
            }
        }).should().beFreeOfCycles().check(MAIN);
    }
}
