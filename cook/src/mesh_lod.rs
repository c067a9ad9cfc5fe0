//! Mesh LODs, cooked: per skinned mesh, one simplified triangle list for each skeleton LOD level
//! of its skin's skeleton, drawn with that level (throng-cpu-ref `MeshLod`).
//!
//! Level `k` simplifies level `k − 1`'s triangles with meshoptimizer's attribute-aware edge
//! collapse (Arseny Kapoulkine, meshoptimizer, `meshopt_simplifyWithAttributes`,
//! https://github.com/zeux/meshoptimizer), in bind space, until the next collapse would move the
//! surface further than the skeleton level's own measured error, or the level keeps
//! [`MESH_LOD_FLOORS`] of the full mesh's triangles. The two attributes it weighs beside
//! position keep what skinning needs:
//! - the normal, so shading does not crease;
//! - a *skin signature*: the weighted mean of the rest positions (in bind space) of the joints
//!   the vertex follows at that level (a dropped joint replaced by its nearest retained ancestor), so an
//!   edge between vertices that follow different joints collapses only where the signatures
//!   agree, and a limb never fuses with the body it bends against.
//!
//! Morph targets are kept at every level: a level's triangles index the full mesh's vertices,
//! whose sparse deltas ([`throng_cpu_ref::morph`]) apply unchanged, and every vertex a target
//! moves is locked in the simplifier, so no morphed vertex is collapsed away. The simplification
//! error is measured at rest (all weights zero).

use glam::{Affine3A, Vec3};
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::lod::MAX_LOD_LEVELS;
use throng_cpu_ref::{MeshLod, Package, SkeletonLod, SkinnedMesh, NO_PARENT};

/// Per reduced level, the fewest triangles it keeps, as a fraction of the full mesh's.
pub const MESH_LOD_FLOORS: [f32; MAX_LOD_LEVELS] = [0.25, 0.05];

/// Weight of a unit normal's difference against a bind-space distance.
const NORMAL_WEIGHT: f32 = 0.05;
/// Weight of the skin signature's difference against a bind-space distance.
const SKIN_WEIGHT: f32 = 1.0;

/// Builds the mesh LODs of every mesh bound to a skin of skeleton `s`, one per level of `lods`
/// (replacing any the meshes had; none for a mesh no level reduces), each within the level's
/// error `errors[k]` (scene units).
/// Returns, per level, the triangles of those meshes and the largest simplification error
/// (scene units).
pub fn build_mesh_lods(
    package: &mut Package,
    s: u32,
    lods: &[SkeletonLod],
    errors: &[f32],
) -> Vec<(usize, f32)> {
    let skeleton = &package.skeletons[s as usize];
    let scale = scene_scale(&skeleton.root_transform);
    let mut rest = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    local_to_component(skeleton, &skeleton.rest, &mut rest);
    let mut levels = vec![(0usize, 0f32); lods.len()];
    for m in 0..package.meshes.len() {
        let Some(skin) = package.skins.get(package.meshes[m].skin as usize) else {
            continue;
        };
        if skin.skeleton != s {
            continue;
        }
        let mesh = &package.meshes[m];
        let full = mesh.indices.len();
        let mut built = Vec::with_capacity(lods.len());
        for (k, lod) in lods.iter().enumerate() {
            // Per palette entry, where the joint it follows at this level stands at rest, in
            // the entry's bind space (so its scale is the vertices').
            let anchor: Vec<Vec3> = (skin.joints.iter().zip(&skin.inverse_bind))
                .map(|(&j, ibm)| {
                    let to_bind = (rest[j as usize] * *ibm).inverse();
                    let at = rest[retained_ancestor(skeleton, lod, j) as usize].translation;
                    to_bind.transform_point3(at.into())
                })
                .collect();
            let source = built.last().map_or(&mesh.indices, |l: &MeshLod| &l.indices);
            let floor = ((full / 3) as f32 * MESH_LOD_FLOORS[k]).ceil() as usize * 3;
            let target = errors[k] / scale;
            let (indices, error) = match simplify(mesh, source, &anchor, floor, target) {
                (indices, error) if (error * scale).is_finite() => (indices, error * scale),
                // A NaN or infinite error (degenerate bind matrices make the skin signature
                // non-finite; a fuzzer found one: fuzz/regressions/gltf_import/mesh-lod-nan) is
                // no measured reduction: the level keeps the level before.
                _ => (source.to_vec(), 0.0),
            };
            levels[k].0 += indices.len() / 3;
            levels[k].1 = levels[k].1.max(error);
            built.push(MeshLod { indices, error });
        }
        // A mesh no level reduces keeps none: it draws its full list at every level, and the
        // runtime then shares level 0's vertices instead of copying them per level.
        if built.iter().all(|l| l.indices == package.meshes[m].indices) {
            built.clear();
        }
        package.meshes[m].lods = built;
    }
    levels
}

/// `source` simplified towards `floor` indices within `target_error` (bind space); returns the
/// indices and the error reached (bind space).
fn simplify(
    mesh: &SkinnedMesh,
    source: &[u32],
    anchor: &[Vec3],
    floor: usize,
    target_error: f32,
) -> (Vec<u32>, f32) {
    if source.is_empty() || !(target_error.is_finite() && target_error > 0.0) {
        return (source.to_vec(), 0.0);
    }
    let positions: &[u8] = bytemuck::cast_slice(&mesh.positions);
    let Ok(adapter) = meshopt::VertexDataAdapter::new(positions, 12, 0) else {
        return (source.to_vec(), 0.0);
    };
    let mut attributes = Vec::with_capacity(6 * mesh.positions.len());
    for v in 0..mesh.positions.len() {
        let normal = mesh.normals.get(v).copied().unwrap_or(Vec3::ZERO);
        let signature = (mesh.joints[v].iter().zip(&mesh.weights[v]))
            .filter_map(|(&e, &w)| anchor.get(e as usize).map(|a| *a * w))
            .sum::<Vec3>();
        attributes.extend(normal.to_array());
        attributes.extend(signature.to_array());
    }
    let weights = [
        NORMAL_WEIGHT,
        NORMAL_WEIGHT,
        NORMAL_WEIGHT,
        SKIN_WEIGHT,
        SKIN_WEIGHT,
        SKIN_WEIGHT,
    ];
    // Every vertex a morph target moves is locked: the simplifier never collapses it away, so
    // each level keeps the morphed shapes (its indices address the same vertices, and so the same
    // sparse deltas). Other vertices may still collapse onto locked ones.
    let mut locks = vec![false; mesh.positions.len()];
    for &v in mesh.targets.iter().flat_map(|t| &t.vertices) {
        if let Some(lock) = locks.get_mut(v as usize) {
            *lock = true;
        }
    }
    let run = |indices: &[u32]| {
        let mut error = 0f32;
        let simplified = meshopt::simplify_with_attributes_and_locks(
            indices,
            &adapter,
            &attributes,
            &weights,
            6 * std::mem::size_of::<f32>(),
            &locks,
            floor,
            target_error,
            meshopt::SimplifyOptions::ErrorAbsolute,
            Some(&mut error),
        );
        (simplified, error)
    };
    let (indices, error) = run(source);
    if indices.len() * 10 <= source.len() * 9 {
        return (indices, error);
    }
    // Hardly any edge collapsed: a faceted mesh (every corner its own vertex) has only seams.
    // Welded by position it simplifies, each corner drawn with the vertex that stands for its
    // position (its normal and weights).
    let welded = run(&meshopt::generate_shadow_indices(source, &adapter));
    if welded.0.len() < indices.len() {
        welded
    } else {
        (indices, error)
    }
}

/// `joint`, or its nearest ancestor `lod` retains.
fn retained_ancestor(skeleton: &throng_cpu_ref::Skeleton, lod: &SkeletonLod, joint: u32) -> u32 {
    let mut j = joint;
    while j != NO_PARENT && !lod.retains(j as usize) {
        j = skeleton.parents[j as usize];
    }
    if j == NO_PARENT {
        joint
    } else {
        j
    }
}

/// Largest length a unit vector takes under `m`'s linear part: bind-space lengths to scene units.
fn scene_scale(m: &Affine3A) -> f32 {
    let columns = [m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis].map(|c| c.length());
    let scale = columns.into_iter().fold(0f32, f32::max);
    if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        1.0
    }
}
