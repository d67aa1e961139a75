#!/usr/bin/env bash
# Run by the agent's build (generate-resources). Fetches the deep face models that a package
# registry ships: the npm package faceplugin-face-recognition-js@0.0.1 (MIT package; the weights'
# training data is not documented, see docs/face-stack.md), folder model/. They go to a cache
# outside target/ (so `mvn clean` does not fetch them again) and are never committed. Each file's
# SHA-256 is checked against the values pinned here and in FaceModels.java; a mismatch fails the
# build. Without network or npm the build goes on: the deep detector and the embedding then
# report what is missing, and the tests that need them are skipped.
set -u
pkg="faceplugin-face-recognition-js@0.0.1"
dir="${FACEPLUGIN_MODELS:-$HOME/.cache/privface/models/faceplugin-face-recognition-js-0.0.1/model}"
declare -A sha=(
  [fr_detect.onnx]=6c0256ccd3164f844736a401faf936ec2930764a87ae39442180887d0c5c8854
  [fr_landmark.onnx]=f10b0ba1d2a8a099adefede1ebf3733e44fe370715e7303dbeb7f59c02142258
  [fr_feature.onnx]=87aacdfe57510db2af90c0251df680e8eec88f122ee94712121d09bcaaaf3581
)
verify() {
  local f
  for f in "${!sha[@]}"; do
    [ -f "$dir/$f" ] || return 1
    [ "$(sha256sum "$dir/$f" | cut -d' ' -f1)" = "${sha[$f]}" ] || return 2
  done
}
verify
case $? in
  0) exit 0 ;;
  2) echo "[agent] a model in $dir does not have its pinned SHA-256; fetching $pkg again" >&2 ;;
esac
if ! command -v npm >/dev/null; then
  echo "[agent] WARNING: npm not found; the deep face models ($pkg) are not installed." >&2
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "[agent] fetching $pkg (about 41 MB) into $dir"
if ! (cd "$tmp" && npm pack "$pkg" --silent --prefer-offline >/dev/null 2>npm.err); then
  echo "[agent] WARNING: npm pack $pkg failed; the deep face models are not installed:" >&2
  cat "$tmp/npm.err" >&2
  exit 0
fi
tar -xzf "$tmp"/*.tgz -C "$tmp" package/model/fr_detect.onnx package/model/fr_landmark.onnx package/model/fr_feature.onnx package/LICENSE || exit 1
for f in "${!sha[@]}"; do
  got="$(sha256sum "$tmp/package/model/$f" | cut -d' ' -f1)"
  if [ "$got" != "${sha[$f]}" ]; then
    echo "[agent] ERROR: $pkg's $f has SHA-256 $got, expected ${sha[$f]}; not installed" >&2
    exit 1
  fi
done
mkdir -p "$dir"
# Copy then rename, so a build in another checkout never reads half a file.
for f in fr_detect.onnx fr_landmark.onnx fr_feature.onnx LICENSE; do
  src="$tmp/package/model/$f"; [ "$f" = LICENSE ] && src="$tmp/package/LICENSE"
  cp "$src" "$dir/.$f.$$" && mv -f "$dir/.$f.$$" "$dir/$f" || exit 1
done
echo "[agent] installed $pkg models in $dir"
