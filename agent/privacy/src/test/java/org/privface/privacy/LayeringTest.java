package org.privface.privacy;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The privacy library's package layers, checked on its compiled main classes (as Kafka's
 * import-control.xml does for its packages). No exemptions: an upward import or a package cycle
 * fails the build. Drawn in docs/architecture.md, "Package layers".
 *
 * <pre>
 * answer                       randomized response, the gallery decoder
 * embedding   aggregate        embedding LDP; central-DP aggregates, K-norm
 * gdp   fisher   rdp   latent  one mechanism family each
 * org.privface.privacy         the floor: Drbg, ExactCoins, ExactDraws, SecureLaplace, L1Ball,
 *                              Privacy, Release, SpentEpsilon, EigenBasis, PEEP, StatusCounts
 * </pre>
 */
class LayeringTest {
    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("org.privface.privacy");

    @Test
    void everyImportPointsDown() {
        layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("floor").definedBy("org.privface.privacy")
                .layer("gdp").definedBy("org.privface.privacy.gdp..")
                .layer("fisher").definedBy("org.privface.privacy.fisher..")
                .layer("rdp").definedBy("org.privface.privacy.rdp..")
                .layer("latent").definedBy("org.privface.privacy.latent..")
                .layer("aggregate").definedBy("org.privface.privacy.aggregate..")
                .layer("embedding").definedBy("org.privface.privacy.embedding..")
                .layer("answer").definedBy("org.privface.privacy.answer..")
                .whereLayer("floor").mayNotAccessAnyLayer()
                .whereLayer("gdp").mayOnlyAccessLayers("floor")
                .whereLayer("fisher").mayOnlyAccessLayers("floor")
                .whereLayer("rdp").mayOnlyAccessLayers("floor")
                .whereLayer("latent").mayOnlyAccessLayers("floor")
                .whereLayer("aggregate").mayOnlyAccessLayers("floor", "gdp")
                .whereLayer("embedding").mayOnlyAccessLayers("floor", "gdp", "fisher")
                .whereLayer("answer").mayOnlyAccessLayers("floor", "aggregate", "fisher")
                .check(MAIN);
    }

    @Test
    void packagesFormNoCycle() {
        slices().matching("org.privface.(**)").should().beFreeOfCycles().check(MAIN);
    }
}
