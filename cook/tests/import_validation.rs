//! Small hand-written glTF documents (embedded base64 buffers) exercising each validation rule
//! and the skeleton construction rule.

mod gltf_support;

use gltf_support::base64;
use throng_cook::{import_slice, CookError, Imported};
use throng_cpu_ref::{ChannelPath, Interpolation, NO_PARENT};

/// Binary data and the accessors / buffer views that describe it.
#[derive(Default)]
struct Bin {
    bytes: Vec<u8>,
    views: Vec<String>,
    accessors: Vec<String>,
}

impl Bin {
    /// Appends one accessor over `bytes`; returns its index.
    fn push(&mut self, bytes: &[u8], component: u32, ty: &str, count: usize, extra: &str) -> usize {
        self.bytes.resize(self.bytes.len().next_multiple_of(4), 0);
        self.views.push(format!(
            r#"{{"buffer":0,"byteOffset":{},"byteLength":{}}}"#,
            self.bytes.len(),
            bytes.len()
        ));
        self.bytes.extend_from_slice(bytes);
        let view = self.views.len() - 1;
        self.accessors.push(format!(
            r#"{{"bufferView":{view},"componentType":{component},"type":"{ty}","count":{count}{extra}}}"#
        ));
        self.accessors.len() - 1
    }

    fn f32s(&mut self, values: &[f32], ty: &str) -> usize {
        let width = match ty {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            _ => 16,
        };
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let extra = if ty == "VEC3" {
            // POSITION accessors need min/max (any values do for these tests).
            r#","min":[-10,-10,-10],"max":[10,10,10]"#
        } else {
            ""
        };
        self.push(&bytes, 5126, ty, values.len() / width, extra)
    }

    fn u16s(&mut self, values: &[u16], ty: &str) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.push(&bytes, 5123, ty, values.len() / 4, "")
    }
}

/// A two-joint skin ("root" → "child") on a one-triangle mesh, a non-joint "prop" node, and
/// one animation "bend" rotating "child". Tests edit the parts before rendering.
struct Parts {
    nodes: Vec<String>,
    scene: String,
    skins: String,
    attributes: String,
    animations: String,
    bin: Bin,
}

/// Accessor indices of the base document.
const TIMES: usize = 3;
const ROTATIONS: usize = 4;

fn base() -> Parts {
    let mut bin = Bin::default();
    bin.f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    bin.u16s(&[0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], "VEC4");
    bin.f32s(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0],
        "VEC4",
    );
    bin.f32s(&[0.0, 1.0], "SCALAR");
    bin.f32s(
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.70710677, 0.70710677],
        "VEC4",
    );
    Parts {
        nodes: vec![
            r#"{"name":"root","children":[1],"translation":[0,1,0]}"#.into(),
            r#"{"name":"child","translation":[0,1,0]}"#.into(),
            r#"{"name":"body","mesh":0,"skin":0}"#.into(),
            r#"{"name":"prop"}"#.into(),
        ],
        scene: "[0,2,3]".into(),
        skins: r#"[{"name":"rig","joints":[0,1]}]"#.into(),
        attributes: r#""POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2"#.into(),
        animations: animation("bend", 1, "rotation", "LINEAR", TIMES, ROTATIONS),
        bin,
    }
}

fn animation(
    name: &str,
    node: usize,
    path: &str,
    interpolation: &str,
    input: usize,
    output: usize,
) -> String {
    format!(
        r#"[{{"name":"{name}","samplers":[{{"input":{input},"output":{output},"interpolation":"{interpolation}"}}],"channels":[{{"sampler":0,"target":{{"node":{node},"path":"{path}"}}}}]}}]"#
    )
}

fn render(p: &Parts) -> Vec<u8> {
    format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":{}}}],"nodes":[{}],"skins":{},"meshes":[{{"name":"body","primitives":[{{"attributes":{{{}}}}}]}}],"animations":{},"accessors":[{}],"bufferViews":[{}],"buffers":[{{"byteLength":{},"uri":"data:application/octet-stream;base64,{}"}}]}}"#,
        p.scene,
        p.nodes.join(","),
        p.skins,
        p.attributes,
        p.animations,
        p.bin.accessors.join(","),
        p.bin.views.join(","),
        p.bin.bytes.len(),
        base64(&p.bin.bytes)
    )
    .into_bytes()
}

fn import(p: &Parts) -> Result<Imported, CookError> {
    import_slice(&render(p), "test.gltf")
}

#[test]
fn the_base_document_imports() {
    let imported = import(&base()).unwrap();
    let skeleton = &imported.package.skeletons[0];
    assert_eq!(skeleton.names, ["root", "child"]);
    assert_eq!(skeleton.parents, [NO_PARENT, 0]);
    assert_eq!(imported.package.meshes[0].name, "body/0");
    assert_eq!(imported.package.meshes[0].joints[2], [1, 0, 0, 0]);
    let clip = &imported.source_clips[0];
    assert_eq!(
        (clip.name.as_str(), clip.duration, clip.channels.len()),
        ("bend", 1.0, 1)
    );
    assert_eq!(
        (
            clip.channels[0].joint,
            clip.channels[0].path,
            clip.channels[0].interpolation
        ),
        (1, ChannelPath::Rotation, Interpolation::Linear)
    );
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
}

#[test]
fn zero_scale_in_the_rest_pose_is_an_error_naming_the_node() {
    let mut p = base();
    p.nodes[1] = r#"{"name":"child","translation":[0,1,0],"scale":[1,0,1]}"#.into();
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::BadScale { place, .. } if place.contains("'child'")),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("test.gltf: "), "{err}");
}

#[test]
fn negative_scale_key_is_an_error_naming_channel_and_key() {
    let mut p = base();
    let scales = p.bin.f32s(&[1.0, 1.0, 1.0, 1.0, -1.0, 1.0], "VEC3");
    p.animations = animation("grow", 1, "scale", "LINEAR", TIMES, scales);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::BadScale { place, .. } if place.contains("animation 'grow' channel 0") && place.ends_with("key 1")),
        "{err:?}"
    );
}

#[test]
fn nan_key_is_an_error_naming_channel_and_key() {
    let mut p = base();
    let rotations = p
        .bin
        .f32s(&[0.0, 0.0, 0.0, 1.0, f32::NAN, 0.0, 0.0, 1.0], "VEC4");
    p.animations = animation("bend", 1, "rotation", "LINEAR", TIMES, rotations);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::NonFinite { place, .. } if place.contains("'child'") && place.ends_with("key 1")),
        "{err:?}"
    );
}

#[test]
fn channel_on_a_node_outside_every_skeleton_is_an_error() {
    let mut p = base();
    p.animations = animation("bend", 3, "rotation", "LINEAR", TIMES, ROTATIONS);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::ChannelOnNonJoint { node, .. } if node == "node 3 'prop'"),
        "{err:?}"
    );
}

#[test]
fn joint_index_outside_the_skin_is_an_error_naming_mesh_and_vertex() {
    let mut p = base();
    let joints = p.bin.u16s(&[0, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0], "VEC4");
    p.attributes = format!(r#""POSITION":0,"JOINTS_0":{joints},"WEIGHTS_0":2"#);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::JointIndexOutOfRange { mesh, vertex: 2, index: 5, palette: 2, .. } if mesh == "body/0"),
        "{err:?}"
    );
}

#[test]
fn missing_skinning_attributes_are_errors_naming_the_mesh() {
    for (attributes, missing) in [
        (r#""POSITION":0,"JOINTS_0":1"#, "WEIGHTS_0"),
        (r#""POSITION":0,"WEIGHTS_0":2"#, "JOINTS_0"),
    ] {
        let mut p = base();
        p.attributes = attributes.into();
        let err = import(&p).unwrap_err();
        assert!(
            matches!(&err, CookError::MissingAttribute { mesh, attribute, .. } if mesh == "body/0" && *attribute == missing),
            "{err:?}"
        );
    }
}

#[test]
fn an_accessor_that_does_not_exist_is_an_error() {
    let mut p = base();
    p.animations = animation("bend", 1, "rotation", "LINEAR", 99, ROTATIONS);
    assert!(matches!(import(&p).unwrap_err(), CookError::Parse { .. }));
    let mut p = base();
    p.attributes = r#""POSITION":42,"JOINTS_0":1,"WEIGHTS_0":2"#.into();
    assert!(matches!(import(&p).unwrap_err(), CookError::Parse { .. }));
}

#[test]
fn an_accessor_past_the_end_of_its_view_is_an_error() {
    let mut p = base();
    p.bin.accessors[ROTATIONS] = p.bin.accessors[ROTATIONS].replace(r#""count":2"#, r#""count":3"#);
    p.bin.accessors[TIMES] = p.bin.accessors[TIMES].replace(r#""count":2"#, r#""count":3"#);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(
            &err,
            CookError::Accessor {
                accessor: TIMES,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn animating_a_matrix_node_is_an_error() {
    let mut p = base();
    p.nodes[1] = r#"{"name":"child","matrix":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1]}"#.into();
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::AnimatedMatrixNode { node, .. } if node == "node 1 'child'"),
        "{err:?}"
    );
    // Not animated, the same matrix is a joint's rest transform.
    p.animations = "[]".into();
    let imported = import(&p).unwrap();
    assert_eq!(
        imported.package.skeletons[0].rest[1].translation,
        glam::Vec3::Y
    );
}

#[test]
fn a_sheared_joint_matrix_is_an_error_but_a_sheared_ancestor_is_kept() {
    let mut p = base();
    p.animations = "[]".into();
    p.nodes[1] = r#"{"name":"child","matrix":[1,0,0,0, 0.5,1,0,0, 0,0,1,0, 0,1,0,1]}"#.into();
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::ShearedJoint { node, .. } if node == "node 1 'child'"),
        "{err:?}"
    );

    let mut p = base();
    p.nodes.push(
        r#"{"name":"armature","children":[0],"matrix":[1,0,0,0, 0.5,1,0,0, 0,0,2,0, 3,0,0,1]}"#
            .into(),
    );
    p.scene = "[4,2,3]".into();
    let imported = import(&p).unwrap();
    let root = imported.package.skeletons[0].root_transform;
    let expected = glam::Affine3A::from_cols_array(&[
        1.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.0, 0.0,
    ]);
    assert_eq!(root, expected);
}

#[test]
fn key_times_must_increase_and_be_non_negative() {
    for times in [[1.0f32, 0.5], [0.5, 0.5], [-1.0, 1.0]] {
        let mut p = base();
        let input = p.bin.f32s(&times, "SCALAR");
        p.animations = animation("bend", 1, "rotation", "LINEAR", input, ROTATIONS);
        let err = import(&p).unwrap_err();
        let key = if times[0] < 0.0 { 0 } else { 1 };
        assert!(
            matches!(&err, CookError::KeyTime { key: k, .. } if *k == key),
            "{times:?}: {err:?}"
        );
    }
}

#[test]
fn output_count_must_match_the_keys() {
    let mut p = base();
    p.animations = animation("bend", 1, "rotation", "CUBICSPLINE", TIMES, ROTATIONS);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(
            &err,
            CookError::OutputCount {
                keys: 2,
                expected: 6,
                actual: 2,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_node_with_two_parents_is_an_error() {
    let mut p = base();
    p.nodes[3] = r#"{"name":"prop","children":[1]}"#.into();
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::TwoParents { node, .. } if node == "node 1 'child'"),
        "{err:?}"
    );
}

#[test]
fn a_file_without_skins_is_refused() {
    let mut p = base();
    p.skins = "[]".into();
    p.nodes[2] = r#"{"name":"body","mesh":0}"#.into();
    p.animations = "[]".into();
    let err = import(&p).unwrap_err();
    assert_eq!(
        err.to_string(),
        "test.gltf has no skin: nothing to cook (Throng cooks skinned characters)"
    );
}

#[test]
fn weights_are_normalised_and_reported() {
    let mut p = base();
    let weights = p.bin.f32s(
        &[2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.25, 0.25, 0.0, 0.0],
        "VEC4",
    );
    p.attributes = format!(r#""POSITION":0,"JOINTS_0":1,"WEIGHTS_0":{weights}"#);
    let imported = import(&p).unwrap();
    assert_eq!(
        imported.package.meshes[0].weights,
        [
            [1.0, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.5, 0.5, 0.0, 0.0]
        ]
    );
    assert!(
        imported
            .warnings
            .iter()
            .any(|w| w.contains("weights of 2 of 3 vertices")),
        "{:?}",
        imported.warnings
    );
}

#[test]
fn all_zero_weights_are_an_error_naming_the_vertex() {
    let mut p = base();
    let weights = p.bin.f32s(
        &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0],
        "VEC4",
    );
    p.attributes = format!(r#""POSITION":0,"JOINTS_0":1,"WEIGHTS_0":{weights}"#);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::ZeroWeights { vertex: 1, .. }),
        "{err:?}"
    );
}

#[test]
fn a_second_influence_set_is_an_error_when_weighted_and_a_warning_when_empty() {
    let mut p = base();
    let weights1 = p.bin.f32s(&[0.0; 12], "VEC4");
    p.attributes =
        format!(r#""POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2,"JOINTS_1":1,"WEIGHTS_1":{weights1}"#);
    let imported = import(&p).unwrap();
    assert!(
        imported
            .warnings
            .iter()
            .any(|w| w.contains("JOINTS_1, WEIGHTS_1 ignored")),
        "{:?}",
        imported.warnings
    );

    let mut p = base();
    let weights1 = p.bin.f32s(
        &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.0],
        "VEC4",
    );
    p.attributes =
        format!(r#""POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2,"JOINTS_1":1,"WEIGHTS_1":{weights1}"#);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::TooManyInfluences { mesh, vertex: 2, .. } if mesh == "body/0"),
        "{err:?}"
    );
}

#[test]
fn morph_weight_channels_are_skipped_with_a_warning() {
    let mut p = base();
    let weights = p.bin.f32s(&[0.0, 1.0], "SCALAR");
    p.animations = format!(
        r#"[{{"name":"bend","samplers":[{{"input":{TIMES},"output":{ROTATIONS}}},{{"input":{TIMES},"output":{weights}}}],"channels":[{{"sampler":0,"target":{{"node":1,"path":"rotation"}}}},{{"sampler":1,"target":{{"node":2,"path":"weights"}}}}]}}]"#
    );
    let imported = import(&p).unwrap();
    assert_eq!(imported.source_clips[0].channels.len(), 1);
    assert!(
        imported
            .warnings
            .iter()
            .any(|w| w.contains("animation 'bend' channel 1")
                && w.contains("morph-target weights skipped")),
        "{:?}",
        imported.warnings
    );
}

#[test]
fn quaternion_keys_are_normalised() {
    let mut p = base();
    let rotations = p
        .bin
        .f32s(&[0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.707, 0.707], "VEC4");
    p.animations = animation("bend", 1, "rotation", "LINEAR", TIMES, rotations);
    let values = &import(&p).unwrap().source_clips[0].channels[0].values;
    assert_eq!(&values[..4], &[0.0, 0.0, 0.0, 1.0]);
    assert!(
        (values[6] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-7
            && (values[6] - values[7]).abs() < 1e-7
    );
}

#[test]
fn non_joint_nodes_between_joints_are_kept_and_ancestors_become_the_root_transform() {
    let mut p = base();
    // armature(4, scaled) → root(0) → elbow(5, not a joint) → child(1)
    p.nodes[0] = r#"{"name":"root","children":[5],"translation":[0,1,0]}"#.into();
    p.nodes
        .push(r#"{"name":"armature","children":[0],"scale":[100,100,100]}"#.into());
    p.nodes
        .push(r#"{"name":"elbow","children":[1],"rotation":[0,0,0.70710677,0.70710677]}"#.into());
    p.scene = "[4,2,3]".into();
    let imported = import(&p).unwrap();
    let skeleton = &imported.package.skeletons[0];
    assert_eq!(skeleton.names, ["root", "elbow", "child"]);
    assert_eq!(skeleton.parents, [NO_PARENT, 0, 1]);
    assert_eq!(skeleton.source_nodes, [0, 5, 1]);
    assert_eq!(imported.package.skins[0].joints, [0, 2]);
    assert_eq!(
        skeleton.root_transform,
        glam::Affine3A::from_scale(glam::Vec3::splat(100.0))
    );
    assert_eq!(imported.source_clips[0].channels[0].joint, 2);
}

#[test]
fn joints_without_a_common_ancestor_get_a_synthetic_root() {
    let mut p = base();
    p.nodes[0] = r#"{"name":"root","translation":[0,1,0]}"#.into();
    p.scene = "[0,1,2,3]".into();
    let imported = import(&p).unwrap();
    let skeleton = &imported.package.skeletons[0];
    assert_eq!(skeleton.names, ["__root", "root", "child"]);
    assert_eq!(skeleton.parents, [NO_PARENT, 0, 0]);
    assert_eq!(skeleton.source_nodes, [u32::MAX, 0, 1]);
    assert_eq!(imported.package.skins[0].joints, [1, 2]);
}

#[test]
fn joint_order_is_depth_first_in_child_order_and_palettes_are_remapped() {
    let mut p = base();
    // root(0) → [b(4) → [c(1)], a(5)]; the skin lists its joints in another order.
    p.nodes[0] = r#"{"name":"root","children":[4,5]}"#.into();
    p.nodes.push(r#"{"name":"b","children":[1]}"#.into());
    p.nodes.push(r#"{"name":"a"}"#.into());
    p.skins = r#"[{"joints":[5,1,0,4]},{"name":"same","joints":[0,1,4,5]}]"#.into();
    let imported = import(&p).unwrap();
    assert_eq!(
        imported.package.skeletons.len(),
        1,
        "skins with the same node set share a skeleton"
    );
    assert_eq!(
        imported.package.skeletons[0].names,
        ["root", "b", "child", "a"]
    );
    assert_eq!(imported.package.skeletons[0].subtree_end, [4, 3, 3, 4]);
    assert_eq!(imported.package.skins[0].joints, [3, 2, 0, 1]);
    assert_eq!(imported.package.skins[0].name, "skin0");
    assert_eq!(imported.package.skins[1].joints, [0, 2, 1, 3]);
    assert_eq!(imported.package.skins[1].skeleton, 0);
}

#[test]
fn inverse_bind_matrices_are_read_and_checked() {
    let mut p = base();
    let mut m = glam::Mat4::from_translation(glam::Vec3::new(0.0, -1.0, 0.0))
        .to_cols_array()
        .to_vec();
    m.extend(glam::Mat4::from_translation(glam::Vec3::new(0.0, -2.0, 0.0)).to_cols_array());
    let ibm = p.bin.f32s(&m, "MAT4");
    p.skins = format!(r#"[{{"joints":[0,1],"inverseBindMatrices":{ibm}}}]"#);
    let imported = import(&p).unwrap();
    assert_eq!(
        imported.package.skins[0].inverse_bind[1],
        glam::Affine3A::from_translation(glam::Vec3::new(0.0, -2.0, 0.0))
    );

    m[3] = 0.5; // bottom row of the first matrix
    let mut p = base();
    let ibm = p.bin.f32s(&m, "MAT4");
    p.skins = format!(r#"[{{"joints":[0,1],"inverseBindMatrices":{ibm}}}]"#);
    let err = import(&p).unwrap_err();
    assert!(
        matches!(&err, CookError::BadMatrix { place, .. } if place.contains("inverse bind matrix 0")),
        "{err:?}"
    );
}

#[test]
fn an_accessor_of_67_108_865_components_is_refused_before_anything_is_read() {
    let with_times = |count: &str| {
        let mut p = base();
        p.bin.accessors[TIMES] =
            p.bin.accessors[TIMES].replace(r#""count":2"#, &format!(r#""count":{count}"#));
        import(&p).unwrap_err()
    };
    let err = with_times("67108865");
    match &err {
        CookError::Accessor {
            accessor: TIMES,
            reason,
            ..
        } => assert!(
            reason.contains("has count 67108865; expected 1 to 67108864 components"),
            "{reason}"
        ),
        other => panic!("expected an accessor error, got {other:?}"),
    }
    // 2^26 scalars pass the size bound; they fail only because the view is 8 bytes long.
    let err = with_times("67108864");
    match &err {
        CookError::Accessor {
            accessor: TIMES,
            reason,
            ..
        } => assert!(!reason.contains("components"), "{reason}"),
        other => panic!("expected an accessor error, got {other:?}"),
    }
}
