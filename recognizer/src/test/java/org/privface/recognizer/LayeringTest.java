package org.privface.recognizer;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import java.util.List;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceRule;
import org.junit.jupiter.api.Test;

/**
 * The recognizer's package layers, checked on its compiled main classes, as Kafka's
 * import-control.xml does: a new upward import or a new package cycle fails the build.
 *
 * <pre>
 * console                      the operator's API and page
 * api   ingest                 model endpoints; readers, validation, dead letters
 * model                        training, the registry, open-set calibration
 * answer   publish             gallery models and answer results; results out
 * ownership   status           which sites this replica owns (issue 41's group); gateways' status reports
 * polling                      the consumer loop that ingest, ownership and status run
 * org.privface.recognizer      RecognizerSettings, Application
 * </pre>
 *
 * The imports that break these layers today are in {@link #KNOWN}, each exactly (class to class).
 */
class LayeringTest {
    /**
     * The existing upward imports, origin → target; the rules ignore these pairs only. None since
     * issue 40: site ownership, the consumer loop and the status reader moved beneath their users, and
     * the gallery service reads enrollments through {@link org.privface.recognizer.answer.EnrollmentReleases}.
     */
    static final List<String[]> KNOWN = List.<String[]>of();

    /** A class of a known pair: the class itself or one nested in it. */
    private static com.tngtech.archunit.base.DescribedPredicate<com.tngtech.archunit.core.domain.JavaClass> within(String outer) {
        return com.tngtech.archunit.base.DescribedPredicate.describe(outer,
                c -> c.getName().equals(outer) || c.getName().startsWith(outer + "$"));
    }

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // Micronaut's generated bean definitions ($Foo$Definition) repeat their bean's imports.
            .withImportOption(location -> !location.contains("/$"))
            .importPackages("org.privface.recognizer");

    @Test
    void everyImportPointsDownOrIsAKnownOne() {
        LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("console").definedBy("org.privface.recognizer.console..")
                .layer("api").definedBy("org.privface.recognizer.api..")
                .layer("ingest").definedBy("org.privface.recognizer.ingest..")
                .layer("model").definedBy("org.privface.recognizer.model..")
                .layer("answer").definedBy("org.privface.recognizer.answer..")
                .layer("publish").definedBy("org.privface.recognizer.publish..")
                .layer("ownership").definedBy("org.privface.recognizer.ownership..")
                .layer("status").definedBy("org.privface.recognizer.status..")
                .layer("polling").definedBy("org.privface.recognizer.polling..")
                .layer("settings").definedBy("org.privface.recognizer")
                .whereLayer("api").mayOnlyAccessLayers("model", "answer", "publish", "ownership", "status", "polling", "settings")
                .whereLayer("ingest").mayOnlyAccessLayers("model", "answer", "publish", "ownership", "status", "polling", "settings")
                .whereLayer("model").mayOnlyAccessLayers("answer", "publish", "ownership", "status", "polling", "settings")
                .whereLayer("answer").mayOnlyAccessLayers("publish", "ownership", "status", "polling", "settings")
                .whereLayer("publish").mayOnlyAccessLayers("ownership", "status", "polling", "settings")
                .whereLayer("ownership").mayOnlyAccessLayers("polling", "settings")
                .whereLayer("status").mayOnlyAccessLayers("polling", "settings")
                .whereLayer("polling").mayOnlyAccessLayers("settings")
                .whereLayer("settings").mayNotAccessAnyLayer();
        for (String[] k : KNOWN) {
            layers = layers.ignoreDependency(within(k[0]), within(k[1]));
        }
        layers.check(MAIN);
    }

    @Test
    void packagesFormNoCycleButTheKnownOnes() {
        SliceRule rule = slices().matching("org.privface.(**)").should().beFreeOfCycles();
        for (String[] k : KNOWN) {
            rule = rule.ignoreDependency(within(k[0]), within(k[1]));
        }
        rule.check(MAIN);
    }
}
