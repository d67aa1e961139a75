package org.privface.k8s;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.strimzi.api.kafka.model.kafka.Kafka;
import io.strimzi.api.kafka.model.user.KafkaUser;

/** Checks on a rendered fleet as a whole. */
final class Fleets {
    private Fleets() {}

    /**
     * Every Secret and ConfigMap a rendered pod names is rendered, written by Strimzi (a KafkaUser's
     * Secret, the cluster CA), or named by the preflight script: required ones by {@code need}, so
     * the script refuses a cluster that lacks them, optional ones by {@code need} or {@code may}.
     */
    static List<String> unnamedObjects(List<Manifests.Doc> docs, Path preflight) {
        String script;
        try {
            script = Files.readString(preflight);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> checked = new LinkedHashMap<>(); // "secret/name" -> need|may
        Matcher m = Pattern.compile("(?m)^(need|may) (secret|configmap) ([a-z0-9.-]+) ").matcher(script);
        while (m.find()) {
            checked.put(m.group(2) + "/" + m.group(3), m.group(1));
        }
        Set<String> made = new java.util.HashSet<>();
        for (Manifests.Doc d : docs) {
            if (d.kind().equals("Secret") || d.kind().equals("ConfigMap")) {
                made.add(d.kind().toLowerCase() + "/" + d.name());
            } else if (d.model() instanceof KafkaUser u) {
                made.add("secret/" + u.getMetadata().getName());
            } else if (d.model() instanceof Kafka k) {
                made.add("secret/" + k.getMetadata().getName() + "-cluster-ca-cert");
                made.add("secret/" + k.getMetadata().getName() + "-clients-ca-cert");
            }
        }
        List<String> out = new ArrayList<>();
        for (Manifests.Doc d : docs) {
            PodSpec spec = ManifestsFixture.podSpec(d.model());
            if (spec == null) {
                continue;
            }
            Map<String, Boolean> refs = new LinkedHashMap<>(); // kind/name -> optional
            List<Container> all = new ArrayList<>(spec.getContainers());
            if (spec.getInitContainers() != null) {
                all.addAll(spec.getInitContainers());
            }
            for (Container c : all) {
                if (c.getEnv() != null) {
                    for (var e : c.getEnv()) {
                        if (e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null) {
                            refs.merge("secret/" + e.getValueFrom().getSecretKeyRef().getName(),
                                    Boolean.TRUE.equals(e.getValueFrom().getSecretKeyRef().getOptional()), Boolean::logicalAnd);
                        }
                        if (e.getValueFrom() != null && e.getValueFrom().getConfigMapKeyRef() != null) {
                            refs.merge("configmap/" + e.getValueFrom().getConfigMapKeyRef().getName(),
                                    Boolean.TRUE.equals(e.getValueFrom().getConfigMapKeyRef().getOptional()), Boolean::logicalAnd);
                        }
                    }
                }
                if (c.getEnvFrom() != null) {
                    for (var e : c.getEnvFrom()) {
                        if (e.getConfigMapRef() != null) {
                            refs.merge("configmap/" + e.getConfigMapRef().getName(), Boolean.TRUE.equals(e.getConfigMapRef().getOptional()), Boolean::logicalAnd);
                        }
                        if (e.getSecretRef() != null) {
                            refs.merge("secret/" + e.getSecretRef().getName(), Boolean.TRUE.equals(e.getSecretRef().getOptional()), Boolean::logicalAnd);
                        }
                    }
                }
            }
            if (spec.getVolumes() != null) {
                for (Volume v : spec.getVolumes()) {
                    if (v.getSecret() != null) {
                        refs.merge("secret/" + v.getSecret().getSecretName(), Boolean.TRUE.equals(v.getSecret().getOptional()), Boolean::logicalAnd);
                    }
                    if (v.getConfigMap() != null) {
                        refs.merge("configmap/" + v.getConfigMap().getName(), Boolean.TRUE.equals(v.getConfigMap().getOptional()), Boolean::logicalAnd);
                    }
                }
            }
            refs.forEach((ref, optional) -> {
                if (made.contains(ref)) {
                    return;
                }
                String how = checked.get(ref);
                if (how == null) {
                    out.add(d.where() + ": names " + ref + ", which nothing renders or Strimzi writes, and the preflight does not check");
                } else if (!optional && !how.equals("need")) {
                    out.add(d.where() + ": needs " + ref + ", which the preflight only reports as optional");
                }
            });
        }
        return out;
    }
}
