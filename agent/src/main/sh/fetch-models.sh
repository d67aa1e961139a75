#!/usr/bin/env bash
# Run by the agent's build (generate-resources). Fetches the deep face models that a package
# registry ships, from two npm packages (docs/face-stack.md says where each model comes from):
#  - faceplugin-face-recognition-js@0.0.1 (MIT package; the weights' training data is not
#    documented), folder model/: fr_detect.onnx, fr_landmark.onnx, fr_feature.onnx;
#  - @vladmandic/face-api@1.7.15 (MIT package), folder model/: only dlib's face descriptor network
#    in TensorFlow.js's format (face_recognition_model*; the weights are dlib's, public domain).
# They go to a cache outside target/ (so `mvn clean` does not fetch them again) and are never
# committed. Each file's SHA-256 is checked against the values pinned here and in FaceModels.java;
# a mismatch fails the build. Without network or npm the build goes on: the deep detector and the
# embeddings then report what is missing, and the tests that need them are skipped.
set -u
cache="$HOME/.cache/privface/models"

# fetch PACKAGE DIR SIZE FILE=SHA256...: installs package/model/FILE (and package/LICENSE) into DIR.
fetch() {
  local pkg="$1" dir="$2" size="$3"; shift 3
  local entry f want got ok=0
  for entry in "$@"; do
    f="${entry%%=*}"; want="${entry#*=}"
    if [ ! -f "$dir/$f" ]; then ok=1
    elif [ "$(sha256sum "$dir/$f" | cut -d' ' -f1)" != "$want" ]; then
      ok=1; echo "[agent] $dir/$f does not have its pinned SHA-256; fetching $pkg again" >&2
    fi
  done
  [ "$ok" = 0 ] && return 0
  if ! command -v npm >/dev/null; then
    echo "[agent] WARNING: npm not found; the deep face models ($pkg) are not installed." >&2
    return 0
  fi
  local tmp; tmp="$(mktemp -d)"
  echo "[agent] fetching $pkg (about $size) into $dir"
  if ! (cd "$tmp" && npm pack "$pkg" --silent --prefer-offline >/dev/null 2>npm.err); then
    echo "[agent] WARNING: npm pack $pkg failed; its models are not installed:" >&2
    cat "$tmp/npm.err" >&2; rm -rf "$tmp"
    return 0
  fi
  local members=(package/LICENSE)
  for entry in "$@"; do members+=("package/model/${entry%%=*}"); done
  tar -xzf "$tmp"/*.tgz -C "$tmp" "${members[@]}" || { rm -rf "$tmp"; return 1; }
  for entry in "$@"; do
    f="${entry%%=*}"; want="${entry#*=}"
    got="$(sha256sum "$tmp/package/model/$f" | cut -d' ' -f1)"
    if [ "$got" != "$want" ]; then
      echo "[agent] ERROR: $pkg's $f has SHA-256 $got, expected $want; not installed" >&2
      rm -rf "$tmp"; return 1
    fi
  done
  mkdir -p "$dir"
  # Copy then rename, so a build in another checkout never reads half a file.
  for entry in "$@" LICENSE; do
    f="${entry%%=*}"; src="$tmp/package/model/$f"; [ "$f" = LICENSE ] && src="$tmp/package/LICENSE"
    cp "$src" "$dir/.$f.$$" && mv -f "$dir/.$f.$$" "$dir/$f" || { rm -rf "$tmp"; return 1; }
  done
  rm -rf "$tmp"
  echo "[agent] installed $pkg models in $dir"
}

fetch faceplugin-face-recognition-js@0.0.1 \
  "${FACEPLUGIN_MODELS:-$cache/faceplugin-face-recognition-js-0.0.1/model}" "41 MB" \
  fr_detect.onnx=6c0256ccd3164f844736a401faf936ec2930764a87ae39442180887d0c5c8854 \
  fr_landmark.onnx=f10b0ba1d2a8a099adefede1ebf3733e44fe370715e7303dbeb7f59c02142258 \
  fr_feature.onnx=87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581 || exit 1
fetch @vladmandic/face-api@1.7.15 \
  "${FACEAPI_MODELS:-$cache/vladmandic-face-api-1.7.15/model}" "13 MB" \
  face_recognition_model-weights_manifest.json=cbaffa501b0b9275a12b63357a6843e7e30c054e1c9151e1a5f879b26e32986b \
  face_recognition_model.bin=b413e420d6840b2775fba32008db6f3cddb07d485967fb42cfcf379c16a8c589 || exit 1
