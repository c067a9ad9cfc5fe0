//! A loaded package: everything one asset generation holds, as owned flat arrays.
//! `throng-cook` writes and reads the binary form (docs/package-format.md).

use crate::{Clip, Skeleton, SkinBinding, SkinnedMesh};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Package {
    pub skeletons: Vec<Skeleton>,
    pub skins: Vec<SkinBinding>,
    pub meshes: Vec<SkinnedMesh>,
    pub clips: Vec<Clip>,
}

impl Package {
    /// Index of the first clip with this name.
    pub fn find_clip(&self, name: &str) -> Option<usize> {
        self.clips.iter().position(|c| c.name == name)
    }
}
