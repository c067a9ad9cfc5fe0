#!/usr/bin/env bash
# Our codec beside the Animation Compression Library on the same clips, judged by the cook
# report's metric (docs/codec.md, "ACL itself on the six clips"). Needs a C++17 compiler and
# checkouts of ACL (https://github.com/nfrechette/acl) and its math library RTM
# (https://github.com/nfrechette/rtm); neither is a dependency of the project.
#
#   ACL_DIR=path/to/acl RTM_DIR=path/to/rtm scripts/acl-peer.sh [RATE_HZ] [PRECISION_CM...]
#
# RATE_HZ (default 60) is the rate the clips are cooked and compressed at; each precision
# (default 0.01, ACL's default, and 0.006) is ACL's error threshold, in cm, for one run.
# Clips: the six shared CMU clips (THRONG_ASSETS, default ../shared/assets).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ACL_DIR:?set ACL_DIR to a checkout of github.com/nfrechette/acl}"
: "${RTM_DIR:?set RTM_DIR to a checkout of github.com/nfrechette/rtm}"
ASSETS=${THRONG_ASSETS:-../shared/assets}
RATE=${1:-60}
shift || true
PRECISIONS=("${@:-0.01 0.006}")
read -r -a PRECISIONS <<<"${PRECISIONS[*]}"
TMP=$(mktemp -d) && trap 'rm -rf "$TMP"' EXIT

"${CXX:-g++}" -O2 -std=c++17 -I"$ACL_DIR/includes" -I"$RTM_DIR/includes" \
    scripts/acl-peer.cpp -o "$TMP/acl-peer"
cargo build --release --locked -q -p throng-cook --example acl_peer
PEER=target/release/examples/acl_peer
CLIPS=("$ASSETS"/mocap/*.glb)

"$PEER" dump "$TMP" --rate "$RATE" "${CLIPS[@]}" >/dev/null
for precision in "${PRECISIONS[@]}"; do
    metres=$(awk "BEGIN { print $precision / 100 }")
    for clip in "$TMP"/*.bin; do
        "$TMP/acl-peer" "$clip" "${clip%.bin}.out" "$metres"
    done
    echo "## $RATE Hz, ACL's threshold $precision cm (ours: 0.01 cm)"
    "$PEER" measure "$TMP" --rate "$RATE" "${CLIPS[@]}"
    echo
done
