package org.privface.evaluation;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

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
 * The evaluations' one layering rule while they are one flat package: a harness (a class with a
 * {@code main}) is the top of its study, and no class imports another harness; what two studies
 * share belongs in a helper ({@link Figures}, {@link Seeds}, {@link MlpInputs}, {@link Charts},
 * {@link Metrics}, ...). The imports
 * that break it today are in {@link #KNOWN}, each exactly (top-level class to harness), so that no
 * new one gets in; splitting the package by study (issue #40) removes them.
 */
class LayeringTest {
    /** Existing imports of another harness, "origin → harness", top-level classes. */
    static final Set<String> KNOWN = Set.of(
            // The deep studies borrow the deep frontier's folds, families, seeds and float copies.
            "DeepAnswer → DeepFrontierEvaluation",
            "DeepOpenSet → DeepFrontierEvaluation",
            "ModelComparison → DeepFrontierEvaluation",
            // The frontier's families and presets read its constants, folds, picks and alpha names.
            "FrontierFamilies → FrontierEvaluation",
            "FrontierPresets → FrontierEvaluation",
            // The RDP paper's helpers share RdpEvaluation's Method, Stats and constants.
            "RdpBaselines → RdpEvaluation",
            "RdpExamples → RdpEvaluation",
            "RdpPaper → RdpEvaluation",
            "RdpReadings → RdpEvaluation");

    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("org.privface.evaluation");

    static boolean harness(JavaClass c) {
        return c.getMethods().stream().anyMatch(m -> m.getName().equals("main")
                && m.getModifiers().contains(JavaModifier.STATIC) && m.getRawParameterTypes().size() == 1);
    }

    static String top(JavaClass c) {
        JavaClass t = c;
        while (t.getEnclosingClass().isPresent()) {
            t = t.getEnclosingClass().get();
        }
        return t.getSimpleName();
    }

    @Test
    void noHarnessImportsAnotherHarness() {
        Set<String> seen = new TreeSet<>();
        classes().should(new ArchCondition<JavaClass>("not depend on another harness (a class with a main)") {
            @Override
            public void check(JavaClass origin, ConditionEvents events) {
                for (Dependency d : origin.getDirectDependenciesFromSelf()) {
                    JavaClass target = d.getTargetClass();
                    if (!target.getPackageName().equals("org.privface.evaluation")) {
                        continue;
                    }
                    JavaClass targetTop = target;
                    while (targetTop.getEnclosingClass().isPresent()) {
                        targetTop = targetTop.getEnclosingClass().get();
                    }
                    String pair = top(origin) + " → " + targetTop.getSimpleName();
                    if (harness(targetTop) && !top(origin).equals(targetTop.getSimpleName()) && !KNOWN.contains(pair)
                            && seen.add(pair)) {
                        events.add(SimpleConditionEvent.violated(d, pair + ": " + d.getDescription()));
                    }
                }
            }
        }).check(MAIN);
    }
}
