#!/usr/bin/env bash
# The images' base built from Debian packages, for machines that reach Debian's archive but no
# image registry (docs: k8s/README.md, "Images"). Run by the Maven profile images (agent) and
# debian-base (recognizer); by hand: k8s/images/build-base.sh OUT.tar
#
#   mmdebstrap  a minimal bookworm root filesystem: Essential packages, a Java 17 runtime and the
#               system libraries the bytedeco FFmpeg natives link (libpulse, libasound, libxcb);
#   umoci       wraps it as an OCI image with the runtime settings below;
#   skopeo      copies that into a Docker-format tar, the only tar format Jib takes as tar:// base
#               (Jib does not read OCI tars as a base: GoogleContainerTools/jib#2173).
#
# Idempotent: when OUT exists and was made by this script with the same inputs, nothing is done.
# Needs root (mmdebstrap's root mode creates device nodes) and apt; installs the three tools when
# missing.
set -euo pipefail
out="${1:?usage: build-base.sh OUT.tar}"
suite=bookworm
# The bytedeco jars bring OpenCV, OpenBLAS and FFmpeg, but some of their natives NEED system
# libraries (readelf -d): FFmpeg's libavdevice libpulse.so.0, libasound.so.2, libxcb.so.1 and
# libxcb-shm.so.0; OpenCV's libjniopencv_highgui, which opencv_java loads with the rest, GTK 2
# (libgtk-x11-2.0.so.0 and its cairo, gdk-pixbuf and glib); all of them libstdc++.so.6.
# ca-certificates: TLS to Kafka with public CAs; the cluster CA is mounted.
packages=openjdk-17-jre-headless,ca-certificates,libpulse0,libasound2,libxcb1,libxcb-shm0,libgtk2.0-0,libstdc++6
ref=privface/base:$suite-jre17
stamp="$out.inputs"
inputs="$(sha256sum "$0" | cut -d' ' -f1) $suite $packages"
if [ -f "$out" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$inputs" ]; then
  echo "[images] base image $out is up to date"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "[images] ERROR: building the Debian base needs root (mmdebstrap root mode); or pass -Dimages.agent.base=IMAGE" >&2
  exit 1
fi
missing=()
for tool in mmdebstrap umoci skopeo; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[images] installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Files are dated to the archive's snapshot time where SOURCE_DATE_EPOCH is set (mmdebstrap honours it).
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(date -d '2025-05-20' +%s)}"
echo "[images] mmdebstrap $suite with $packages"
# Docs, man pages and locales are left out; openjdk's postinst still links its man page with
# update-alternatives, which needs the folder (essential-hook).
mmdebstrap --mode=root --variant=essential --include="$packages" \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --essential-hook='mkdir -p "$1"/usr/share/man/man1' \
  --customize-hook='rm -rf "$1"/var/cache/apt/* "$1"/var/lib/apt/lists/* "$1"/var/log/*' \
  --customize-hook='echo "privface:x:10001:10001:privface:/tmp:/usr/sbin/nologin" >> "$1/etc/passwd"' \
  --customize-hook='echo "privface:x:10001:" >> "$1/etc/group"' \
  "$suite" "$work/rootfs.tar" \
  "deb http://deb.debian.org/debian $suite main" \
  "deb http://deb.debian.org/debian $suite-updates main" \
  "deb http://deb.debian.org/debian-security $suite-security main"

created="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
umoci init --layout "$work/oci"
umoci new --image "$work/oci:base"
umoci raw add-layer --image "$work/oci:base" --history.created "$created" \
  --history.created_by "mmdebstrap --variant=essential --include=$packages $suite" "$work/rootfs.tar"
umoci config --image "$work/oci:base" --created "$created" --history.created "$created" \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.env JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 \
  --config.env LANG=C.UTF-8 \
  --config.user 10001:10001 --config.workingdir /
mkdir -p "$(dirname "$out")"
rm -f "$out" "$stamp"
skopeo copy --quiet "oci:$work/oci:base" "docker-archive:$out.part:$ref"
mv -f "$out.part" "$out"
echo "$inputs" > "$stamp"
echo "[images] base image $ref: $out ($(du -h "$out" | cut -f1))"
