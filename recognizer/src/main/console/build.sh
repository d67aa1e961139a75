#!/usr/bin/env bash
# Builds the console into $1 (the recognizer's classes/console). Called by Maven at generate-resources.
set -euo pipefail
out="${1:?usage: build.sh <output dir>}"
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "build.sh: npm is needed to build the operator console" >&2; exit 1; }
# Installs the locked versions when the lock file changed since the last install. Not `npm ci`:
# with this machine's omit-lockfile-registry-resolved, npm leaves other platforms' optional
# packages (rollup's natives) out of the lock, and `npm ci` then calls the lock out of sync.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm install --no-save --no-audit --no-fund --loglevel=error
fi
npx --no-install vite build --logLevel warn --outDir "$out"
