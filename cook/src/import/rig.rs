//! Skeletons and skin bindings from glTF skins (the construction rule is in the module doc of
//! `import`).

use std::collections::HashMap;

use glam::{Affine3A, Mat4, Quat, Vec3, Vec4};
use gltf::accessor::{DataType, Dimensions};
use gltf::scene::Transform;
use gltf::{Document, Node};
use throng_cpu_ref::{Skeleton, SkinBinding, Trs, NO_PARENT};

use super::accessor::Buffers;
use super::hierarchy::{node_label, Hierarchy};
use super::CookError;

/// Source node of the synthetic root joint.
const SYNTHETIC: u32 = u32::MAX;
/// Name of the synthetic root joint added when a skin's joints have no common ancestor.
pub const SYNTHETIC_ROOT_NAME: &str = "__root";
/// Smallest accepted scale component (DESIGN.md §2: near-singular scales are rejected).
pub(super) const MIN_SCALE: f32 = 1e-6;
/// Largest relative error of a joint matrix rebuilt from its TRS decomposition before it
/// counts as sheared.
const SHEAR_TOLERANCE: f32 = 1e-4;
/// Largest deviation of a matrix's bottom row from (0, 0, 0, 1).
const AFFINE_TOLERANCE: f32 = 1e-5;

/// Skeletons, skin bindings, and where each glTF node went.
pub(super) struct Rig {
    pub skeletons: Vec<Skeleton>,
    pub skins: Vec<SkinBinding>,
    /// `(skeleton, joint)` of every glTF node, per node index (a node may be in several skeletons).
    pub node_joints: Vec<Vec<(u32, u32)>>,
}

pub(super) fn build(doc: &Document, tree: &Hierarchy, buffers: &Buffers) -> Result<Rig, CookError> {
    let file = buffers.file;
    let mut rig = Rig {
        skeletons: Vec::new(),
        skins: Vec::new(),
        node_joints: vec![Vec::new(); doc.nodes().len()],
    };
    let nodes: Vec<Node> = doc.nodes().collect();
    let mut by_order: HashMap<Vec<u32>, u32> = HashMap::new();
    for skin in doc.skins() {
        let skin_name = skin
            .name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("skin{}", skin.index()));
        let skin_err = |reason: String| CookError::Skin {
            file: file.to_string(),
            skin: skin_name.clone(),
            reason,
        };
        let joints: Vec<usize> = skin.joints().map(|n| n.index()).collect();
        if joints.is_empty() {
            return Err(skin_err("has no joints".into()));
        }
        let mut seen = vec![false; nodes.len()];
        for &j in &joints {
            if std::mem::replace(&mut seen[j], true) {
                return Err(skin_err(format!("lists {} twice", node_label(doc, j))));
            }
        }
        let layout = joint_order(&joints, tree, &nodes);
        let skeleton = match by_order.get(&layout.order) {
            Some(&s) => s,
            None => {
                let s = rig.skeletons.len() as u32;
                let skeleton = make_skeleton(&layout, tree, &nodes, doc, file, &skin_name)?;
                for (j, &node) in layout.order.iter().enumerate() {
                    if node != SYNTHETIC {
                        rig.node_joints[node as usize].push((s, j as u32));
                    }
                }
                rig.skeletons.push(skeleton);
                by_order.insert(layout.order.clone(), s);
                s
            }
        };
        let position: HashMap<u32, u32> = layout
            .order
            .iter()
            .enumerate()
            .map(|(j, &n)| (n, j as u32))
            .collect();
        let palette = joints
            .iter()
            .map(|&n| position.get(&(n as u32)).copied().unwrap_or(0))
            .collect();
        let inverse_bind = inverse_binds(&skin, joints.len(), buffers, &skin_name)?;
        rig.skins.push(SkinBinding {
            name: skin_name,
            skeleton,
            joints: palette,
            inverse_bind,
        });
    }
    Ok(rig)
}

/// The joint nodes of one skeleton in depth-first order, and the top of the tree.
struct Layout {
    /// glTF node of each joint, parent before child; [`SYNTHETIC`] for a synthetic root.
    order: Vec<u32>,
    /// Nodes above the top joint, scene root first (empty with a synthetic root).
    ancestors: Vec<usize>,
}

fn joint_order(joints: &[usize], tree: &Hierarchy, nodes: &[Node]) -> Layout {
    let paths: Vec<Vec<usize>> = joints.iter().map(|&j| tree.path_from_root(j)).collect();
    let first = &paths[0];
    let common = paths
        .iter()
        .map(|p| p.iter().zip(first).take_while(|(a, b)| a == b).count())
        .min()
        .unwrap_or(0);
    let mut in_set = vec![false; nodes.len()];
    let mut tops: Vec<usize> = Vec::new();
    let skip = common.saturating_sub(1);
    for p in &paths {
        for &n in &p[skip..] {
            in_set[n] = true;
        }
        if !tops.contains(&p[skip]) {
            tops.push(p[skip]);
        }
    }
    tops.sort_unstable();
    let mut order = Vec::new();
    if common == 0 {
        order.push(SYNTHETIC);
    }
    for &top in &tops {
        let mut stack = vec![top];
        while let Some(n) = stack.pop() {
            order.push(n as u32);
            let children: Vec<usize> = nodes[n]
                .children()
                .map(|c| c.index())
                .filter(|&c| in_set[c])
                .collect();
            stack.extend(children.into_iter().rev());
        }
    }
    let ancestors = if common == 0 {
        Vec::new()
    } else {
        first[..common - 1].to_vec()
    };
    Layout { order, ancestors }
}

fn make_skeleton(
    layout: &Layout,
    tree: &Hierarchy,
    nodes: &[Node],
    doc: &Document,
    file: &str,
    skin_name: &str,
) -> Result<Skeleton, CookError> {
    let position: HashMap<u32, u32> = layout
        .order
        .iter()
        .enumerate()
        .map(|(j, &n)| (n, j as u32))
        .collect();
    let synthetic = layout.order.first() == Some(&SYNTHETIC);
    let mut parents = Vec::with_capacity(layout.order.len());
    let mut rest = Vec::with_capacity(layout.order.len());
    let mut names = Vec::with_capacity(layout.order.len());
    for &n in &layout.order {
        if n == SYNTHETIC {
            parents.push(NO_PARENT);
            rest.push(Trs::IDENTITY);
            names.push(SYNTHETIC_ROOT_NAME.to_string());
            continue;
        }
        let node = &nodes[n as usize];
        let parent = tree.parent[n as usize].and_then(|p| position.get(&(p as u32)).copied());
        parents.push(parent.unwrap_or(if synthetic { 0 } else { NO_PARENT }));
        rest.push(joint_rest(node, doc, file)?);
        names.push(
            node.name()
                .map(str::to_string)
                .unwrap_or_else(|| format!("node{n}")),
        );
    }
    let mut root_transform = Affine3A::IDENTITY;
    for &a in &layout.ancestors {
        root_transform *= ancestor_matrix(&nodes[a], doc, file)?;
    }
    Skeleton::new(parents, rest, names, layout.order.clone(), root_transform).map_err(|source| {
        CookError::Skeleton {
            file: file.to_string(),
            skin: skin_name.to_string(),
            source,
        }
    })
}

/// Rest TRS of a joint node; a `matrix` must decompose without shear.
fn joint_rest(node: &Node, doc: &Document, file: &str) -> Result<Trs, CookError> {
    let label = || node_label(doc, node.index());
    match node.transform() {
        Transform::Decomposed {
            translation,
            rotation,
            scale,
        } => {
            let t = Vec3::from_array(translation);
            let s = Vec3::from_array(scale);
            let q = Vec4::from_array(rotation);
            if !t.is_finite() || !q.is_finite() || !s.is_finite() {
                return Err(CookError::NonFinite {
                    file: file.to_string(),
                    place: format!("{} rest transform", label()),
                });
            }
            check_scale(s, file, || format!("{} rest", label()))?;
            let rotation = unit_quat(q).ok_or_else(|| CookError::BadMatrix {
                file: file.to_string(),
                place: format!("{} rest rotation", label()),
                reason: "zero quaternion".into(),
            })?;
            Ok(Trs {
                translation: t,
                rotation,
                scale: s,
            })
        }
        Transform::Matrix { matrix } => {
            let m = checked_affine(matrix, file, &label)?;
            let (s, r, t) = Mat4::from(m).to_scale_rotation_translation();
            check_scale(s, file, || format!("{} rest matrix", label()))?;
            let rebuilt = Affine3A::from_scale_rotation_translation(s, r, t);
            let size = m
                .matrix3
                .to_cols_array()
                .iter()
                .fold(1.0f32, |a, v| a.max(v.abs()));
            let error = (rebuilt.matrix3 - m.matrix3)
                .to_cols_array()
                .iter()
                .fold(0.0f32, |a, v| a.max(v.abs()))
                / size;
            if error.is_nan() || error > SHEAR_TOLERANCE {
                return Err(CookError::ShearedJoint {
                    file: file.to_string(),
                    node: label(),
                    error,
                });
            }
            Ok(Trs {
                translation: t,
                rotation: r.normalize(),
                scale: s,
            })
        }
    }
}

/// Local matrix of a node above the skeleton: any affine with a non-singular linear part.
pub(super) fn ancestor_matrix(
    node: &Node,
    doc: &Document,
    file: &str,
) -> Result<Affine3A, CookError> {
    let label = || node_label(doc, node.index());
    let m = checked_affine(node.transform().matrix(), file, &label)?;
    let det = m.matrix3.determinant();
    if det.is_nan() || det.abs() < MIN_SCALE * MIN_SCALE * MIN_SCALE {
        return Err(CookError::BadMatrix {
            file: file.to_string(),
            place: label(),
            reason: format!("determinant {det:e} is (nearly) singular"),
        });
    }
    Ok(m)
}

fn checked_affine(
    cols: [[f32; 4]; 4],
    file: &str,
    label: &dyn Fn() -> String,
) -> Result<Affine3A, CookError> {
    let m = Mat4::from_cols_array_2d(&cols);
    if !m.is_finite() {
        return Err(CookError::NonFinite {
            file: file.to_string(),
            place: format!("{} matrix", label()),
        });
    }
    if !is_affine(&m) {
        return Err(CookError::BadMatrix {
            file: file.to_string(),
            place: label(),
            reason: "bottom row is not (0, 0, 0, 1)".into(),
        });
    }
    Ok(Affine3A::from_mat4(m))
}

fn is_affine(m: &Mat4) -> bool {
    (m.row(3) - Vec4::W).abs().max_element() <= AFFINE_TOLERANCE
}

/// Rejects non-finite, zero, negative and near-singular scales.
pub(super) fn check_scale(
    s: Vec3,
    file: &str,
    place: impl FnOnce() -> String,
) -> Result<(), CookError> {
    if s.is_finite() && s.min_element() >= MIN_SCALE {
        Ok(())
    } else {
        Err(CookError::BadScale {
            file: file.to_string(),
            place: place(),
            scale: s.to_array(),
        })
    }
}

/// Normalised quaternion from stored (x, y, z, w), or `None` when (nearly) zero.
pub(super) fn unit_quat(q: Vec4) -> Option<Quat> {
    let len = q.length();
    (len.is_finite() && len > 1e-6).then(|| Quat::from_vec4(q / len))
}

/// Inverse bind matrices of a skin: the accessor's first `count`, or identity when absent.
fn inverse_binds(
    skin: &gltf::Skin,
    count: usize,
    buffers: &Buffers,
    skin_name: &str,
) -> Result<Vec<Affine3A>, CookError> {
    let file = buffers.file;
    let Some(accessor) = skin.inverse_bind_matrices() else {
        return Ok(vec![Affine3A::IDENTITY; count]);
    };
    let floats = buffers.floats(&accessor, Dimensions::Mat4, &[DataType::F32])?;
    if floats.len() < count * 16 {
        return Err(CookError::Skin {
            file: file.to_string(),
            skin: skin_name.to_string(),
            reason: format!(
                "inverseBindMatrices accessor {} has {} matrices for {count} joints",
                accessor.index(),
                floats.len() / 16
            ),
        });
    }
    floats
        .chunks_exact(16)
        .take(count)
        .enumerate()
        .map(|(k, c)| {
            let m = Mat4::from_cols_slice(c);
            let place = || {
                format!(
                    "skin {skin_name} inverse bind matrix {k} (accessor {})",
                    accessor.index()
                )
            };
            if !m.is_finite() {
                return Err(CookError::NonFinite {
                    file: file.to_string(),
                    place: place(),
                });
            }
            if !is_affine(&m) {
                return Err(CookError::BadMatrix {
                    file: file.to_string(),
                    place: place(),
                    reason: "bottom row is not (0, 0, 0, 1)".into(),
                });
            }
            Ok(Affine3A::from_mat4(m))
        })
        .collect()
}
