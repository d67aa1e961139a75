#!/bin/sh
# Installs the privface agent bundle on a plain Linux gateway (run as root; k8s/gateway/README.md).
#   install.sh gateway.env kafka-ca.crt operator-keys yunet.onnx
# Directories and modes: the spool, ledger and audit log under /var/lib/privface-agent (0700, owned
# by the agent's uid 10001, as the DaemonSet's init container sets them); the enrollment folder
# read-only to it (0750); the env file with the gateway's credentials 0600 root. YuNet is checked
# against the hash the agent pins (FaceModels.YUNET_SHA256) before anything is installed.
set -eu
[ "$#" -eq 4 ] || { echo "usage: $0 gateway.env kafka-ca.crt operator-keys yunet.onnx" >&2; exit 2; }
YUNET_SHA256=8f2383e4dd3cfbb4553ea8718107fc0423210dc964f9f4280604804ed2552fa4
echo "$YUNET_SHA256  $4" | sha256sum -c - >/dev/null || { echo "yunet: not the pinned model" >&2; exit 1; }
grep -q 'password="FROM-THE-SECRET"' "$1" && { echo "$1: put the gateway's own sasl.jaas.config" >&2; exit 1; }
install -d -m 0700 -o 10001 -g 10001 /var/lib/privface-agent
install -d -m 0750 -o root -g 10001 /var/lib/privface-agent-enroll
install -d -m 0755 /etc/privface /etc/privface/models /etc/privface/models/yunet
install -m 0600 -o root -g root "$1" /etc/privface/gateway.env
install -m 0644 "$2" /etc/privface/kafka-ca.crt
install -m 0644 "$3" /etc/privface/operator-keys
install -m 0644 "$4" /etc/privface/models/yunet/face_detection_yunet_2023mar.onnx
install -m 0644 "$(dirname "$0")/privface-agent.service" /etc/systemd/system/privface-agent.service
systemctl daemon-reload
systemctl enable --now privface-agent
echo "installed; put the enrolled faces (one folder per person) under /var/lib/privface-agent-enroll"
