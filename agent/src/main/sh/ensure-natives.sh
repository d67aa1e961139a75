#!/usr/bin/env bash
# Run by the agent's build (initialize phase). The FFmpeg natives that JavaCV loads for camera
# capture link one system library, PulseAudio's client (libpulse.so.0), which no Maven artifact
# ships. Install it when missing, so a fresh machine needs no manual step.
set -u
if PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null | grep -q 'libpulse\.so\.0 '; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "[agent] installing libpulse0 (needed by the FFmpeg natives for camera capture)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libpulse0 >/dev/null && exit 0
fi
echo "[agent] WARNING: libpulse.so.0 is missing; RTSP/HTTP/V4L2 capture through FFmpeg will fail." >&2
echo "[agent]          Install it with your package manager (Debian/Ubuntu: apt-get install libpulse0)." >&2
exit 0
