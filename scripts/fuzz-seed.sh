#!/usr/bin/env bash
# Seeds fuzz/seeds/<target>/ for the fuzz targets (docs/reliability.md, "Fuzzing") from real files:
# the shared Khronos, knight and CMU assets, the generated character, and the shipped state
# trees and the trees of the control tests. The seeds are not committed; the minimised corpora
# grown from them are (fuzz/corpus/). Needs a release build of `throng` and the shared assets.
set -euo pipefail
cd "$(dirname "$0")/.."
ASSETS=${THRONG_ASSETS:-../shared/assets}
THRONG=${THRONG:-target/release/throng}
SEEDS=fuzz/seeds
rm -rf "$SEEDS" && mkdir -p "$SEEDS"/{package_codec,gltf_import,program_eval,state_tree}
TMP=$(mktemp -d) && trap 'rm -rf "$TMP"' EXIT

"$THRONG" character -o "$TMP/character.glb" >/dev/null
GLBS=("$TMP/character.glb" "$ASSETS"/*.glb "$ASSETS"/mocap/cmu_02_01_walk.glb)

# package_codec: packages of every kind of content, both encodings, all three profiles.
"$THRONG" cook "$TMP/character.glb" -o "$SEEDS/package_codec/character.throng" >/dev/null
"$THRONG" cook "$TMP/character.glb" --codec reference -o "$SEEDS/package_codec/character-reference.throng" >/dev/null
"$THRONG" cook "$ASSETS/Fox.glb" --profile crowd -o "$SEEDS/package_codec/fox-crowd.throng" >/dev/null
"$THRONG" cook "$ASSETS/RiggedSimple.glb" --profile hero -o "$SEEDS/package_codec/rigged-simple-hero.throng" >/dev/null
"$THRONG" cook "$ASSETS/SimpleSkin.gltf" -o "$SEEDS/package_codec/simple-skin.throng" >/dev/null
"$THRONG" cook "$ASSETS/mocap/cmu_02_01_walk.glb" --profile crowd -o "$SEEDS/package_codec/cmu-walk.throng" >/dev/null
# An IMPOSTORS section needs the GPU bake (lavapipe will do); skipped where no adapter exists.
"$THRONG" bake-impostors "$SEEDS/package_codec/character.throng" --clip walk --views 4 \
  --elevation 0 --fps 2 --cell 16 -o "$TMP/atlas.png" \
  --package-out "$SEEDS/package_codec/character-impostor.throng" >/dev/null 2>&1 \
  || echo "no GPU adapter: the package_codec seeds have no IMPOSTORS section"

# gltf_import: every .glb as it is, and each also as JSON \0 SIDECAR \0 BUFFER (its BIN chunk
# as the external model.bin), which is how the target reads a .gltf with its buffers.
for glb in "${GLBS[@]}"; do cp "$glb" "$SEEDS/gltf_import/"; done
python3 - "$SEEDS/gltf_import" "$ASSETS/SimpleSkin.gltf" "${GLBS[@]}" <<'PY'
import json, os, struct, sys
out, gltf, glbs = sys.argv[1], sys.argv[2], sys.argv[3:]
SIDECAR = b'''version = 1
[clips.walk]
root_motion = { joint = "root", policy = "planar" }
events = [ { name = "step", time = 0.25, reversible = true }, { name = "step", time = 0.75 } ]
markers = [ { name = "left_foot_down", time = 0.0 } ]
[lod]
pins = ["head"]
'''
def write(name, doc, sidecar, buffer):
    with open(os.path.join(out, name), "wb") as f:
        f.write(json.dumps(doc, separators=(",", ":")).encode() + b"\0" + sidecar + b"\0" + buffer)
with open(gltf, "rb") as f:
    write("simple-skin.split", json.load(f), b"", b"")
for path in glbs:
    data = open(path, "rb").read()
    n = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + n])
    rest = data[20 + n:]
    buffer = rest[8:8 + struct.unpack_from("<I", rest, 0)[0]] if len(rest) >= 8 else b""
    for b in doc.get("buffers", []):
        b["uri"] = "model.bin"
    name = os.path.splitext(os.path.basename(path))[0]
    write(name + ".split", doc, SIDECAR if name == "character" else b"", buffer)
PY

# program_eval: one program per op kind, as the target decodes them (a weight count, f32
# weights, 32-byte ops); clip 0..4 are idle, walk, run, wave, breathe; masks 0 and 1.
python3 - "$SEEDS/program_eval" <<'PY'
import os, struct, sys
REST, SAMPLE, BLEND, OVERRIDE, ADDITIVE, TO_COMPONENT, PALETTE, CAPTURE, INERTIALIZE = range(1, 10)
def op(code, dst=0, a=0, b=0, c=0, d=0, weight=0.0, time=0.0):
    return struct.pack("<6I2f", code - 1, dst, a, b, c, d, weight, time)
tail = op(TO_COMPONENT) + op(PALETTE)
programs = {
    "rest": ([], op(REST) + tail),
    "sample": ([], op(SAMPLE, 0, 1, time=0.4) + tail),
    "blend": ([0.25, 0.75], op(SAMPLE, 0, 1, time=0.3) + op(SAMPLE, 1, 2, time=0.2) + op(BLEND, 0, 0, 2, 0) + tail),
    "override": ([], op(SAMPLE, 0, 1, time=0.1) + op(SAMPLE, 1, 3, time=0.5) + op(OVERRIDE, 0, 1, c=0, weight=0.8) + tail),
    "additive": ([], op(SAMPLE, 0, 0, time=0.1) + op(SAMPLE, 1, 4, time=0.7) + op(SAMPLE, 2, 4, time=0.0) + op(ADDITIVE, 0, 1, 2, 1, weight=1.0) + tail),
    "inertialize": ([], op(SAMPLE, 0, 2, time=0.1) + op(SAMPLE, 1, 1, time=0.5) + op(SAMPLE, 2, 1, time=0.46) + op(SAMPLE, 3, 2, time=0.06)
                        + op(CAPTURE, 0, 1, 2, 1, 3, weight=1 / 30) + op(INERTIALIZE, 0, c=1, weight=0.3, time=0.0) + tail),
}
for name, (weights, ops) in programs.items():
    with open(os.path.join(sys.argv[1], name + ".program"), "wb") as f:
        f.write(bytes([len(weights)]) + b"".join(struct.pack("<f", w) for w in weights) + ops)
PY

# state_tree: the shipped trees and every tree of the control tests and docs/state-tree.md.
cp fixtures/trees/*.toml "$SEEDS/state_tree/"
python3 - "$SEEDS/state_tree" control/tests/*.rs docs/state-tree.md <<'PY'
import os, re, sys
out, sources = sys.argv[1], sys.argv[2:]
for path in sources:
    text = open(path).read()
    blocks = re.findall(r'r#"(.*?)"#', text, re.S) + re.findall(r"```toml\n(.*?)```", text, re.S)
    stem = os.path.splitext(os.path.basename(path))[0]
    for k, block in enumerate(b for b in blocks if "regions" in b or "inputs" in b):
        with open(os.path.join(out, f"{stem}-{k}.toml"), "w") as f:
            f.write(block)
PY
for t in "$SEEDS"/*; do echo "$(basename "$t"): $(ls "$t" | wc -l) seeds, $(du -sh "$t" | cut -f1)"; done
