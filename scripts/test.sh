#!/usr/bin/env bash
# The test command: installs what the tests need when it is missing (lavapipe, Mesa's CPU Vulkan
# driver, for the GPU tests; Xvfb for the windowed example's screenshot test; Node and npm for the
# three.js morph-target comparison, tests/morph_three.rs, which installs three.js itself with
# `npm ci` into scripts/three-peer/node_modules), then runs every
# test of the workspace, not stopping at the first failing test binary. Arguments go to
# `cargo test` (e.g. `scripts/test.sh -p throng-gpu`).
#
# Tests that read the real assets in ../shared/assets skip, saying so, when the folder is absent;
# THRONG_REQUIRE_ASSETS=1 (as .ci/run sets) makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
if ! ls /usr/share/vulkan/icd.d/*.json >/dev/null 2>&1 || ! ldconfig -p | grep -q libvulkan.so.1; then
  missing+=(mesa-vulkan-drivers libvulkan1)
fi
if [ -z "${DISPLAY:-}" ] && { ! command -v xvfb-run >/dev/null || ! command -v xauth >/dev/null; }; then
  missing+=(xvfb xauth)
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "scripts/test.sh: the tests need ${missing[*]} (Debian package names): install them with your package manager" >&2
    exit 1
  fi
  sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || {
      echo "scripts/test.sh: installing ${missing[*]} needs root: run as root or install sudo" >&2
      exit 1
    }
    sudo=(sudo)
  fi
  echo "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Mesa complains on stderr when no desktop session exists; nothing here needs one.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
exec cargo test --workspace --locked --no-fail-fast "$@"
