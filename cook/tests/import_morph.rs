//! Morph targets on import and cook (docs/morph-targets.md): sparse accessors (glTF 2.0
//! §3.6.2.3, with and without a base buffer view), default weights (mesh, overridden by node),
//! `weights` channels with STEP, LINEAR and CUBICSPLINE per glTF 2.0 Appendix C, the cooked weight
//! tracks and their package round trip, typed errors for bad targets, and the refusal of a
//! package of an older format version.

mod gltf_support;
mod package_support;

use throng_cook::package::{PackageError, FORMAT_VERSION};
use throng_cook::{cook, import_slice, read_package, write_package, CookError, Imported, Profile};
use throng_cpu_ref::morph::{morph, MeshRef};
use throng_cpu_ref::Interpolation;

use glam::Vec3;

/// Binary data with its buffer views and accessors, as glTF JSON snippets.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
}

impl Bin {
    fn view(&mut self, bytes: &[u8]) -> usize {
        self.bytes.resize(self.bytes.len().next_multiple_of(4), 0);
        self.views.push(format!(
            r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#,
            self.bytes.len(),
            bytes.len()
        ));
        self.bytes.extend_from_slice(bytes);
        self.views.len() - 1
    }

    fn f32_bytes(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    /// A dense float accessor of `ty` ("SCALAR", "VEC3" or "VEC4").
    fn floats(&mut self, values: &[f32], ty: &str) -> usize {
        let width = match ty {
            "VEC3" => 3,
            "VEC4" => 4,
            _ => 1,
        };
        let view = self.view(&Self::f32_bytes(values));
        let bounds = if ty == "VEC3" {
            r#","min":[-10,-10,-10],"max":[10,10,10]"#
        } else {
            ""
        };
        self.accessors.push(format!(
            r#"{{"bufferView":{view},"componentType":5126,"type":"{ty}","count":{}{bounds}}}"#,
            values.len() / width
        ));
        self.accessors.len() - 1
    }

    /// A VEC3 float accessor of `count` elements: zeros (no buffer view) or `base`, with the
    /// sparse `indices` (u16) replaced by `values`.
    fn sparse_vec3(
        &mut self,
        count: usize,
        base: Option<&[f32]>,
        indices: &[u16],
        values: &[f32],
    ) -> usize {
        let base = base.map(|b| format!(r#""bufferView":{},"#, self.view(&Self::f32_bytes(b))));
        let idx: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let idx_view = self.view(&idx);
        let val_view = self.view(&Self::f32_bytes(values));
        self.accessors.push(format!(
            r#"{{{}"componentType":5126,"type":"VEC3","count":{count},"min":[-10,-10,-10],"max":[10,10,10],"sparse":{{"count":{},"indices":{{"bufferView":{idx_view},"componentType":5123}},"values":{{"bufferView":{val_view}}}}}}}"#,
            base.unwrap_or_default(),
            indices.len()
        ));
        self.accessors.len() - 1
    }
}

/// One unskinned triangle (node 0 "face") with two POSITION targets: target 0 a sparse accessor
/// with no buffer view (vertex 1 moves up by 1), target 1 a dense base (vertex 0 moves +x) with a
/// sparse override (vertex 2 moves +2z). Mesh weights [0.25, 0.5]; `node_weights` and
/// `animations` are spliced in as given.
struct Doc {
    bin: Bin,
    node_weights: String,
    mesh_weights: String,
    targets: String,
    animations: String,
}

fn doc() -> Doc {
    let mut bin = Bin::default();
    bin.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    let t0 = bin.sparse_vec3(3, None, &[1], &[0.0, 1.0, 0.0]);
    let t1 = bin.sparse_vec3(
        3,
        Some(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        &[2],
        &[0.0, 0.0, 2.0],
    );
    Doc {
        bin,
        node_weights: String::new(),
        mesh_weights: r#","weights":[0.25,0.5]"#.into(),
        targets: format!(r#"[{{"POSITION":{t0}}},{{"POSITION":{t1}}}]"#),
        animations: "[]".into(),
    }
}

fn render(d: &Doc) -> Vec<u8> {
    use gltf_support::base64 as encode;
    format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"name":"face","mesh":0,"translation":[0,0,5]{}}}],"meshes":[{{"name":"face","primitives":[{{"attributes":{{"POSITION":0}},"targets":{}}}]{}}}],"animations":{},"accessors":[{}],"bufferViews":[{}],"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}]}}"#,
        d.node_weights,
        d.targets,
        d.mesh_weights,
        d.animations,
        d.bin.accessors.join(","),
        d.bin.views.join(","),
        d.bin.bytes.len(),
        encode(&d.bin.bytes)
    )
    .into_bytes()
}

fn import(d: &Doc) -> Result<Imported, CookError> {
    import_slice(&render(d), "morph.gltf")
}

/// A weights animation "a" on node 0 with keys at `times` and `values` per key (2 weights, or
/// 6 per key for CUBICSPLINE).
fn weights_animation(d: &mut Doc, interpolation: &str, times: &[f32], values: &[f32]) {
    let input = d.bin.floats(times, "SCALAR");
    let output = d.bin.floats(values, "SCALAR");
    d.animations = format!(
        r#"[{{"name":"a","samplers":[{{"input":{input},"output":{output},"interpolation":"{interpolation}"}}],"channels":[{{"sampler":0,"target":{{"node":0,"path":"weights"}}}}]}}]"#
    );
}

#[test]
fn sparse_targets_with_and_without_a_base_view_are_read_sparsely() {
    let imported = import(&doc()).unwrap();
    let scene = &imported.package.scene;
    assert_eq!(scene.meshes.len(), 1, "the unskinned triangle is kept");
    let targets = &scene.meshes[0].targets;
    assert_eq!(targets.len(), 2);
    // No buffer view: zeros, with the sparse vertex 1 replaced.
    assert_eq!(targets[0].vertices, vec![1]);
    assert_eq!(targets[0].positions, vec![Vec3::Y]);
    assert!(targets[0].normals.is_empty());
    // A base view with vertex 2 replaced; vertex 1 stays zero and is not stored.
    assert_eq!(targets[1].vertices, vec![0, 2]);
    assert_eq!(
        targets[1].positions,
        vec![Vec3::X, Vec3::new(0.0, 0.0, 2.0)]
    );
    let node = &scene.nodes[0];
    assert_eq!(node.node, 0);
    assert_eq!(node.skin, None);
    assert_eq!(node.primitives[0].mesh, MeshRef::Static(0));
    assert_eq!(node.world.translation, Vec3::new(0.0, 0.0, 5.0).into());
}

#[test]
fn default_weights_come_from_the_node_then_the_mesh() {
    let imported = import(&doc()).unwrap();
    assert_eq!(imported.package.scene.nodes[0].weights, vec![0.25, 0.5]);
    let mut d = doc();
    d.node_weights = r#","weights":[1.0,0.0]"#.into();
    let imported = import(&d).unwrap();
    assert_eq!(imported.package.scene.nodes[0].weights, vec![1.0, 0.0]);
    let mut d = doc();
    d.mesh_weights = String::new();
    let imported = import(&d).unwrap();
    assert_eq!(imported.package.scene.nodes[0].weights, vec![0.0, 0.0]);
    // base + 0.25 · t0 + 0.5 · t1 (glTF 2.0 §3.7.2.2).
    let mesh = &import(&doc()).unwrap().package.scene.meshes[0];
    let mut p = vec![Vec3::ZERO; 3];
    morph(
        &mesh.positions,
        &[],
        &mesh.targets,
        &[0.25, 0.5],
        &mut p,
        &mut [],
    );
    assert_eq!(
        p,
        vec![
            Vec3::new(0.5, 0.0, 0.0),
            Vec3::new(1.0, 0.25, 0.0),
            Vec3::new(0.0, 1.0, 1.0)
        ]
    );
}

/// The exact source channel's weights at `t`.
fn exact(imported: &Imported, t: f64) -> [f32; 2] {
    let mut w = [f32::NAN; 2];
    assert!(imported.source_weight_clips[0].channels[0].sample(t, &mut w));
    w
}

#[test]
fn step_linear_and_cubic_spline_weights_follow_gltf() {
    let mut d = doc();
    weights_animation(&mut d, "STEP", &[0.5, 2.5], &[0.0, 1.0, 1.0, 0.0]);
    let imported = import(&d).unwrap();
    let clip = &imported.source_weight_clips[0];
    assert_eq!(clip.name, "a");
    assert_eq!(clip.duration, 2.5);
    assert_eq!(clip.channels[0].interpolation, Interpolation::Step);
    assert_eq!(
        exact(&imported, 0.0),
        [0.0, 1.0],
        "the first key holds before it"
    );
    assert_eq!(exact(&imported, 2.4), [0.0, 1.0]);
    assert_eq!(exact(&imported, 2.5), [1.0, 0.0]);
    assert_eq!(
        exact(&imported, 9.0),
        [1.0, 0.0],
        "the last key holds after it"
    );

    let mut d = doc();
    weights_animation(&mut d, "LINEAR", &[0.5, 2.5], &[0.0, 1.0, 1.0, 0.0]);
    let imported = import(&d).unwrap();
    // A plain lerp of each weight (glTF 2.0 Appendix C), not a normalised blend.
    assert_eq!(exact(&imported, 1.0), [0.25, 0.75]);
    assert_eq!(exact(&imported, 2.0), [0.75, 0.25]);

    // Per key (in-tangents, values, out-tangents) of 2 weights; over an interval of 2 s the
    // tangents scale by 2: at the midpoint h00 = h01 = 0.5, h10 = 0.125 · 2, h11 = −0.125 · 2.
    let mut d = doc();
    #[rustfmt::skip]
    let keys = [
        0.0, 0.0,   0.0, 1.0,   1.0, 0.0,
        3.0, 0.0,   1.0, 1.0,   0.0, 0.0,
    ];
    weights_animation(&mut d, "CUBICSPLINE", &[1.0, 3.0], &keys);
    let imported = import(&d).unwrap();
    assert_eq!(
        imported.source_weight_clips[0].channels[0].interpolation,
        Interpolation::CubicSpline
    );
    let w = exact(&imported, 2.0);
    let want = [0.5 * 0.0 + 0.25 * 1.0 + 0.5 * 1.0 - 0.25 * 3.0, 1.0];
    assert!(
        (w[0] - want[0]).abs() < 1e-6 && (w[1] - want[1]).abs() < 1e-6,
        "{w:?}"
    );
    assert_eq!(exact(&imported, 3.0), [1.0, 1.0]);

    // Cooked: uniform samples lerped, within the reported error of the exact curve.
    let (package, report) = cook(&imported, &Profile::DEFAULT).unwrap();
    let clip = &package.scene.clips[0];
    assert_eq!(clip.name, "a");
    assert_eq!(clip.duration, 3.0);
    assert_eq!(
        clip.sample_rate, 30.0,
        "CUBICSPLINE clips sample at the profile's rate"
    );
    assert_eq!(clip.sample_count, 91);
    let r = &report.weight_clips[0];
    assert!(r.max_error > 0.0 && r.max_error < 1e-3, "{}", r.max_error);
    for i in 0..clip.sample_count {
        let t = clip.sample_time(i);
        let mut cooked = [0.0; 2];
        assert!(clip.sample(0, t, &mut cooked));
        assert_eq!(cooked, exact(&imported, t), "sample {i} is the exact curve");
    }
    let mut between = [0.0f32; 2];
    clip.sample(0, 2.01, &mut between);
    let e = exact(&imported, 2.01);
    assert!((between[0] - e[0]).abs() <= r.max_error + 1e-7);
}

#[test]
fn morph_packages_round_trip_and_older_versions_are_refused() {
    let mut d = doc();
    weights_animation(&mut d, "LINEAR", &[0.0, 1.0], &[0.0, 1.0, 1.0, 0.0]);
    let (package, _) = cook(&import(&d).unwrap(), &Profile::DEFAULT).unwrap();
    assert!(!package.scene.is_empty());
    let bytes = write_package(&package);
    assert_eq!(read_package(&bytes).unwrap(), package);
    assert_eq!(write_package(&read_package(&bytes).unwrap()), bytes);

    // A version-3 package (before the SCENE section): refused with what to do.
    let mut old = bytes.clone();
    old[8..12].copy_from_slice(&3u32.to_le_bytes());
    let err = read_package(&old).unwrap_err();
    assert_eq!(
        err,
        PackageError::UnsupportedVersion {
            found: 3,
            supported: FORMAT_VERSION
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("re-cook") && text.contains("throng cook"),
        "{text}"
    );
}

#[test]
fn bad_targets_and_weights_are_typed_errors_that_name_the_place() {
    // A target accessor whose count differs from the primitive's.
    let mut d = doc();
    let short = d.bin.floats(&[0.0, 1.0, 0.0, 0.0, 0.0, 0.0], "VEC3");
    d.targets = format!(r#"[{{"POSITION":{short}}},{{"POSITION":{short}}}]"#);
    let err = import(&d).unwrap_err();
    assert!(
        matches!(&err, CookError::MorphTarget { place, .. } if place.contains("mesh face/0 target 0 POSITION")),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("has 2 elements, but the primitive has 3 vertices"),
        "{err}"
    );

    // Weights that do not match the targets.
    let mut d = doc();
    d.mesh_weights = r#","weights":[0.25,0.5,1.0]"#.into();
    let err = import(&d).unwrap_err();
    assert!(
        matches!(&err, CookError::MorphTarget { place, .. } if place == "mesh face weights"),
        "{err:?}"
    );

    // A NaN weight key.
    let mut d = doc();
    weights_animation(&mut d, "LINEAR", &[0.0, 1.0], &[0.0, f32::NAN, 1.0, 0.0]);
    let err = import(&d).unwrap_err();
    assert!(
        matches!(&err, CookError::NonFinite { place, .. } if place.contains("channel 0") && place.contains("key 0")),
        "{err:?}"
    );

    // A weights output with the wrong count for 2 targets.
    let mut d = doc();
    weights_animation(&mut d, "LINEAR", &[0.0, 1.0], &[0.0, 1.0, 1.0]);
    let err = import(&d).unwrap_err();
    assert!(matches!(&err, CookError::OutputCount { .. }), "{err:?}");
}

/// A skinned triangle (node 1 "face", one joint, node 0 "root") with one POSITION target and
/// default weight 0.25; animation "a" turns the joint and keys the weight from 0 to 1 over 1 s.
fn skinned_doc() -> Vec<u8> {
    use gltf_support::base64 as encode;
    let mut bin = Bin::default();
    let positions = bin.floats(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    let joints = bin.view(&[0u8; 12]);
    bin.accessors.push(format!(
        r#"{{"bufferView":{joints},"componentType":5121,"type":"VEC4","count":3}}"#
    ));
    let joints = bin.accessors.len() - 1;
    let weights = bin.floats(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        "VEC4",
    );
    let target = bin.floats(&[0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0], "VEC3");
    let times = bin.floats(&[0.0, 1.0], "SCALAR");
    let turn = (0.25f32).sin();
    let rotations = bin.floats(
        &[0.0, 0.0, 0.0, 1.0, 0.0, turn, 0.0, (0.25f32).cos()],
        "VEC4",
    );
    let keyed = bin.floats(&[0.0, 1.0], "SCALAR");
    format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0,1]}}],"nodes":[{{"name":"root"}},{{"name":"face","mesh":0,"skin":0}}],"skins":[{{"joints":[0]}}],"meshes":[{{"name":"face","primitives":[{{"attributes":{{"POSITION":{positions},"JOINTS_0":{joints},"WEIGHTS_0":{weights}}},"targets":[{{"POSITION":{target}}}]}}],"weights":[0.25]}}],"animations":[{{"name":"a","samplers":[{{"input":{times},"output":{rotations},"interpolation":"LINEAR"}},{{"input":{times},"output":{keyed},"interpolation":"LINEAR"}}],"channels":[{{"sampler":0,"target":{{"node":0,"path":"rotation"}}}},{{"sampler":1,"target":{{"node":1,"path":"weights"}}}}]}}],"accessors":[{}],"bufferViews":[{}],"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}]}}"#,
        bin.accessors.join(","),
        bin.views.join(","),
        bin.bytes.len(),
        encode(&bin.bytes)
    )
    .into_bytes()
}

#[test]
fn a_skinned_nodes_morph_weights_are_curves_of_its_skeleton_that_programs_carry() {
    use throng_cpu_ref::{Evaluator, PoseOp, Program, ProgramLimits};
    let imported = import_slice(&skinned_doc(), "skinned.gltf").unwrap();
    let (package, _) = cook(&imported, &Profile::DEFAULT).unwrap();
    let c = &package.curves;
    assert_eq!(c.channels.len(), 1);
    let channel = &c.channels[0];
    assert_eq!(
        (channel.name.as_str(), channel.default, channel.composition),
        ("morph/face/0", 0.25, throng_cpu_ref::Composition::Blend)
    );
    let clip = package.find_clip("a").unwrap();
    assert_eq!(c.tracks_of(clip as u32).len(), 1);
    // A program sampling the clip carries the weight the weight clip gives at that time; the
    // rest pose carries the default.
    let assets = package.assets(0).unwrap();
    let joints = package.skeletons[0].joint_count();
    let mut ev = Evaluator::with_curves(ProgramLimits::default(), joints, 0, 1);
    let weights = &package.scene.clips[0];
    for t in [0.0f32, 0.3, 0.55, 1.0] {
        let program = Program {
            ops: vec![PoseOp::sample(0, clip as u32, t), PoseOp::to_component(0)],
            weights: vec![],
        };
        ev.run(&program, &assets).unwrap();
        let mut want = [0.0];
        assert!(weights.sample(0, f64::from(t), &mut want));
        assert!(
            (ev.curves()[0] - want[0]).abs() < 1e-6,
            "{t}: {:?} against {want:?}",
            ev.curves()
        );
    }
    let rest = Program {
        ops: vec![PoseOp::rest(0), PoseOp::to_component(0)],
        weights: vec![],
    };
    ev.run(&rest, &assets).unwrap();
    assert_eq!(ev.curves(), [0.25]);
    // The package carries them.
    assert_eq!(
        read_package(&write_package(&package)).unwrap().curves,
        package.curves
    );
}

#[test]
fn a_file_with_no_skin_and_no_targets_is_still_refused() {
    let mut d = doc();
    d.targets = "[]".into();
    d.mesh_weights = String::new();
    let err = import(&d).unwrap_err();
    assert!(matches!(err, CookError::NoSkin { .. }), "{err:?}");
}

/// Offset and size of the section of `kind` in a written package.
fn section(bytes: &[u8], kind: u32) -> (usize, usize) {
    let at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
    let at64 = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize;
    (0..at(12) as usize)
        .map(|i| 32 + 24 * i)
        .find(|&e| at(e) == kind)
        .map(|e| (at64(e + 8), at64(e + 16)))
        .expect("section present")
}

#[test]
fn every_byte_of_the_scene_section_rewritten_is_read_or_refused_never_a_panic() {
    let mut d = doc();
    weights_animation(&mut d, "LINEAR", &[0.0, 1.0], &[0.0, 1.0, 1.0, 0.0]);
    let (package, _) = cook(&import(&d).unwrap(), &Profile::DEFAULT).unwrap();
    let bytes = write_package(&package);
    let (offset, size) = section(&bytes, 10);
    assert!(size > 0, "the SCENE section is written");
    let (refused, read) = package_support::rewrite_each_byte(&bytes, offset..offset + size);
    eprintln!("SCENE rewrites: {refused} refused, {read} read (values still valid)");
    assert!(refused > 0 && read > 0);
    // Counts and kinds are checked: a target set naming a static mesh that does not exist.
    let mut damaged = bytes.clone();
    let set = offset + 16 + 20 + 12 * 3 + 4 * 3; // after the one static mesh (3 vertices, 3 indices)
    damaged[set + 4..set + 8].copy_from_slice(&7u32.to_le_bytes());
    let hash = xxhash_rust::xxh3::xxh3_64(&damaged[32..]);
    damaged[16..24].copy_from_slice(&hash.to_le_bytes());
    let err = read_package(&damaged).unwrap_err();
    assert!(
        matches!(
            &err,
            PackageError::Invalid {
                section: "SCENE",
                field: "target set mesh",
                ..
            }
        ),
        "{err:?}"
    );
}
