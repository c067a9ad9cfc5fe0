#!/usr/bin/env bash
# The hardware-GPU check (docs/benchmark.md, "On a real GPU"): with a built release binary, in at
# most 8 minutes, prints the adapter, runs `throng parity` on the generated character and every
# shared asset (interpreter and both mappings, and retained frames presented between ticks),
# `throng bench` at 1 000, 10 000 and 100 000 instances with the game table (10 000 and
# 100 000 instances through throng::Animator: host and GPU side by side; JSON kept), and the
# 100 000-instance demo. Build first, then carry the binary:
#
#   cargo build --release -p throng
#   bash scripts/gpu-bench.sh target/release/throng [ASSETS_DIR] [OUT_DIR]
#
# Each step has its own time limit, so one slow step cannot eat the others; a step that runs
# out says so and the script goes on. Outputs go to OUT_DIR (default gpu-bench-out/).
set -uo pipefail

bin=${1:?usage: scripts/gpu-bench.sh path/to/throng [ASSETS_DIR] [OUT_DIR]}
assets=${2:-$(dirname "$0")/../../shared/assets}
out=${3:-gpu-bench-out}
mkdir -p "$out"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
start=$SECONDS

# step NAME SECONDS COMMAND...: runs COMMAND under a time limit, teeing its output to OUT_DIR.
step() {
    local name=$1 limit=$2
    shift 2
    echo "== $name (limit ${limit}s, $((SECONDS - start))s elapsed)"
    timeout "$limit" "$@" 2>&1 | tee "$out/$name.txt"
    local rc=${PIPESTATUS[0]}
    case $rc in
        0) ;;
        124) echo "== $name: ran out of its ${limit}s" ;;
        *) echo "== $name: exit status $rc" ;;
    esac
}

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
assets_args=()
for f in "$assets"/*.glb "$assets"/*.gltf "$assets"/mocap/*.glb "$assets"/mocap/*.gltf; do
    [ -f "$f" ] && assets_args+=(--asset "$f")
done
step parity 120 "$bin" parity --instances 8 "${assets_args[@]}"
fox=()
[ -f "$assets/Fox.glb" ] && fox=(--asset "$assets/Fox.glb")
step bench 240 "$bin" bench --instances 1000,10000,100000 --frames 5 --budget-ms 1000 "${fox[@]}" --json "$out/bench.json"
step game 120 "$bin" bench --game-only --frames 20 --budget-ms 2000 --json "$out/game.json"
step demo 100 "$bin" demo --instances 100000 --out "$out/crowd-100k.png"
echo "== done in $((SECONDS - start))s; outputs in $out/"
