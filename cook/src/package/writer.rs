//! Package writer: lays a [`Package`] out as docs/package-format.md describes.

use std::collections::HashMap;

use throng_cpu_ref::clip::REFERENCE_CODEC_VERSION;
use throng_cpu_ref::codec::{CompressedClip, COMPRESSED_CODEC_VERSION};
use throng_cpu_ref::impostor::Impostor;
use throng_cpu_ref::morph::{MeshRef, MorphTarget};
use throng_cpu_ref::motion_db::MotionDatabase;
use throng_cpu_ref::{
    Clip, ClipEvent, Curves, Package, RootMotionPolicy, Skeleton, SkinBinding, SkinnedMesh,
    SyncMarker, Trs,
};
use xxhash_rust::xxh3::xxh3_64;

use super::{
    SectionKind, ENCODING_COMPRESSED, ENCODING_UNCOMPRESSED, EVENT_REVERSIBLE, FORMAT_VERSION,
    HEADER_SIZE, IMPOSTOR_VERSION, MAGIC, MOTION_DATABASE_VERSION, SECTION_ALIGN,
    SECTION_ENTRY_SIZE, SECTION_OPTIONAL,
};

/// Serialises `package`. The output depends only on the package: equal packages give equal bytes.
///
/// The writer does not validate; [`super::read_package`] rejects what the evaluator could not use.
///
/// # Panics
/// If an array holds more than `u32::MAX` items or the names exceed 4 GiB in total, which the
/// format cannot represent.
pub fn write_package(package: &Package) -> Vec<u8> {
    let mut strings = Strings::default();
    let skeletons = skeletons(&package.skeletons, &mut strings);
    let skins = skins(&package.skins, &mut strings);
    let meshes = meshes(&package.meshes, &mut strings);
    let clips = clips(&package.clips, &mut strings);
    let scene_body = has_scene(package).then(|| scene(package, &mut strings).0);
    let curves_body =
        (!package.curves.channels.is_empty()).then(|| curves(&package.curves, &mut strings).0);
    let mut kinds = SectionKind::ALL[..5].to_vec();
    let mut bodies = vec![strings.bytes, skeletons.0, skins.0, meshes.0, clips.0];
    if package.skeletons.iter().any(|s| !s.lods.is_empty()) {
        kinds.push(SectionKind::Lods);
        bodies.push(lods(&package.skeletons).0);
    }
    if package.meshes.iter().any(|m| !m.lods.is_empty()) {
        kinds.push(SectionKind::MeshLods);
        bodies.push(mesh_lods(&package.meshes).0);
    }
    if !package.impostors.is_empty() {
        kinds.push(SectionKind::Impostors);
        bodies.push(impostors(&package.impostors).0);
    }
    if !package.motion_databases.is_empty() {
        kinds.push(SectionKind::MotionDatabases);
        bodies.push(motion_databases(&package.motion_databases).0);
    }
    if let Some(body) = scene_body {
        kinds.push(SectionKind::Scene);
        bodies.push(body);
    }
    if let Some(body) = curves_body {
        kinds.push(SectionKind::Curves);
        bodies.push(body);
    }

    let table_end = HEADER_SIZE + bodies.len() * SECTION_ENTRY_SIZE;
    let mut offsets = Vec::with_capacity(bodies.len());
    let mut end = table_end;
    for body in &bodies {
        let offset = end.next_multiple_of(SECTION_ALIGN);
        offsets.push(offset);
        end = offset + body.len();
    }
    let total = end.next_multiple_of(SECTION_ALIGN);

    let mut out = Out(Vec::with_capacity(total));
    out.0.extend_from_slice(&MAGIC);
    out.u32(FORMAT_VERSION);
    out.u32(len32(bodies.len()));
    out.u64(0); // content hash, stamped below
    out.u64(total as u64);
    for ((kind, body), offset) in kinds.iter().zip(&bodies).zip(&offsets) {
        out.u32(*kind as u32);
        out.u32(if kind.optional() { SECTION_OPTIONAL } else { 0 });
        out.u64(*offset as u64);
        out.u64(body.len() as u64);
    }
    for (body, offset) in bodies.iter().zip(&offsets) {
        out.0.resize(*offset, 0);
        out.0.extend_from_slice(body);
    }
    out.0.resize(total, 0);
    let hash = xxh3_64(&out.0[HEADER_SIZE..]);
    out.0[16..24].copy_from_slice(&hash.to_le_bytes());
    out.0
}

fn skeletons(skeletons: &[Skeleton], strings: &mut Strings) -> Out {
    let mut out = Out::table(skeletons.len());
    for s in skeletons {
        out.u32(len32(s.joint_count()));
        out.u32(0);
        out.u64(s.identity_hash());
        out.f32s(&s.root_transform.to_cols_array());
        s.parents.iter().for_each(|&p| out.u32(p));
        s.source_nodes.iter().for_each(|&n| out.u32(n));
        s.names.iter().for_each(|n| out.str(strings, n));
        s.rest.iter().for_each(|t| out.trs(t));
    }
    out
}

/// One record per skeleton with LOD levels: its index, the level count, then per level the
/// retained-joint count, its measured error, the joints and the held pose of each dropped joint.
fn lods(skeletons: &[Skeleton]) -> Out {
    let with = skeletons
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.lods.is_empty());
    let mut out = Out::table(with.clone().count());
    for (index, s) in with {
        out.u32(len32(index));
        out.u32(len32(s.lods.len()));
        for lod in &s.lods {
            out.u32(len32(lod.joints().len()));
            out.f32(lod.error());
            lod.joints().iter().for_each(|&j| out.u32(j));
            lod.dropped_pose().for_each(|t| out.trs(t));
        }
    }
    out
}

/// One record per mesh with LODs: its index, the level count, then per level the index count,
/// the error (simplification and shell), the shell and the indices.
fn mesh_lods(meshes: &[SkinnedMesh]) -> Out {
    let with = meshes
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.lods.is_empty());
    let mut out = Out::table(with.clone().count());
    for (index, m) in with {
        out.u32(len32(index));
        out.u32(len32(m.lods.len()));
        for lod in &m.lods {
            out.u32(len32(lod.indices.len()));
            out.f32(lod.error);
            out.f32(lod.shell);
            lod.indices.iter().for_each(|&i| out.u32(i));
        }
    }
    out
}

/// The CURVES section: the channel and track counts, each channel (name, skeleton, default,
/// range, composition), then each track (clip, channel, value count, bits per sample): with 32
/// bits its values as f32, else compressed (docs/codec.md, "Curve tracks"): base and step (f32)
/// and the packed samples' words. Curve selections are not stored: like masks, they come with
/// the state tree.
fn curves(curves: &Curves, strings: &mut Strings) -> Out {
    let mut out = Out(Vec::new());
    out.u32(len32(curves.channels.len()));
    out.u32(len32(curves.tracks.len()));
    for c in &curves.channels {
        out.str(strings, &c.name);
        out.u32(c.skeleton);
        out.f32s(&[c.default, c.min, c.max]);
        out.u32(c.composition as u32);
    }
    for t in &curves.tracks {
        out.u32(t.clip);
        out.u32(t.channel);
        out.u32(len32(t.values.len()));
        match &t.quantized {
            Some(q) => {
                out.u32(q.bits);
                out.f32s(&[q.base, q.step]);
                for &w in &q.words {
                    out.u32(w);
                }
            }
            None => {
                out.u32(throng_cpu_ref::scalar::RAW_CURVE_BITS);
                out.f32s(&t.values);
            }
        }
    }
    out
}

/// Whether the package needs a SCENE section: mesh nodes, static meshes, weight clips or
/// morph targets on a skinned mesh.
fn has_scene(package: &Package) -> bool {
    !package.scene.is_empty() || package.meshes.iter().any(|m| !m.targets.is_empty())
}

/// Kind word of a [`MeshRef`] in SCENE records.
pub(super) const MESH_SKINNED: u32 = 1;
pub(super) const MESH_STATIC: u32 = 2;
/// `skin` of a mesh node that has none.
pub(super) const NO_SKIN: u32 = u32::MAX;

/// The SCENE section: four counts, then the static meshes, the target sets (per mesh with
/// targets), the mesh nodes and the weight clips (each clip record 8-aligned).
fn scene(package: &Package, strings: &mut Strings) -> Out {
    let scene = &package.scene;
    let target_sets: Vec<(u32, u32, &[MorphTarget])> = (package.meshes.iter().enumerate())
        .filter(|(_, m)| !m.targets.is_empty())
        .map(|(i, m)| (MESH_SKINNED, len32(i), m.targets.as_slice()))
        .chain(
            (scene.meshes.iter().enumerate())
                .filter(|(_, m)| !m.targets.is_empty())
                .map(|(i, m)| (MESH_STATIC, len32(i), m.targets.as_slice())),
        )
        .collect();
    let mut out = Out(Vec::new());
    out.u32(len32(scene.meshes.len()));
    out.u32(len32(target_sets.len()));
    out.u32(len32(scene.nodes.len()));
    out.u32(len32(scene.clips.len()));
    for m in &scene.meshes {
        out.str(strings, &m.name);
        out.u32(len32(m.positions.len()));
        out.u32(len32(m.normals.len()));
        out.u32(len32(m.indices.len()));
        m.positions.iter().for_each(|p| out.f32s(&p.to_array()));
        m.normals.iter().for_each(|n| out.f32s(&n.to_array()));
        m.indices.iter().for_each(|&i| out.u32(i));
    }
    for (kind, mesh, targets) in target_sets {
        out.u32(kind);
        out.u32(mesh);
        out.u32(len32(targets.len()));
        for t in targets {
            out.u32(len32(t.vertices.len()));
            out.u32(u32::from(!t.normals.is_empty()));
            t.vertices.iter().for_each(|&v| out.u32(v));
            t.positions.iter().for_each(|p| out.f32s(&p.to_array()));
            t.normals.iter().for_each(|n| out.f32s(&n.to_array()));
        }
    }
    for n in &scene.nodes {
        out.u32(n.node);
        out.str(strings, &n.name);
        out.u32(n.skin.unwrap_or(NO_SKIN));
        out.f32s(&n.world.to_cols_array());
        out.u32(len32(n.primitives.len()));
        out.u32(len32(n.weights.len()));
        for p in &n.primitives {
            out.u32(p.primitive);
            let (kind, index) = match p.mesh {
                MeshRef::Skinned(i) => (MESH_SKINNED, i),
                MeshRef::Static(i) => (MESH_STATIC, i),
            };
            out.u32(kind);
            out.u32(index);
        }
        out.f32s(&n.weights);
    }
    for c in &scene.clips {
        out.0.resize(out.0.len().next_multiple_of(8), 0);
        out.str(strings, &c.name);
        out.f64(c.duration);
        out.f32(c.sample_rate);
        out.u32(c.sample_count);
        out.u32(len32(c.tracks.len()));
        out.u32(0);
        for t in &c.tracks {
            out.u32(t.node);
            out.u32(len32(t.values.len()));
            out.f32s(&t.values);
        }
    }
    out
}

/// One record per impostor, in package order: skin, layout version, atlas and cell sizes,
/// views, row and clip counts, the card, the elevations and per clip its index and frames.
fn impostors(impostors: &[Impostor]) -> Out {
    let mut out = Out::table(impostors.len());
    for i in impostors {
        out.u32(i.skin);
        out.u32(IMPOSTOR_VERSION);
        for word in [i.width, i.height, i.cell, i.views] {
            out.u32(word);
        }
        out.u32(len32(i.elevations.len()));
        out.u32(len32(i.clips.len()));
        out.f32s(&i.centre.to_array());
        out.f32(i.radius);
        out.f32s(&i.elevations);
        for c in &i.clips {
            out.u32(c.clip);
            out.u32(c.frames);
        }
    }
    out
}

/// One record per database, in package order: skeleton, layout version, rate, horizons,
/// weights, clip and row counts, mean and scale, then per clip its index, first row, frames and
/// playable frames, the rows, and the tags (one byte a row, padded to 4).
fn motion_databases(databases: &[MotionDatabase]) -> Out {
    let mut out = Out::table(databases.len());
    for d in databases {
        out.u32(d.skeleton);
        out.u32(MOTION_DATABASE_VERSION);
        out.f32(d.rate);
        out.f32s(&d.horizons);
        out.f32s(&d.weights);
        out.u32(len32(d.clips.len()));
        out.u32(len32(d.rows.len()));
        out.f32s(&d.mean);
        out.f32s(&d.scale);
        for c in &d.clips {
            for word in [c.clip, c.first, c.frames, c.playable] {
                out.u32(word);
            }
        }
        for r in &d.rows {
            out.f32s(r);
        }
        out.0.extend_from_slice(&d.tags);
        out.0.resize(out.0.len().next_multiple_of(4), 0);
    }
    out
}

fn skins(skins: &[SkinBinding], strings: &mut Strings) -> Out {
    let mut out = Out::table(skins.len());
    for skin in skins {
        out.str(strings, &skin.name);
        out.u32(skin.skeleton);
        out.u32(len32(skin.joints.len()));
        skin.joints.iter().for_each(|&j| out.u32(j));
        skin.inverse_bind
            .iter()
            .for_each(|m| out.f32s(&m.to_cols_array()));
    }
    out
}

fn meshes(meshes: &[SkinnedMesh], strings: &mut Strings) -> Out {
    let mut out = Out::table(meshes.len());
    for m in meshes {
        out.str(strings, &m.name);
        out.u32(m.skin);
        out.u32(len32(m.positions.len()));
        out.u32(len32(m.normals.len()));
        out.u32(len32(m.indices.len()));
        m.positions.iter().for_each(|p| out.f32s(&p.to_array()));
        m.normals.iter().for_each(|n| out.f32s(&n.to_array()));
        m.joints
            .iter()
            .flatten()
            .for_each(|&j| out.0.extend_from_slice(&j.to_le_bytes()));
        m.weights.iter().for_each(|w| out.f32s(w));
        m.indices.iter().for_each(|&i| out.u32(i));
    }
    out
}

fn clips(clips: &[Clip], strings: &mut Strings) -> Out {
    let mut out = Out::table(clips.len());
    for c in clips {
        let (encoding, version, payload) = match &c.compressed {
            None => (
                ENCODING_UNCOMPRESSED,
                REFERENCE_CODEC_VERSION,
                reference_payload(c),
            ),
            Some(z) => (
                ENCODING_COMPRESSED,
                COMPRESSED_CODEC_VERSION,
                compressed_payload(c, z),
            ),
        };
        out.str(strings, &c.name);
        out.str(strings, &c.profile);
        out.u32(c.skeleton);
        out.u32(c.loop_policy as u32);
        out.u64(c.skeleton_hash);
        out.f64(c.duration);
        out.f32(c.sample_rate);
        out.u32(c.sample_count);
        out.u32(encoding);
        out.u32(version);
        out.u32(len32(c.events.len()));
        out.u32(len32(c.markers.len()));
        out.u64(payload.0.len() as u64);
        let (policy, joint) = match &c.root_motion {
            None => (0, 0),
            Some(m) => (
                match m.policy {
                    RootMotionPolicy::Planar => 1,
                    RootMotionPolicy::Full => 2,
                },
                m.joint,
            ),
        };
        out.u32(policy);
        out.u32(joint);
        c.events.iter().for_each(|e| out.event(strings, e));
        c.markers.iter().for_each(|m| out.marker(strings, m));
        if let Some(m) = &c.root_motion {
            m.translations.iter().for_each(|t| out.f32s(&t.to_array()));
            m.rotations.iter().for_each(|q| out.f32s(&q.to_array()));
        }
        out.0.extend_from_slice(&payload.0);
        out.0.resize(out.0.len().next_multiple_of(8), 0);
    }
    out
}

/// Bytes of `clip`'s sample payload as written (the sub-track table and values, or the kinds and
/// the compressed stream): the size of the clip's animation data in its encoding.
pub fn payload_bytes(clip: &Clip) -> usize {
    match &clip.compressed {
        None => 8 + 8 * clip.sub_tracks.len() + 4 * clip.values.len(),
        Some(z) => 16 + 4 * (2 * clip.sub_tracks.len()).div_ceil(32) + 4 * z.words.len(),
    }
}

/// Reference encoding: sub-track table (kind, offset) and f32 values.
fn reference_payload(c: &Clip) -> Out {
    let mut out = Out(Vec::with_capacity(
        8 + 8 * c.sub_tracks.len() + 4 * c.values.len(),
    ));
    out.u32(len32(c.sub_tracks.len()));
    out.u32(len32(c.values.len()));
    for t in &c.sub_tracks {
        out.u32(t.kind as u32);
        out.u32(t.offset);
    }
    c.values.iter().for_each(|&v| out.f32(v));
    out
}

/// Compressed encoding: counts, 2-bit sub-track kinds (offsets are implied, see the reader) and
/// the word stream.
fn compressed_payload(c: &Clip, z: &CompressedClip) -> Out {
    let mut out = Out(Vec::with_capacity(
        16 + c.sub_tracks.len() / 4 + 4 * z.words.len(),
    ));
    out.u32(len32(c.sub_tracks.len()));
    out.u32(z.segment_length);
    out.u32(z.animated);
    out.u32(len32(z.words.len()));
    let mut kinds = vec![0u32; (2 * c.sub_tracks.len()).div_ceil(32)];
    for (t, st) in c.sub_tracks.iter().enumerate() {
        kinds[2 * t / 32] |= (st.kind as u32) << (2 * t % 32);
    }
    kinds.iter().chain(&z.words).for_each(|&w| out.u32(w));
    out
}

/// Checked narrowing of a count to the format's u32.
fn len32(n: usize) -> u32 {
    u32::try_from(n).expect("package arrays hold at most u32::MAX items")
}

/// The STRINGS section: UTF-8 bytes, each distinct name stored once.
#[derive(Default)]
struct Strings {
    bytes: Vec<u8>,
    index: HashMap<String, u32>,
}

impl Strings {
    /// Byte offset of `s`, adding it on first use.
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&offset) = self.index.get(s) {
            return offset;
        }
        let offset = len32(self.bytes.len());
        self.bytes.extend_from_slice(s.as_bytes());
        self.index.insert(s.to_owned(), offset);
        offset
    }
}

/// Little-endian output of one section.
struct Out(Vec<u8>);

impl Out {
    /// A table section: item count and a reserved word.
    fn table(count: usize) -> Out {
        let mut out = Out(Vec::new());
        out.u32(len32(count));
        out.u32(0);
        out
    }

    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn f32s(&mut self, vs: &[f32]) {
        vs.iter().for_each(|&v| self.f32(v));
    }

    /// A string reference: byte offset and length in STRINGS.
    fn str(&mut self, strings: &mut Strings, s: &str) {
        self.u32(strings.intern(s));
        self.u32(len32(s.len()));
    }

    fn trs(&mut self, t: &Trs) {
        self.f32s(&t.translation.to_array());
        self.f32s(&t.rotation.to_array());
        self.f32s(&t.scale.to_array());
    }

    fn event(&mut self, strings: &mut Strings, e: &ClipEvent) {
        self.f64(e.time);
        self.str(strings, &e.name);
        self.u32(if e.reversible { EVENT_REVERSIBLE } else { 0 });
        self.u32(0);
    }

    fn marker(&mut self, strings: &mut Strings, m: &SyncMarker) {
        self.f64(m.time);
        self.str(strings, &m.name);
    }
}
