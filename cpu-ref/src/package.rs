//! A loaded package: everything one asset generation holds, as owned flat arrays.
//! `throng-cook` writes and reads the binary form (docs/package-format.md).

use crate::impostor::Impostor;
use crate::morph::Scene;
use crate::{Assets, Clip, Mask, Skeleton, SkinBinding, SkinnedMesh};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Package {
    pub skeletons: Vec<Skeleton>,
    pub skins: Vec<SkinBinding>,
    pub meshes: Vec<SkinnedMesh>,
    pub clips: Vec<Clip>,
    /// Joint masks of `Override` and `Additive` ops, each naming its skeleton; programs index
    /// them like clips (package-wide).
    pub masks: Vec<Mask>,
    /// Baked far-tier impostors, at most one per skin, ascending by skin
    /// ([`crate::impostor`]).
    pub impostors: Vec<Impostor>,
    /// Motion-matching databases, at most one per skeleton, ascending by skeleton
    /// ([`crate::motion_db`]).
    pub motion_databases: Vec<crate::motion_db::MotionDatabase>,
    /// Mesh nodes (skinned or not) with their default morph weights, the primitives of unskinned
    /// mesh nodes, and the clips' morph-weight tracks ([`crate::morph`]).
    pub scene: Scene,
    /// Scalar curves: channels per skeleton, the clips' tracks of them, curve selections
    /// ([`crate::scalar`]).
    pub curves: crate::scalar::Curves,
}

impl Package {
    /// What programs of skeleton `skeleton` run against; `None` when it is not in the package.
    pub fn assets(&self, skeleton: u32) -> Option<Assets<'_>> {
        Some(Assets {
            skeleton: self.skeletons.get(skeleton as usize)?,
            skeleton_index: skeleton,
            clips: &self.clips,
            skins: &self.skins,
            masks: &self.masks,
            curves: &self.curves,
        })
    }

    /// Index of the first mask with this name.
    pub fn find_mask(&self, name: &str) -> Option<usize> {
        self.masks.iter().position(|m| m.name == name)
    }

    /// The impostor baked for skin `skin`, if any.
    pub fn impostor(&self, skin: u32) -> Option<&Impostor> {
        self.impostors.iter().find(|i| i.skin == skin)
    }

    /// Index of the first clip with this name.
    pub fn find_clip(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name == name)
    }
}
