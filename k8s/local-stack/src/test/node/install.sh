#!/usr/bin/env bash
# Installs the Node.js vendor client's locked packages (VendorAccessTest). Called by Maven at
# generate-test-resources. Without npm it says so and the test skips its Node.js part.
set -euo pipefail
cd "$(dirname "$0")"
command -v npm >/dev/null || { echo "install.sh: npm not found; the Node.js vendor interop test will skip"; exit 0; }
# As the console's build.sh: install the locked versions when the lock changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm install --no-save --no-audit --no-fund --loglevel=error
fi
