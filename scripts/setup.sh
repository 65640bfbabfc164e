#!/usr/bin/env bash
# Installs what the build and the tests need on a Debian machine with Node and
# npm, from Debian's packages and the npm registry only (no toolchain or
# browser downloads). Usage: scripts/setup.sh [serve|test]
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-test}"

need=()
command -v emcc >/dev/null 2>&1 || need+=(emscripten)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v make >/dev/null 2>&1 || need+=(make)
command -v cc >/dev/null 2>&1 || need+=(gcc)
if [ "$mode" = test ]; then
  command -v gcc >/dev/null 2>&1 || need+=(gcc) # the second compiler of the C tests
  command -v clang-14 >/dev/null 2>&1 || need+=(clang-14)
  command -v clang-format-14 >/dev/null 2>&1 || need+=(clang-format-14)
  [ -e /usr/lib/llvm-14/lib/libFuzzer.a ] || ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need+=(libfuzzer-14-dev)
  [ -x /usr/bin/chromium ] || need+=(chromium)
  # CPU PyTorch for the probe's tests (they skip with a reason without it)
  /usr/bin/python3 -c "import torch" >/dev/null 2>&1 || need+=(python3-torch)
  command -v pyflakes3 >/dev/null 2>&1 || need+=(pyflakes3)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} (Debian packages)"
  export DEBIAN_FRONTEND=noninteractive
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# npm dependencies, when missing or older than the lock file. `npm install`
# with the lock file rather than `npm ci`: the registry reachable here serves
# only this platform's optional packages (rollup's other-platform builds are
# absent), which `npm ci`'s strict lock check rejects; the versions installed
# are the lock file's all the same.
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm install (from package-lock.json)"
  npm install --no-audit --no-fund --loglevel=error
fi
