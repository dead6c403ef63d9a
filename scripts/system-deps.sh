#!/usr/bin/env bash
# Installs the system packages the tests need, when missing and when we can (root + apt):
#   - Debian's chromium (headless browser tests; WebGPU on SwiftShader)
#   - Mesa 25 lavapipe from bookworm-backports (Vulkan for Dawn, the npm `webgpu` GPU tests in Node)
# Prints what to run by hand when it cannot install.
set -euo pipefail

need_chromium=0; need_lavapipe=0
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || need_chromium=1
# Debian 12's own lavapipe (Mesa 22) is rejected by Dawn; we need Mesa >= 25.
mesa_ver=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
case "$mesa_ver" in 2[5-9].*|[3-9][0-9].*) ;; *) need_lavapipe=1 ;; esac

if [ $need_chromium = 0 ] && [ $need_lavapipe = 0 ]; then exit 0; fi

manual="  echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/backports.list
  apt-get update && apt-get install -y chromium && apt-get install -y -t bookworm-backports mesa-vulkan-drivers"

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "pooled tests need Debian's chromium and Mesa 25 lavapipe (bookworm-backports). As root, run:" >&2
  echo "$manual" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ $need_lavapipe = 1 ] && ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo 'deb http://deb.debian.org/debian bookworm-backports main' > /etc/apt/sources.list.d/backports.list
fi
echo "Installing system packages for the tests (chromium=$need_chromium lavapipe=$need_lavapipe)…"
apt-get update -q
[ $need_chromium = 1 ] && apt-get install -y -q chromium
[ $need_lavapipe = 1 ] && apt-get install -y -q -t bookworm-backports mesa-vulkan-drivers
exit 0
