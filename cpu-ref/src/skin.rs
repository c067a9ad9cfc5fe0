//! Skin bindings and skinned meshes.

use glam::{Affine3A, Vec3};

use crate::morph::MorphTarget;

/// Binds a palette to a skeleton. Palette entry `k` is glTF skin joint `k`:
/// `palette[k] = component[joints[k]] * inverse_bind[k]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SkinBinding {
    /// Debug name (the glTF skin's name, or `skin{index}`).
    pub name: String,
    /// Index of the skeleton in the package.
    pub skeleton: u32,
    /// Skeleton joint of each palette entry.
    pub joints: Vec<u32>,
    /// Inverse bind matrix of each palette entry (glTF `inverseBindMatrices`, identity when
    /// absent), unchanged from the source. Skinned vertices come out in the skeleton's component
    /// space; `skeleton.root_transform * skinned` is glTF scene space (glTF 2.0 §3.7.3.2).
    pub inverse_bind: Vec<Affine3A>,
}

/// One skinned triangle primitive. Positions and normals are in bind space; joint indices are
/// palette indices of `skin`; each vertex's four weights sum to 1 (unused influences weigh 0).
#[derive(Clone, Debug, PartialEq)]
pub struct SkinnedMesh {
    /// Debug name: `mesh_name/primitive_index`.
    pub name: String,
    /// Index of the skin binding in the package.
    pub skin: u32,
    pub positions: Vec<Vec3>,
    /// Unit normals; empty when the source has none.
    pub normals: Vec<Vec3>,
    pub joints: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
    /// Triangle list indices into the vertex arrays.
    pub indices: Vec<u32>,
    /// Simplified triangle lists for skeleton LOD levels 1, 2, … of the skin's skeleton (at
    /// most as many as it has levels); a level past the last uses the last, and a mesh without
    /// levels draws `indices` at every level ([`SkinnedMesh::level_indices`]).
    pub lods: Vec<MeshLod>,
    /// Morph targets, in glTF order, applied before skinning ([`crate::morph`]). The LOD
    /// triangle lists index the same vertices, so every level keeps them.
    pub targets: Vec<MorphTarget>,
}

/// One simplified triangle list of a mesh, drawn with one skeleton LOD level.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshLod {
    /// Triangle list indices into the mesh's vertex arrays (a subset of them).
    pub indices: Vec<u32>,
    /// Largest distance of the simplified surface from the full one at rest (the simplifier's
    /// measure, meshoptimizer's result error, taken to scene units by the skeleton's root
    /// transform), plus `shell`.
    pub error: f32,
    /// How far the level's surface is pushed out along its skinned normals when drawn (scene
    /// units at the skeleton's own scale; 0: not at all), so that its silhouette covers what full
    /// detail's does: edge collapse thins what is thin (throng-cook `mesh_lod`). Skinning does
    /// not apply it (skinned vertices are the same at every level); the raster pass does.
    pub shell: f32,
}

impl SkinnedMesh {
    /// The triangle list drawn at skeleton LOD `level` (0: `indices`).
    pub fn level_indices(&self, level: usize) -> &[u32] {
        match level.checked_sub(1) {
            Some(l) => self
                .lods
                .get(l)
                .or(self.lods.last())
                .map_or(&self.indices, |lod| &lod.indices),
            None => &self.indices,
        }
    }

    /// The shell of skeleton LOD `level` (0 at level 0 and without levels; a level past the
    /// last takes the last's, as [`SkinnedMesh::level_indices`] does).
    pub fn level_shell(&self, level: usize) -> f32 {
        match level.checked_sub(1) {
            Some(l) => self
                .lods
                .get(l)
                .or(self.lods.last())
                .map_or(0.0, |lod| lod.shell),
            None => 0.0,
        }
    }

    /// Length of the diagonal of the positions' bounding box (0 when empty).
    pub fn bounds_diagonal(&self) -> f32 {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for p in &self.positions {
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        if self.positions.is_empty() {
            0.0
        } else {
            (hi - lo).length()
        }
    }
}
