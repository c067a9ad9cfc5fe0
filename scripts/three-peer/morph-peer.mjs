// An independent glTF morphing and skinning implementation for `throng pose --exact` to be held
// to: three.js's GLTFLoader and AnimationMixer (https://threejs.org, npm package `three`, the
// version pinned in package-lock.json), run headless in Node.
//
//   node scripts/three-peer/morph-peer.mjs FILE.(glb|gltf) [--samples N]
//
// prints one JSON object: per mesh node (glTF node index) its morph weights and per primitive its
// vertices in scene space, at the rest state (default weights, no animation) and, per glTF
// animation, at N (default 12) evenly spaced times from 0 to the clip's duration. The caller
// (tests/morph_three.rs) runs `throng pose --exact` at the same times and compares.
//
// What is three.js's and what is this script's:
// - three.js parses the file (accessors, sparse accessors, morph targets, default weights from
//   mesh.weights and node.weights), builds the node hierarchy (matrixWorld), the skins, and the
//   animation tracks, and the mixer samples them (STEP, LINEAR, and GLTFLoader's own
//   CUBICSPLINE interpolant) into `mesh.morphTargetInfluences` and the bones.
// - three.js applies morph targets in its vertex shader, which needs a GPU; this script does the
//   same arithmetic on the CPU from the geometry three.js built: for glTF,
//   `geometry.morphTargetsRelative` is true, so the morphed position is
//   `base + Σ influence_i · morphAttributes.position[i]` (three.js's morphtarget_vertex shader
//   chunk with `morphTargetBaseInfluence = 1`), then skinning with three.js's own
//   `SkinnedMesh.applyBoneTransform` (the CPU twin of its skinning shader), then `matrixWorld`.
// - Textures are not needed for geometry and three.js's image loaders need a DOM: the script
//   removes `images`, `textures`, `samplers` and every texture reference of the materials from
//   the glTF JSON before three.js parses it (the geometry, nodes and animations are untouched).

import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';

function usage(message) {
  process.stderr.write(`morph-peer: ${message}\nusage: node morph-peer.mjs FILE.(glb|gltf) [--samples N]\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.length === 0) usage('no input file');
const file = args[0];
let samples = 12;
for (let i = 1; i < args.length; i++) {
  if (args[i] === '--samples' && i + 1 < args.length) {
    samples = Number.parseInt(args[++i], 10);
    if (!(samples >= 2)) usage('--samples needs an integer of at least 2');
  } else {
    usage(`unknown argument ${args[i]}`);
  }
}

// Splits a GLB into its JSON and BIN chunks (glTF 2.0 §4.4 "Binary glTF Layout"), or reads a
// .gltf as JSON.
function readGltf(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length >= 12 && view.getUint32(0, true) === 0x46546c67) {
    let offset = 12;
    let json = null;
    let bin = null;
    while (offset + 8 <= bytes.length) {
      const length = view.getUint32(offset, true);
      const type = view.getUint32(offset + 4, true);
      const chunk = bytes.subarray(offset + 8, offset + 8 + length);
      if (type === 0x4e4f534a) json = JSON.parse(new TextDecoder().decode(chunk));
      if (type === 0x004e4942) bin = chunk;
      offset += 8 + length;
    }
    if (json === null) throw new Error('GLB has no JSON chunk');
    return { json, bin };
  }
  return { json: JSON.parse(new TextDecoder().decode(bytes)), bin: null };
}

// Writes a GLB from JSON and an optional BIN chunk, each padded to 4 bytes.
function writeGlb(json, bin) {
  const enc = new TextEncoder().encode(JSON.stringify(json));
  const jsonLength = Math.ceil(enc.length / 4) * 4;
  const binLength = bin ? Math.ceil(bin.length / 4) * 4 : 0;
  const total = 12 + 8 + jsonLength + (bin ? 8 + binLength : 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x46546c67, true);
  view.setUint32(4, 2, true);
  view.setUint32(8, total, true);
  view.setUint32(12, jsonLength, true);
  view.setUint32(16, 0x4e4f534a, true);
  out.fill(0x20, 20, 20 + jsonLength);
  out.set(enc, 20);
  if (bin) {
    const at = 20 + jsonLength;
    view.setUint32(at, binLength, true);
    view.setUint32(at + 4, 0x004e4942, true);
    out.set(bin, at + 8);
  }
  return out.buffer;
}

// Removes what only texturing needs (see the header).
function stripTextures(json) {
  delete json.images;
  delete json.textures;
  delete json.samplers;
  const strip = (o) => {
    if (o === null || typeof o !== 'object') return;
    for (const key of Object.keys(o)) {
      if (key.endsWith('Texture')) delete o[key];
      else strip(o[key]);
    }
  };
  for (const material of json.materials ?? []) strip(material);
}

// A .gltf's buffers (data URIs or files beside it) joined into one GLB BIN chunk, so three.js
// reads everything from memory (its FileLoader needs browser events that Node lacks).
function joinBuffers(json, bin) {
  const buffers = json.buffers ?? [];
  if (bin !== null || buffers.length === 0) return bin;
  const parts = buffers.map((buffer) => {
    const uri = buffer.uri ?? '';
    const comma = uri.indexOf(',');
    if (uri.startsWith('data:') && comma >= 0) {
      return new Uint8Array(Buffer.from(uri.slice(comma + 1), 'base64'));
    }
    return new Uint8Array(readFileSync(new URL(decodeURIComponent(uri), pathToFileURL(file))));
  });
  const starts = [];
  let length = 0;
  for (const part of parts) {
    starts.push(length);
    length = Math.ceil((length + part.length) / 4) * 4;
  }
  const joined = new Uint8Array(length);
  parts.forEach((part, i) => joined.set(part, starts[i]));
  for (const view of json.bufferViews ?? []) {
    view.byteOffset = (view.byteOffset ?? 0) + starts[view.buffer];
    view.buffer = 0;
  }
  json.buffers = [{ byteLength: length }];
  return joined;
}

const read = readGltf(readFileSync(file));
const json = read.json;
const bin = joinBuffers(json, read.bin);
const animationNames = (json.animations ?? []).map((a) => a.name ?? null);
stripTextures(json);
const loader = new GLTFLoader();
const gltf = await new Promise((resolve, reject) => {
  loader.parse(writeGlb(json, bin), '', resolve, reject);
});
const parser = gltf.parser;
const scene = gltf.scene;

// Every three.js mesh with the glTF node and primitive it comes from: a one-primitive mesh is the
// node's own object; several primitives are meshes under a group that is the node's object.
const meshes = [];
scene.traverse((object) => {
  if (!object.isMesh) return;
  const own = parser.associations.get(object) ?? {};
  const node = own.nodes ?? parser.associations.get(object.parent)?.nodes;
  if (node === undefined) return;
  meshes.push({ object, node, primitive: own.primitives ?? 0 });
});
meshes.sort((a, b) => a.node - b.node || a.primitive - b.primitive);

function state() {
  scene.updateMatrixWorld(true);
  const weights = [];
  const out = [];
  const v = new THREE.Vector3();
  const d = new THREE.Vector3();
  for (const { object, node, primitive } of meshes) {
    const influences = object.morphTargetInfluences ?? [];
    if (primitive === 0 && influences.length > 0) weights.push({ node, weights: [...influences] });
    const geometry = object.geometry;
    const base = geometry.attributes.position;
    const targets = geometry.morphAttributes.position ?? [];
    if (targets.length > 0 && !geometry.morphTargetsRelative) {
      throw new Error('GLTFLoader built absolute morph targets; this script expects relative ones');
    }
    const vertices = [];
    for (let i = 0; i < base.count; i++) {
      v.fromBufferAttribute(base, i);
      for (let t = 0; t < targets.length; t++) {
        const w = influences[t] ?? 0;
        if (w !== 0) v.addScaledVector(d.fromBufferAttribute(targets[t], i), w);
      }
      if (object.isSkinnedMesh) object.applyBoneTransform(i, v);
      v.applyMatrix4(object.matrixWorld);
      vertices.push([v.x, v.y, v.z]);
    }
    out.push({ node, primitive, vertices });
  }
  return { weights, meshes: out };
}

const rest = state();
const animations = [];
gltf.animations.forEach((clip, index) => {
  const mixer = new THREE.AnimationMixer(scene);
  const action = mixer.clipAction(clip);
  // Once and clamped: at the duration the last key holds, as glTF (and throng pose) have it,
  // instead of a loop's wrap to 0.
  action.setLoop(THREE.LoopOnce, 1);
  action.clampWhenFinished = true;
  action.play();
  const frames = [];
  for (let k = 0; k < samples; k++) {
    const time = (clip.duration * k) / (samples - 1);
    mixer.setTime(time);
    frames.push({ time, ...state() });
  }
  action.stop();
  mixer.uncacheRoot(scene);
  animations.push({ index, name: animationNames[index], duration: clip.duration, frames });
});

process.stdout.write(JSON.stringify({ file, three: THREE.REVISION, rest, animations }));
process.stdout.write('\n');
