package org.privface.evaluation;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import java.util.Set;
import java.util.TreeSet;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.Test;

/**
 * The evaluations' package layers, checked on the compiled main classes, as Kafka's
 * import-control.xml does: a study that imports another study, a shared helper that imports a
 * study, a package cycle or a class that borrows another harness's {@code main} class fails the build.
 *
 * <pre>
 * papers   frontier   deep   crowd   predict   one study each; none imports another
 * org.privface.evaluation              shared helpers: options, splits, metrics, charts, figures,
 *                                      seeds, embedding caches, progress (imports no study)
 * </pre>
 *
 * Nothing is allowed by exception: there is no allow-list.
 */
class LayeringTest {
    static final String ROOT = "org.privface.evaluation";
    /** The study packages; a new one must be named here (see {@link #everyClassIsInAStudyOrShared}). */
    static final String[] STUDIES = {"papers", "frontier", "deep", "crowd", "predict"};

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages(ROOT);

    @Test
    void studiesStandOnTheSharedHelpersOnly() {
        var layers = layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("shared").definedBy(ROOT);
        for (String s : STUDIES) {
            layers = layers.layer(s).definedBy(ROOT + "." + s + "..");
        }
        for (String s : STUDIES) {
            layers = layers.whereLayer(s).mayNotBeAccessedByAnyLayer();
        }
        layers.whereLayer("shared").mayOnlyBeAccessedByLayers(STUDIES).check(MAIN);
    }

    @Test
    void packagesFormNoCycle() {
        slices().matching(ROOT + ".(**)").should().beFreeOfCycles().check(MAIN);
        // The shared package is the prefix itself, which (**) does not match: its own rule above keeps it acyclic.
    }

    @Test
    void everyClassIsInAStudyOrShared() {
        String[] packages = new String[STUDIES.length + 1];
        packages[0] = ROOT;
        for (int i = 0; i < STUDIES.length; i++) {
            packages[i + 1] = ROOT + "." + STUDIES[i] + "..";
        }
        classes().should().resideInAnyPackage(packages).check(MAIN);
    }

    static boolean harness(JavaClass c) {
        return c.getMethods().stream().anyMatch(m -> m.getName().equals("main")
                && m.getModifiers().contains(JavaModifier.STATIC) && m.getRawParameterTypes().size() == 1);
    }

    static JavaClass top(JavaClass c) {
        JavaClass t = c;
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t;
    }

    /** A harness (a class with a {@code main}) is the top of its study: nothing else imports it, not even its own helpers. */
    @Test
    void noClassImportsAnotherHarness() {
        Set<String> seen = new TreeSet<>();
        classes().should(new ArchCondition<JavaClass>("not depend on another harness (a class with a main)") {
            @Override
            public void check(JavaClass origin, ConditionEvents events) {
                for (Dependency d : origin.getDirectDependenciesFromSelf()) {
                    JavaClass target = top(d.getTargetClass());
                    if (!target.getPackageName().startsWith(ROOT)) {
                        continue;
                    }
                    String pair = top(origin).getName() + " → " + target.getName();
                    if (harness(target) && !top(origin).equals(target) && seen.add(pair)) {
                        events.add(SimpleConditionEvent.violated(d, pair + ": " + d.getDescription()));
                    }
                }
            }
        }).check(MAIN);
    }
}
