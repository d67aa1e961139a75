#!/bin/sh
# Generated from k8s/sites.yaml by org.privface.k8s.fleet.FleetGenerator
# (mvn -B -pl k8s compile exec:java). Do not edit: edit the list and run the generator.
# Before kubectl apply -k k8s/fleet: the Secrets and ConfigMaps the fleet's pods name that no
# manifest makes (made by hand, k8s/README.md "Deploy"). Exits 1 naming each required one missing.
set -u
ns=${NAMESPACE:-privface}
missing=0
need() { kubectl -n "$ns" get "$1" "$2" >/dev/null 2>&1 || { echo "missing $1/$2: $3"; missing=1; }; }
may() { kubectl -n "$ns" get "$1" "$2" >/dev/null 2>&1 || echo "absent (optional) $1/$2: $3"; }
need configmap privface-face-models "YuNet for every gateway (k8s/README.md, Face models)"
may secret privface-console "the console's signing key, operators and Kafka credentials"
may secret privface-recognizer-admin "the recognizer's retrain token"
need secret privface-recognizer-gallery "the recognizer's gallery signing key (k8s/README.md, Deploy)"
need configmap privface-gallery-keys "the gallery key's public half, for the answering sites"
may secret privface-agent-control-north "site north's REST control token"
may secret privface-agent-control-south "site south's REST control token"
[ "$missing" = 0 ] && echo "preflight: every required object is present"
exit "$missing"
