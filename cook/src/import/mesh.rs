//! Skinned triangle primitives: positions and normals in bind space, `JOINTS_0` / `WEIGHTS_0`
//! with weights normalised to sum 1, triangle-list indices.

use std::collections::HashSet;

use glam::Vec3;
use gltf::accessor::{DataType, Dimensions};
use gltf::mesh::{Mode, Semantic};
use gltf::{Document, Primitive};
use throng_cpu_ref::{SkinBinding, SkinnedMesh};

use super::accessor::Buffers;
use super::hierarchy::node_label;
use super::CookError;

/// A vertex whose weights sum differs from 1 by more than this is counted in the report.
const WEIGHT_SUM_TOLERANCE: f32 = 1e-3;

/// Every primitive of every (mesh, skin) pair that some node instantiates, in node order.
pub(super) fn read(
    doc: &Document,
    skins: &[SkinBinding],
    buffers: &Buffers,
    warnings: &mut Vec<String>,
) -> Result<Vec<SkinnedMesh>, CookError> {
    let mut done = HashSet::new();
    let mut meshes = Vec::new();
    for node in doc.nodes() {
        let Some(mesh) = node.mesh() else { continue };
        let mesh_name = mesh
            .name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("mesh{}", mesh.index()));
        let Some(skin) = node.skin() else {
            warnings.push(format!(
                "{}: mesh '{mesh_name}' has no skin; static meshes are not cooked",
                node_label(doc, node.index())
            ));
            continue;
        };
        if !done.insert((mesh.index(), skin.index())) {
            continue;
        }
        let palette = skins.get(skin.index()).map_or(0, |s| s.joints.len());
        for prim in mesh.primitives() {
            let name = format!("{mesh_name}/{}", prim.index());
            if prim.mode() != Mode::Triangles {
                warnings.push(format!(
                    "mesh {name}: {:?} primitive skipped (only triangle lists are cooked)",
                    prim.mode()
                ));
                continue;
            }
            let mut m = read_primitive(&prim, &name, palette, buffers, warnings)?;
            m.skin = skin.index() as u32;
            meshes.push(m);
        }
    }
    Ok(meshes)
}

fn read_primitive(
    prim: &Primitive,
    name: &str,
    palette: usize,
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
    Ok(SkinnedMesh {
        name: name.to_string(),
        skin: 0,
        positions,
        normals,
        joints,
        weights,
        indices,
        lods: Vec::new(),
    })
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
