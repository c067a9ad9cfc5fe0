//! glTF 2.0 import (`.gltf` with embedded or external buffers, and `.glb`): skeletons, skin
//! bindings, skinned meshes and source curves, validated. Images are never decoded.
//!
//! # Skeleton construction
//!
//! For each skin, the skeleton's node set S is the skin's joints plus every node on the parent
//! path from each joint up to T, the lowest common ancestor of all the skin's joints. T may be a
//! joint or a non-joint node (an "Armature"); non-joint nodes between joints are kept as joints
//! with no palette entry, so composing local transforms down the skeleton is exactly glTF's node
//! composition. The root joint is T; `root_transform` is the product of the local matrices of
//! T's ancestors (identity when T is a scene root); those ancestors may be any affine matrix,
//! shear included. When the joints have no common ancestor (several scene roots) a synthetic
//! identity root joint named `__root` (source node `u32::MAX`) parents the scene roots, which are
//! visited in node-index order, and `root_transform` is identity.
//!
//! S is ordered depth-first from T, children in glTF child order, parent before child. A skin's
//! palette maps its glTF joint list to skeleton joints (`SkinBinding::joints`); vertex `JOINTS_0`
//! stay palette indices. Skins with identical node sets share one skeleton. glTF's optional
//! `skin.skeleton` hint is not needed and is ignored.
//!
//! Rest local transforms come from the nodes: TRS as stored (rotation normalised), or a `matrix`
//! decomposed to TRS, which must rebuild the matrix (no shear). Joint names are node names, or
//! `node{index}` for unnamed nodes. Inverse bind matrices come from the skin's accessor, identity
//! when absent; they must be finite and affine.
//!
//! # Validation
//!
//! Errors ([`CookError`]) name the file and the node, accessor, animation channel, key, mesh or
//! vertex: non-finite values; zero, negative or near-singular scales (rest or keys); sheared joint
//! matrices; a node with two parents or a cycle; joint indices outside the skin; negative or
//! all-zero weights; non-zero `WEIGHTS_1` (more than 4 influences); missing `POSITION` /
//! `JOINTS_0` / `WEIGHTS_0` on a skinned primitive; key times that are negative or not strictly
//! increasing; output counts that do not match the keys; channels on nodes that are in no
//! skeleton or that carry a `matrix`; morph targets whose count differs between the primitives
//! of a mesh or whose accessors do not have the primitive's vertex count, default weights that
//! are not one per target (`CookError::MorphTarget`); a file with neither a skin nor a morph
//! target. Warnings (for the cook report): skipped morph-weight channels (on a node without
//! targets), ignored TANGENT target deltas, non-triangle primitives, static meshes under a
//! skeleton joint, ignored all-zero `JOINTS_1`/`WEIGHTS_1`, and how many vertices needed their
//! weights normalised.
//!
//! # Meshes and clips
//!
//! Each triangle primitive of a mesh node that has a skin becomes one [`SkinnedMesh`] named
//! `mesh_name/primitive_index`, positions in bind space as stored: the skinned mesh node's own
//! transform is ignored (glTF 2.0 §3.7.3.2). A skin with no mesh (some mocap files) still gives a
//! skeleton with clips. Each animation gives one [`SourceClip`] per skeleton it touches, named
//! after the animation (or `animation{index}`), and one [`SourceWeightClip`] of the same name
//! when it has `weights` channels; its duration is the last key time over all the animation's
//! channels (on every skeleton and weights too, so the clips of one animation agree; skipped
//! morph-weight channels do not count). Clip time is absolute: keys may start after 0.
//!
//! Morph targets (docs/morph-targets.md): POSITION and NORMAL deltas of each primitive, stored
//! sparse (`throng_cpu_ref::morph`); default weights from the node, else the mesh, else zero.
//! Unskinned mesh nodes that hang under no skeleton joint are kept with their scene-space
//! transform and their primitives as static meshes, so a file without a skin cooks when it has
//! morph targets; each such node, and each skinned node whose mesh has targets, is a
//! `MeshNode` of `Package::scene`.
//! Each clip's events, sync markers and root-motion request come from the animation's glTF
//! `extras` and the file's sidecar TOML ([`meta`], docs/events-and-root-motion.md).
//!
//! [`SkinnedMesh`]: throng_cpu_ref::SkinnedMesh
//! [`SourceClip`]: throng_cpu_ref::SourceClip
//! [`SourceWeightClip`]: throng_cpu_ref::morph::SourceWeightClip

mod accessor;
mod animation;
pub mod bvh;
mod error;
mod hierarchy;
mod mesh;
pub mod meta;
mod rig;

use std::path::Path;

use throng_cpu_ref::morph::SourceWeightClip;
use throng_cpu_ref::{Package, SourceClip};

use accessor::Buffers;
pub use bvh::{import_bvh, BvhOptions};
pub use error::CookError;
pub use meta::{sidecar_path, AuthoredCurve, ClipMeta, Origin, Placed, RootMotionRequest};
pub use rig::SYNTHETIC_ROOT_NAME;

/// What a glTF file holds, before cooking: skeletons, skins and meshes in a package with no clips,
/// the source curves of every animation per skeleton, their metadata, and warnings for the report.
#[derive(Clone, Debug)]
pub struct Imported {
    /// Display name of the source (the file path).
    pub source: String,
    pub package: Package,
    pub source_clips: Vec<SourceClip>,
    /// The morph-weight channels of each animation that has some, exact (glTF) form; the cook
    /// samples them into the package's `scene.clips`.
    pub source_weight_clips: Vec<SourceWeightClip>,
    /// Events, markers and root-motion request of each source clip, in the same order; a clip
    /// past the end of this list (a hand-built import) has none.
    pub clip_meta: Vec<ClipMeta>,
    /// Joints the sidecar's `[lod] pins` keep at every skeleton LOD level (throng-cook `lod`).
    pub lod_pins: Vec<Placed<String>>,
    pub warnings: Vec<String>,
}

/// Imports a `.bvh` file ([`bvh`]): one skeleton and one clip named after the file's stem.
pub fn import_bvh_file(path: &Path, options: BvhOptions) -> Result<Imported, CookError> {
    let source = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CookError::Io {
        file: source.clone(),
        message: e.to_string(),
    })?;
    let name = path
        .file_stem()
        .map_or_else(|| "clip".to_owned(), |s| s.to_string_lossy().into_owned());
    import_bvh(&text, &source, &name, options)
}

/// Imports a `.gltf` (buffers may be external files next to it) or `.glb` file, with the clip
/// metadata of its sidecar ([`sidecar_path`]) when that file exists.
pub fn import_file(path: &Path) -> Result<Imported, CookError> {
    let source = path.display().to_string();
    let io = |file: String| {
        move |e: std::io::Error| CookError::Io {
            file,
            message: e.to_string(),
        }
    };
    let bytes = std::fs::read(path).map_err(io(source.clone()))?;
    let sidecar_file = sidecar_path(path);
    let sidecar = match std::fs::read_to_string(&sidecar_file) {
        Ok(text) => Some(meta::SidecarText {
            file: sidecar_file.display().to_string(),
            text,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(sidecar_file.display().to_string())(e)),
    };
    import(
        &bytes,
        &source,
        Some(path.parent().unwrap_or(Path::new("."))),
        sidecar.as_ref(),
    )
}

/// Imports glTF or GLB bytes; `source` names them in errors. External buffer files cannot be
/// resolved from a slice: only embedded (`data:`) and GLB buffers are read, and there is no
/// sidecar (metadata comes from the glTF extras alone).
pub fn import_slice(bytes: &[u8], source: &str) -> Result<Imported, CookError> {
    import(bytes, source, None, None)
}

fn import(
    bytes: &[u8],
    file: &str,
    base: Option<&Path>,
    sidecar: Option<&meta::SidecarText>,
) -> Result<Imported, CookError> {
    let parse = |message: String| CookError::Parse {
        file: file.to_string(),
        message,
    };
    check_glb_header(bytes).map_err(|m| parse(m.to_string()))?;
    let gltf =
        gltf::Gltf::from_slice_without_validation(bytes).map_err(|e| parse(e.to_string()))?;
    let root = gltf.document.into_json();
    check_position_indices(&root).map_err(parse)?;
    let doc = &gltf::Document::from_json(root).map_err(|e| parse(e.to_string()))?;
    let data = gltf::import_buffers(doc, base, gltf.blob).map_err(|e| parse(e.to_string()))?;
    // Without a skin only morph targets give something to pose; a file with neither (static
    // props, node animation alone) is refused as before.
    let morphs = doc
        .meshes()
        .any(|m| m.primitives().any(|p| p.morph_targets().len() > 0));
    if doc.skins().len() == 0 && !morphs {
        return Err(CookError::NoSkin {
            file: file.to_string(),
        });
    }
    let buffers = Buffers { file, data: &data };
    let tree = hierarchy::Hierarchy::new(doc, file)?;
    let rig = rig::build(doc, &tree, &buffers)?;
    let mut warnings = Vec::new();
    let meshes = mesh::read(doc, &rig, &tree, &buffers, &mut warnings)?;
    let (clips, source_weight_clips) =
        animation::read(doc, &rig, &meshes.scene, &buffers, &mut warnings)?;
    let (metas, lod_pins) = meta::read(doc, file, sidecar)?;
    let clip_meta = clips
        .iter()
        .map(|(a, _)| metas.get(*a).cloned().unwrap_or_default())
        .collect();
    let source_clips = clips.into_iter().map(|(_, c)| c).collect();
    let package = Package {
        skeletons: rig.skeletons,
        skins: rig.skins,
        meshes: meshes.skinned,
        clips: Vec::new(),
        masks: Vec::new(),
        impostors: Vec::new(),
        motion_databases: Vec::new(),
        scene: meshes.scene,
        curves: Default::default(),
    };
    Ok(Imported {
        source: file.to_string(),
        package,
        source_clips,
        source_weight_clips,
        clip_meta,
        lod_pins,
        warnings,
    })
}

/// `gltf-json`'s validator indexes the accessor named by each `POSITION` attribute without a
/// bounds check (1.4.1): check it first.
fn check_position_indices(root: &gltf::json::Root) -> Result<(), String> {
    use gltf::json::mesh::Semantic;
    use gltf::json::validation::Checked;
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            if let Some(index) = prim.attributes.get(&Checked::Valid(Semantic::Positions)) {
                if index.value() >= root.accessors.len() {
                    return Err(format!(
                        "mesh {m} primitive {p}: POSITION names accessor {}, which does not exist",
                        index.value()
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The checks the `gltf` crate's GLB splitter assumes (its header length is used unchecked).
fn check_glb_header(bytes: &[u8]) -> Result<(), &'static str> {
    if !bytes.starts_with(b"glTF") {
        return Ok(());
    }
    let length = bytes
        .get(8..12)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    match length {
        None => Err("GLB header is truncated"),
        Some(l) if l < 20 => Err("GLB header declares a length shorter than its headers"),
        Some(l) if l > bytes.len() => {
            Err("GLB is shorter than its header declares (truncated file?)")
        }
        Some(_) => Ok(()),
    }
}
