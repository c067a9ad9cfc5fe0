//! Triangle primitives: positions and normals (in bind space for skinned ones, in the node's
//! space for static ones), `JOINTS_0` / `WEIGHTS_0` with weights normalised to sum 1 on skinned
//! ones, triangle-list indices, and morph targets; and the mesh nodes that instantiate them.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use glam::{Affine3A, Vec3};
use gltf::accessor::{DataType, Dimensions};
use gltf::mesh::{Mode, Semantic};
use gltf::{Document, Primitive};
use throng_cpu_ref::morph::{MeshNode, MeshRef, MorphTarget, NodePrimitive, Scene, StaticMesh};
use throng_cpu_ref::SkinnedMesh;

use super::accessor::Buffers;
use super::hierarchy::{node_label, Hierarchy};
use super::rig::{ancestor_matrix, Rig};
use super::CookError;

/// A vertex whose weights sum differs from 1 by more than this is counted in the report.
const WEIGHT_SUM_TOLERANCE: f32 = 1e-3;

/// What [`read`] cooks: the skinned meshes and the scene's static meshes and mesh nodes.
pub(super) struct Meshes {
    pub skinned: Vec<SkinnedMesh>,
    pub scene: Scene,
}

/// Every primitive of every (mesh, skin) pair that some node instantiates, in node order; the
/// primitives of every unskinned mesh node that hangs under no skeleton joint (once per mesh);
/// and one [`MeshNode`], with its world transform and default weights, per such unskinned node
/// and per skinned node whose mesh has morph targets.
pub(super) fn read(
    doc: &Document,
    rig: &Rig,
    tree: &Hierarchy,
    buffers: &Buffers,
    warnings: &mut Vec<String>,
) -> Result<Meshes, CookError> {
    let file = buffers.file;
    let mut skinned_of: HashMap<(usize, usize), Vec<NodePrimitive>> = HashMap::new();
    let mut static_of: HashMap<usize, Vec<NodePrimitive>> = HashMap::new();
    let mut out = Meshes {
        skinned: Vec::new(),
        scene: Scene::default(),
    };
    let mut tangents_warned = HashSet::new();
    for node in doc.nodes() {
        let Some(mesh) = node.mesh() else { continue };
        let mesh_name = mesh
            .name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("mesh{}", mesh.index()));
        let label = node_label(doc, node.index());
        let targets = target_count(&mesh, &mesh_name, file)?;
        let weights = default_weights(&node, &mesh, &mesh_name, targets, &label, file)?;
        if targets > 0 && tangents_warned.insert(mesh.index()) {
            tangent_warning(&mesh, &mesh_name, warnings);
        }
        let (skin, primitives) = match node.skin() {
            Some(skin) => {
                let key = (mesh.index(), skin.index());
                if let Entry::Vacant(slot) = skinned_of.entry(key) {
                    let palette = rig.skins.get(skin.index()).map_or(0, |s| s.joints.len());
                    let mut refs = Vec::new();
                    for prim in triangle_primitives(&mesh, &mesh_name, warnings) {
                        let name = format!("{mesh_name}/{}", prim.index());
                        let mut m = read_primitive(&prim, &name, Some(palette), buffers, warnings)?;
                        m.skin = skin.index() as u32;
                        refs.push(NodePrimitive {
                            primitive: prim.index() as u32,
                            mesh: MeshRef::Skinned(out.skinned.len() as u32),
                        });
                        out.skinned.push(m);
                    }
                    slot.insert(refs);
                }
                (Some(skin.index() as u32), skinned_of[&key].clone())
            }
            None => {
                // A static mesh under a skeleton joint would follow that joint's animation;
                // Throng keeps no rigid attachments yet, so such a mesh is left out as before.
                let under_joint = tree
                    .path_from_root(node.index())
                    .iter()
                    .any(|&n| rig.node_joints.get(n).is_some_and(|j| !j.is_empty()));
                if under_joint {
                    warnings.push(format!(
                        "{label}: mesh '{mesh_name}' has no skin and hangs under a skeleton joint; \
                         such static meshes are not cooked"
                    ));
                    continue;
                }
                if let Entry::Vacant(slot) = static_of.entry(mesh.index()) {
                    let mut refs = Vec::new();
                    for prim in triangle_primitives(&mesh, &mesh_name, warnings) {
                        let name = format!("{mesh_name}/{}", prim.index());
                        let m = read_primitive(&prim, &name, None, buffers, warnings)?;
                        refs.push(NodePrimitive {
                            primitive: prim.index() as u32,
                            mesh: MeshRef::Static(out.scene.meshes.len() as u32),
                        });
                        out.scene.meshes.push(StaticMesh {
                            name: m.name,
                            positions: m.positions,
                            normals: m.normals,
                            indices: m.indices,
                            targets: m.targets,
                        });
                    }
                    slot.insert(refs);
                }
                (None, static_of[&mesh.index()].clone())
            }
        };
        // A skinned node without targets needs nothing beyond its skinned meshes: it is not
        // listed, so a package without morph targets has no SCENE section.
        if skin.is_some() && targets == 0 {
            continue;
        }
        let mut world = Affine3A::IDENTITY;
        for n in tree.path_from_root(node.index()) {
            if let Some(n) = doc.nodes().nth(n) {
                world *= ancestor_matrix(&n, doc, file)?;
            }
        }
        out.scene.nodes.push(MeshNode {
            node: node.index() as u32,
            name: node
                .name()
                .map(str::to_string)
                .unwrap_or_else(|| format!("node{}", node.index())),
            world,
            skin,
            primitives,
            weights,
        });
    }
    Ok(out)
}

/// The triangle-list primitives of a mesh; a warning for each other one.
fn triangle_primitives<'a>(
    mesh: &gltf::Mesh<'a>,
    mesh_name: &str,
    warnings: &mut Vec<String>,
) -> Vec<Primitive<'a>> {
    let mut out = Vec::new();
    for prim in mesh.primitives() {
        if prim.mode() == Mode::Triangles {
            out.push(prim);
        } else {
            warnings.push(format!(
                "mesh {mesh_name}/{}: {:?} primitive skipped (only triangle lists are cooked)",
                prim.index(),
                prim.mode()
            ));
        }
    }
    out
}

/// The number of morph targets of a mesh: glTF 2.0 §3.7.2.2 requires every primitive to have
/// the same count.
fn target_count(mesh: &gltf::Mesh, mesh_name: &str, file: &str) -> Result<usize, CookError> {
    let mut count = None;
    for prim in mesh.primitives() {
        let n = prim.morph_targets().len();
        match count {
            None => count = Some(n),
            Some(c) if c != n => {
                return Err(CookError::MorphTarget {
                    file: file.to_string(),
                    place: format!("mesh {mesh_name}/{}", prim.index()),
                    reason: format!(
                    "has {n} morph targets, but primitive 0 has {c}; glTF 2.0 §3.7.2.2 requires \
                         the same number on every primitive of a mesh"
                ),
                })
            }
            Some(_) => {}
        }
    }
    Ok(count.unwrap_or(0))
}

/// The node's `weights`, else the mesh's, else zeros (glTF 2.0 §5.17 `node.weights`: "the
/// weights of the instantiated morph target"; §5.22 `mesh.weights`), checked against the target
/// count and for finiteness.
fn default_weights(
    node: &gltf::Node,
    mesh: &gltf::Mesh,
    mesh_name: &str,
    targets: usize,
    node_label: &str,
    file: &str,
) -> Result<Vec<f32>, CookError> {
    let (weights, whose) = match (node.weights(), mesh.weights()) {
        (Some(w), _) => (w, format!("{node_label} weights")),
        (None, Some(w)) => (w, format!("mesh {mesh_name} weights")),
        (None, None) => return Ok(vec![0.0; targets]),
    };
    if weights.len() != targets {
        return Err(CookError::MorphTarget {
            file: file.to_string(),
            place: whose,
            reason: format!(
                "holds {} weights for {targets} morph targets (glTF requires one per target)",
                weights.len()
            ),
        });
    }
    if let Some(i) = weights.iter().position(|w| !w.is_finite()) {
        return Err(CookError::NonFinite {
            file: file.to_string(),
            place: format!("{whose} [{i}]"),
        });
    }
    Ok(weights.to_vec())
}

/// Throng cooks no tangents, so TANGENT deltas of targets are not read: say so once per mesh.
fn tangent_warning(mesh: &gltf::Mesh, mesh_name: &str, warnings: &mut Vec<String>) {
    let with = mesh
        .primitives()
        .flat_map(|p| p.morph_targets().collect::<Vec<_>>())
        .filter(|t| t.tangents().is_some())
        .count();
    if with > 0 {
        warnings.push(format!(
            "mesh {mesh_name}: TANGENT deltas of {with} morph targets ignored (Throng cooks no \
             tangents; POSITION and NORMAL deltas are kept)"
        ));
    }
}

/// One triangle primitive: geometry and morph targets, and with `palette` (the skin's joint
/// count) its `JOINTS_0` / `WEIGHTS_0`; without, the skin fields stay empty.
fn read_primitive(
    prim: &Primitive,
    name: &str,
    palette: Option<usize>,
    buffers: &Buffers,
    warnings: &mut Vec<String>,
) -> Result<SkinnedMesh, CookError> {
    let file = buffers.file;
    let missing = |attribute| CookError::MissingAttribute {
        file: file.to_string(),
        mesh: name.to_string(),
        attribute,
    };
    let attr =
        |semantic: Semantic, label: &'static str| prim.get(&semantic).ok_or_else(|| missing(label));

    let positions = vec3s(buffers.floats(
        &attr(Semantic::Positions, "POSITION")?,
        Dimensions::Vec3,
        &[DataType::F32],
    )?);
    let n = positions.len();
    if let Some(v) = positions.iter().position(|p| !p.is_finite()) {
        return Err(CookError::NonFinite {
            file: file.to_string(),
            place: format!("mesh {name} POSITION of vertex {v}"),
        });
    }
    let count = |attribute, actual| {
        if actual == n {
            Ok(())
        } else {
            Err(CookError::AttributeCount {
                file: file.to_string(),
                mesh: name.to_string(),
                attribute,
                expected: n,
                actual,
            })
        }
    };

    let normals = match prim.get(&Semantic::Normals) {
        Some(acc) => {
            let raw = vec3s(buffers.floats(&acc, Dimensions::Vec3, &[DataType::F32])?);
            count("NORMAL", raw.len())?;
            let mut degenerate = 0;
            let mut out = Vec::with_capacity(n);
            for (v, nrm) in raw.iter().enumerate() {
                if !nrm.is_finite() {
                    return Err(CookError::NonFinite {
                        file: file.to_string(),
                        place: format!("mesh {name} NORMAL of vertex {v}"),
                    });
                }
                let unit = nrm.normalize_or_zero();
                degenerate += usize::from(unit == Vec3::ZERO);
                out.push(unit);
            }
            if degenerate > 0 {
                warnings.push(format!(
                    "mesh {name}: {degenerate} zero-length normals kept as zero"
                ));
            }
            out
        }
        None => Vec::new(),
    };

    let (joints, weights) = match palette {
        Some(palette) => read_influences(prim, name, n, palette, buffers, warnings)?,
        None => (Vec::new(), Vec::new()),
    };
    let indices = read_indices(prim, name, n, buffers)?;
    let targets = read_targets(prim, name, n, buffers)?;
    Ok(SkinnedMesh {
        name: name.to_string(),
        skin: 0,
        positions,
        normals,
        joints,
        weights,
        indices,
        lods: Vec::new(),
        targets,
    })
}

/// `JOINTS_0` / `WEIGHTS_0` of `n` vertices, weights normalised to sum 1.
#[allow(clippy::type_complexity)]
fn read_influences(
    prim: &Primitive,
    name: &str,
    n: usize,
    palette: usize,
    buffers: &Buffers,
    warnings: &mut Vec<String>,
) -> Result<(Vec<[u16; 4]>, Vec<[f32; 4]>), CookError> {
    let file = buffers.file;
    let missing = |attribute| CookError::MissingAttribute {
        file: file.to_string(),
        mesh: name.to_string(),
        attribute,
    };
    let attr =
        |semantic: Semantic, label: &'static str| prim.get(&semantic).ok_or_else(|| missing(label));
    let count = |attribute, actual| {
        if actual == n {
            Ok(())
        } else {
            Err(CookError::AttributeCount {
                file: file.to_string(),
                mesh: name.to_string(),
                attribute,
                expected: n,
                actual,
            })
        }
    };
    let joints_raw = buffers.uints(
        &attr(Semantic::Joints(0), "JOINTS_0")?,
        Dimensions::Vec4,
        &[DataType::U8, DataType::U16],
    )?;
    count("JOINTS_0", joints_raw.len() / 4)?;
    let weights_raw = buffers.floats(
        &attr(Semantic::Weights(0), "WEIGHTS_0")?,
        Dimensions::Vec4,
        &[DataType::F32, DataType::U8, DataType::U16],
    )?;
    count("WEIGHTS_0", weights_raw.len() / 4)?;
    extra_influence_sets(prim, name, buffers, warnings)?;

    let mut joints = Vec::with_capacity(n);
    let mut weights = Vec::with_capacity(n);
    let mut renormalised = 0;
    for (v, (js, ws)) in joints_raw
        .chunks_exact(4)
        .zip(weights_raw.chunks_exact(4))
        .enumerate()
    {
        let mut j = [0u16; 4];
        for (dst, &index) in j.iter_mut().zip(js) {
            if index as usize >= palette {
                return Err(CookError::JointIndexOutOfRange {
                    file: file.to_string(),
                    mesh: name.to_string(),
                    vertex: v,
                    index,
                    palette,
                });
            }
            *dst = index as u16;
        }
        if ws.iter().any(|w| !(w.is_finite() && *w >= 0.0)) {
            return Err(CookError::BadWeight {
                file: file.to_string(),
                mesh: name.to_string(),
                vertex: v,
            });
        }
        let sum: f32 = ws.iter().sum();
        if sum <= 0.0 {
            return Err(CookError::ZeroWeights {
                file: file.to_string(),
                mesh: name.to_string(),
                vertex: v,
            });
        }
        renormalised += usize::from((sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE);
        joints.push(j);
        weights.push([ws[0] / sum, ws[1] / sum, ws[2] / sum, ws[3] / sum]);
    }
    if renormalised > 0 {
        warnings.push(format!(
            "mesh {name}: weights of {renormalised} of {n} vertices did not sum to 1 (by more than {WEIGHT_SUM_TOLERANCE}); normalised"
        ));
    }
    Ok((joints, weights))
}

/// Triangle-list indices (all vertices in order when the primitive has none), checked.
fn read_indices(
    prim: &Primitive,
    name: &str,
    n: usize,
    buffers: &Buffers,
) -> Result<Vec<u32>, CookError> {
    let file = buffers.file;
    let indices = match prim.indices() {
        Some(acc) => buffers.uints(
            &acc,
            Dimensions::Scalar,
            &[DataType::U8, DataType::U16, DataType::U32],
        )?,
        None => (0..n as u32).collect(),
    };
    let bad = |reason: String| CookError::BadIndices {
        file: file.to_string(),
        mesh: name.to_string(),
        reason,
    };
    if indices.len() % 3 != 0 {
        return Err(bad(format!(
            "{} indices do not make whole triangles",
            indices.len()
        )));
    }
    if let Some(i) = indices.iter().find(|&&i| i as usize >= n) {
        return Err(bad(format!("index {i} is out of range for {n} vertices")));
    }
    Ok(indices)
}

/// The primitive's morph targets (glTF 2.0 §3.7.2.2), sparse: per target the vertices whose
/// POSITION or NORMAL delta is not zero. Each target accessor must have the primitive's vertex
/// count; TANGENT deltas are not read ([`tangent_warning`]).
fn read_targets(
    prim: &Primitive,
    name: &str,
    n: usize,
    buffers: &Buffers,
) -> Result<Vec<MorphTarget>, CookError> {
    let file = buffers.file;
    let mut out = Vec::new();
    for (t, target) in prim.morph_targets().enumerate() {
        let read = |accessor: Option<gltf::Accessor>, what: &str| -> Result<Vec<Vec3>, CookError> {
            let Some(accessor) = accessor else {
                return Ok(Vec::new());
            };
            let v = vec3s(buffers.floats(
                &accessor,
                Dimensions::Vec3,
                &[DataType::F32, DataType::I8, DataType::I16],
            )?);
            if v.len() != n {
                return Err(CookError::MorphTarget {
                    file: file.to_string(),
                    place: format!(
                        "mesh {name} target {t} {what} (accessor {})",
                        accessor.index()
                    ),
                    reason: format!(
                        "has {} elements, but the primitive has {n} vertices",
                        v.len()
                    ),
                });
            }
            if let Some(i) = v.iter().position(|d| !d.is_finite()) {
                return Err(CookError::NonFinite {
                    file: file.to_string(),
                    place: format!("mesh {name} target {t} {what} of vertex {i}"),
                });
            }
            Ok(v)
        };
        let positions = read(target.positions(), "POSITION")?;
        let normals = read(target.normals(), "NORMAL")?;
        let mut sparse = MorphTarget::default();
        for v in 0..n {
            let dp = positions.get(v).copied().unwrap_or(Vec3::ZERO);
            let dn = normals.get(v).copied().unwrap_or(Vec3::ZERO);
            if dp == Vec3::ZERO && dn == Vec3::ZERO {
                continue;
            }
            sparse.vertices.push(v as u32);
            sparse.positions.push(dp);
            if !normals.is_empty() {
                sparse.normals.push(dn);
            }
        }
        out.push(sparse);
    }
    Ok(out)
}

/// `JOINTS_n` / `WEIGHTS_n` for n ≥ 1: an error when they carry weight, else a warning that they
/// are ignored (Throng skins with 4 influences).
fn extra_influence_sets(
    prim: &Primitive,
    name: &str,
    buffers: &Buffers,
    warnings: &mut Vec<String>,
) -> Result<(), CookError> {
    let mut ignored = Vec::new();
    for (semantic, accessor) in prim.attributes() {
        match semantic {
            Semantic::Weights(set) if set > 0 => {
                let w = buffers.floats(
                    &accessor,
                    Dimensions::Vec4,
                    &[DataType::F32, DataType::U8, DataType::U16],
                )?;
                if let Some(i) = w.iter().position(|&x| x != 0.0) {
                    return Err(CookError::TooManyInfluences {
                        file: buffers.file.to_string(),
                        mesh: name.to_string(),
                        vertex: i / 4,
                    });
                }
                ignored.push(format!("WEIGHTS_{set}"));
            }
            Semantic::Joints(set) if set > 0 => ignored.push(format!("JOINTS_{set}")),
            _ => {}
        }
    }
    if !ignored.is_empty() {
        ignored.sort();
        warnings.push(format!(
            "mesh {name}: {} ignored (all their weights are zero; only JOINTS_0/WEIGHTS_0 are read)",
            ignored.join(", ")
        ));
    }
    Ok(())
}

fn vec3s(floats: Vec<f32>) -> Vec<Vec3> {
    floats.chunks_exact(3).map(Vec3::from_slice).collect()
}
