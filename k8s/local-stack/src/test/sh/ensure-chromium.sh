#!/usr/bin/env bash
# The console's browser tests drive Debian's Chromium (Playwright's own browser download cannot
# work here). Installs it when missing and this build may use apt; otherwise the test skips and says why.
set -u
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: chromium is missing and cannot be installed here (needs root and apt-get)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 \
  || { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; } \
  || echo "ensure-chromium: apt-get could not install chromium" >&2
exit 0
