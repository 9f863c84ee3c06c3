#!/bin/sh
# Installs the Debian 12 packages the build and tests need; does nothing when all are present.
set -eu
# usage: install_deps.sh [--aarch64]   (--aarch64: also the cross-compiler, qemu and GoogleTest's sources)
packages="g++ cmake make pkg-config libgtest-dev libeigen3-dev python3"
if [ "${1:-}" = "--aarch64" ]; then
  packages="$packages g++-aarch64-linux-gnu qemu-user googletest"
fi
missing=""
for package in $packages; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
$sudo apt-get update
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
