//! What is benchmarked: one skeleton of a cooked package, its first skin, its clips and one mask.

use std::path::Path;

use throng_cpu_ref::{Mask, Package, SkinnedMesh};
use throng_fixtures::{BenchShape, ProgramSet};

use crate::BenchError;

/// One skeleton of a package with everything a benchmark program names.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The generated character's name, or the asset's file name.
    pub name: String,
    pub package: Package,
    pub skeleton: u32,
    /// The first skin binding this skeleton; `None` measures poses only.
    pub skin: Option<u32>,
    /// Clips cooked for `skeleton`, in package order (at least one).
    pub clips: Vec<u32>,
    /// The package mask of the override layer: the subtree of about a quarter of the joints,
    /// added to the package by [`Subject::new`].
    pub mask: u32,
}

impl Subject {
    /// The built-in generated character (throng-fixtures), imported and cooked with the
    /// default profile.
    pub fn character() -> Result<Subject, BenchError> {
        let name = "character";
        let imported = throng_cook::import_slice(&throng_fixtures::character_glb(), name)?;
        let (package, _) = throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)?;
        Subject::new(name, package)
    }

    /// A glTF file cooked with the default profile, or a cooked `.throng` package.
    pub fn from_file(path: &Path) -> Result<Subject, BenchError> {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let package = if path.extension().is_some_and(|e| e == "throng") {
            let bytes = std::fs::read(path).map_err(|source| BenchError::Io {
                path: path.to_owned(),
                source,
            })?;
            throng_cook::read_package(&bytes).map_err(|source| BenchError::Package {
                path: path.to_owned(),
                source,
            })?
        } else {
            throng_cook::cook_file(path, &throng_cook::Profile::DEFAULT)?.0
        };
        Subject::new(&name, package)
    }

    /// The package's first skeleton that has clips (preferring one bound by a skin).
    pub fn new(name: &str, mut package: Package) -> Result<Subject, BenchError> {
        let clips_of = |s: u32| -> Vec<u32> {
            (0..package.clips.len() as u32)
                .filter(|&c| package.clips[c as usize].skeleton == s)
                .collect()
        };
        let skinned = package.skins.iter().map(|k| k.skeleton);
        let any = 0..package.skeletons.len() as u32;
        let skeleton = skinned
            .chain(any)
            .find(|&s| !clips_of(s).is_empty())
            .ok_or_else(|| BenchError::Unusable {
                subject: name.into(),
                why: "no skeleton has a clip".into(),
            })?;
        let skin = package
            .skins
            .iter()
            .position(|k| k.skeleton == skeleton)
            .map(|k| k as u32);
        let rig = package
            .skeletons
            .get(skeleton as usize)
            .ok_or_else(|| BenchError::Unusable {
                subject: name.into(),
                why: format!("skeleton {skeleton} is missing"),
            })?;
        let mask = quarter_mask(skeleton, rig);
        let clips = clips_of(skeleton);
        package.masks.push(mask);
        Ok(Subject {
            name: name.into(),
            mask: package.masks.len() as u32 - 1,
            package,
            skeleton,
            skin,
            clips,
        })
    }

    /// Joints of the skeleton.
    pub fn joints(&self) -> usize {
        self.package
            .skeletons
            .get(self.skeleton as usize)
            .map_or(0, |s| s.joint_count())
    }

    /// Vertices of the meshes bound to the skin (0 without a skin).
    pub fn vertices(&self) -> usize {
        self.meshes().map(|m| m.positions.len()).sum()
    }

    /// Palette entries of the skin (0 without a skin).
    pub fn palette_len(&self) -> usize {
        self.skin
            .and_then(|k| self.package.skins.get(k as usize))
            .map_or(0, |k| k.joints.len())
    }

    /// Meshes bound to the skin.
    pub fn meshes(&self) -> impl Iterator<Item = &SkinnedMesh> {
        self.package
            .meshes
            .iter()
            .filter(move |m| Some(m.skin) == self.skin)
    }
}

/// The subtree whose size is closest to a quarter of the joints (an arm on a humanoid).
fn quarter_mask(index: u32, skeleton: &throng_cpu_ref::Skeleton) -> Mask {
    let n = skeleton.joint_count();
    let target = n.div_ceil(4);
    let joint = (0..n)
        .min_by_key(|&j| {
            let end = skeleton.subtree_end.get(j).map_or(j, |&e| e as usize);
            end.saturating_sub(j).abs_diff(target)
        })
        .unwrap_or(0);
    Mask::subtree("quarter", index, skeleton, joint, 1.0)
        .unwrap_or_else(|| Mask::uniform("quarter", index, skeleton, 1.0))
}

impl Subject {
    /// Programs of `n` instances of `shape` over this subject's clips and mask.
    pub fn programs(&self, shape: BenchShape, n: usize) -> ProgramSet {
        ProgramSet::new(&self.package, &self.clips, self.mask, shape, n)
    }
}
