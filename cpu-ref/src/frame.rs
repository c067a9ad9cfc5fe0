//! One frame of a crowd on the CPU, computed as a GPU frame computes it (DESIGN.md §6): the
//! oracle throng-gpu is held to (`parity`), the benchmark's CPU columns and the demo's heroes.
//!
//! A frame is a list of [`Batch`]es, each the instances of one skeleton (and optionally one
//! skin) of one package. Per instance it writes, in batch order:
//! 1. its final local pose (the register its program's `ToComponent` names), when
//!    [`Outputs::locals`] asks for it;
//! 2. its component transforms (`ToComponent`: FK of that pose);
//! 3. with a skin, the batch skin's palette (`component[joint[k]] · inverseBind[k]`); the
//!    program's own `Palette` ops are checked but not run, as on the GPU;
//! 4. with a skin, every vertex of the meshes bound to it (mesh order), skinned in component
//!    space and then moved by the instance's placement: position `P·(M·p)`, normal
//!    `normalize(cof(P)·normalize(cof(M)·n))`;
//! 5. with a skin, its scene-space animated bounds ([`SkinBounds::instance`]), which hold every
//!    vertex of step 4.
//! 6. with a skin and [`Outputs::motion`], every vertex's previous position: skinned with the
//!    slot's last palette and placed with its last placement, or step 4's on a reset
//!    ([`crate::motion`]).
//!
//! A hero ([`Pose::Hero`]) brings its palette, computed on the CPU (so it can run IK); steps 1
//! and 2 leave its entries as they were. A kept instance ([`Pose::Keep`], update-rate LOD)
//! skips steps 1–3: its slot keeps the last frame's pose, and steps 4–5 use its new placement. [`validate`] is the one set of checks both runtimes
//! run before any work; a refused frame leaves the outputs of the last one in place. After the
//! first frame of a given size, frames allocate nothing.

use glam::{Affine3A, Vec3, Vec3A};
use rayon::prelude::*;
use thiserror::Error;

use crate::bounds::{Bounds, SkinBounds};
use crate::inertialize::{History, JointOffset};
use crate::interpreter::Evaluator;
use crate::morph::{morph, TargetWeight};
use crate::motion::MotionResets;
use crate::palette::build_palette;
use crate::program::op;
use crate::retained::Instances;
use crate::skinning::{cofactor, skin_shape};
use crate::{Assets, Package, Program, ProgramError, ProgramLimits, SkinBinding, Trs};

/// Handle of a package added to a runtime (CPU or GPU): its index, in the order added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PackageId(pub usize);

/// The instances of one skeleton of one package, posed and (with `skin`) skinned together.
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    pub package: PackageId,
    pub skeleton: u32,
    /// Skin whose palette is built and whose meshes are skinned; `None` stops after FK.
    pub skin: Option<u32>,
    pub instances: &'a [Instance<'a>],
}

/// One instance of a batch.
#[derive(Clone, Copy, Debug)]
pub struct Instance<'a> {
    pub pose: Pose<'a>,
    /// Component space → scene, applied to skinned vertices after skinning.
    pub placement: Affine3A,
}

/// Where an instance's pose comes from.
#[derive(Clone, Copy, Debug)]
pub enum Pose<'a> {
    /// Evaluated by the runtime. It must contain `ToComponent`.
    Program(&'a Program),
    /// Evaluated by the runtime at skeleton LOD level `lod` (`crate::lod`): the program runs on
    /// the level's retained joints and the dropped ones take the level's pose. Level 0 is every
    /// joint (as [`Pose::Program`]); a level past the skeleton's is refused, and so is a
    /// reduced level for a program that captures or inertializes (history needs every joint).
    Lod(&'a Program, u8),
    /// A hero: its palette for the batch's skin, computed by the caller.
    Hero(&'a [Affine3A]),
    /// Update-rate LOD: the slot keeps the pose the last frame gave it (its components,
    /// palette and local pose), not evaluated again; skinning and bounds use this frame's
    /// placement. Valid only when the last frame had the same batch ([`BatchLayout`]) at this
    /// index. Nothing of its program runs: an instance whose program captures inertialization
    /// history this frame must be evaluated, or a later `Inertialize` reads an old capture.
    Keep,
    /// Drawn by another tier (an impostor: `crate::impostor`) or not at all: the slot is not
    /// evaluated, bounded, skinned nor drawn; its skinned vertices (and previous positions) read
    /// NaN and its bounds are empty, and it keeps its last pose as a kept slot does. Valid in
    /// any batch; the next frame that shows it resets its motion vectors.
    Hidden,
}

/// The level a hidden slot ([`Pose::Hidden`]) has in the per-slot level table (the GPU's
/// `lods` byte, and [`crate::motion`]'s), unlike any skeleton LOD level.
pub const HIDDEN_LEVEL: u8 = u8::MAX;

impl<'a> Pose<'a> {
    /// The program the runtime evaluates and its LOD level; `None` for heroes and kept poses.
    pub fn program(&self) -> Option<(&'a Program, u8)> {
        match *self {
            Pose::Program(p) => Some((p, 0)),
            Pose::Lod(p, lod) => Some((p, lod)),
            Pose::Hero(_) | Pose::Keep | Pose::Hidden => None,
        }
    }
}

/// What makes a batch's slots the same from one frame to the next, for [`Pose::Keep`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchLayout {
    pub package: PackageId,
    pub skeleton: u32,
    pub skin: Option<u32>,
    pub instances: usize,
}

impl BatchLayout {
    pub fn of(batch: &Batch) -> BatchLayout {
        BatchLayout {
            package: batch.package,
            skeleton: batch.skeleton,
            skin: batch.skin,
            instances: batch.instances.len(),
        }
    }
}

/// Refuses a [`Pose::Keep`] in a batch the last frame did not have at the same index with the
/// same layout (`last(b)`: the last frame's batch `b`), since its slots would hold another
/// instance's pose, or none.
pub fn check_keeps(
    batches: &[Batch],
    last: impl Fn(usize) -> Option<BatchLayout>,
) -> Result<(), FrameError> {
    for (b, batch) in batches.iter().enumerate() {
        let Some(i) = batch
            .instances
            .iter()
            .position(|x| matches!(x.pose, Pose::Keep))
        else {
            continue;
        };
        let now = BatchLayout::of(batch);
        if last(b) != Some(now) {
            return Err(FrameError::BadInstance {
                batch: b,
                instance: i,
                what: format!(
                    "keeps its last pose, but the last frame had no batch {b} like this one \
                     ({now:?}); evaluate its instances this frame"
                ),
            });
        }
    }
    Ok(())
}

/// Optional outputs of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outputs {
    /// Write each instance's final local pose (parity and tools; the GPU skips it otherwise).
    pub locals: bool,
    /// Write each skinned vertex's previous position (`crate::motion`).
    pub motion: bool,
}

/// A skinned vertex in scene space: position (metres) and unit normal (zero when the mesh has
/// no normals, or the normal skins to zero length).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SkinnedVertex {
    pub position: Vec3,
    pub normal: Vec3,
}

/// Outputs of one batch, instance-major (`i * per_instance + element`).
#[derive(Clone, Debug, Default)]
pub struct BatchOutput {
    pub joints: usize,
    pub palette_len: usize,
    pub vertex_count: usize,
    /// Scalar curve channels of the batch's skeleton (`crate::scalar`).
    pub curve_count: usize,
    /// Final local poses (empty unless [`Outputs::locals`]; undefined for heroes).
    pub locals: Vec<Trs>,
    /// Component transforms (undefined for heroes).
    pub components: Vec<Affine3A>,
    /// Palettes (empty without a skin).
    pub palettes: Vec<Affine3A>,
    /// Skinned vertices after placement (empty without a skin).
    pub skinned: Vec<SkinnedVertex>,
    /// Per instance, scene-space bounds of its skinned vertices (empty without a skin).
    pub bounds: Vec<Bounds>,
    /// Previous scene-space position of each skinned vertex (empty unless [`Outputs::motion`]):
    /// skinned with the slot's last palette and placement, or its current one on a reset.
    pub previous: Vec<Vec3>,
    /// Each instance's curve values (`curve_count` each, channel id order, clamped to their
    /// ranges; undefined for heroes).
    pub curves: Vec<f32>,
}

/// Why a frame was refused. Nothing of it was evaluated.
#[derive(Debug, Error, PartialEq)]
pub enum FrameError {
    #[error("batch {batch}: {what}")]
    BadBatch { batch: usize, what: String },
    #[error("batch {batch}, instance {instance}: {source}")]
    Program {
        batch: usize,
        instance: usize,
        source: ProgramError,
    },
    #[error("batch {batch}, instance {instance}: {what}")]
    BadInstance {
        batch: usize,
        instance: usize,
        what: String,
    },
}

/// What one batch is evaluated against, once checked.
#[derive(Clone, Copy)]
pub struct BatchAssets<'a> {
    pub package: &'a Package,
    pub assets: Assets<'a>,
    /// The batch's skin and its index in the package.
    pub skin: Option<(u32, &'a SkinBinding)>,
    /// Vertices of the meshes bound to `skin`.
    pub vertex_count: usize,
}

impl BatchAssets<'_> {
    pub fn joints(&self) -> usize {
        self.assets.skeleton.joint_count()
    }

    /// Scalar curve channels of the batch's skeleton.
    pub fn curve_count(&self) -> usize {
        self.assets.curves.range(self.assets.skeleton_index).len()
    }

    pub fn palette_len(&self) -> usize {
        self.skin.map_or(0, |(_, s)| s.joints.len())
    }

    /// The meshes bound to the batch's skin with their package index, in package order.
    pub fn meshes_indexed(&self) -> impl Iterator<Item = (usize, &crate::SkinnedMesh)> + '_ {
        let skin = self.skin.map(|(k, _)| k);
        (self.package.meshes.iter().enumerate()).filter(move |(_, m)| Some(m.skin) == skin)
    }

    /// The meshes bound to the batch's skin, in package order (none without a skin).
    pub fn meshes(&self) -> impl Iterator<Item = &crate::SkinnedMesh> + '_ {
        self.meshes_indexed().map(|(_, m)| m)
    }
}

/// The package, skeleton and skin `batch` (number `index` of its frame) names, checked:
/// `package` looks a handle up.
pub fn batch_assets<'a>(
    index: usize,
    batch: &Batch,
    package: impl Fn(PackageId) -> Option<&'a Package>,
) -> Result<BatchAssets<'a>, FrameError> {
    let bad = |what: String| FrameError::BadBatch { batch: index, what };
    let p = package(batch.package)
        .ok_or_else(|| bad(format!("package {} was never added", batch.package.0)))?;
    let assets = p.assets(batch.skeleton).ok_or_else(|| {
        bad(format!(
            "skeleton {} is not in package {} ({} skeletons)",
            batch.skeleton,
            batch.package.0,
            p.skeletons.len()
        ))
    })?;
    let skin = match batch.skin {
        None => None,
        Some(k) => {
            let s = p
                .skins
                .get(k as usize)
                .ok_or_else(|| bad(format!("skin {k} is not in package {}", batch.package.0)))?;
            if s.skeleton != batch.skeleton {
                return Err(bad(format!(
                    "skin {k} binds skeleton {}, not {}",
                    s.skeleton, batch.skeleton
                )));
            }
            Some((k, s))
        }
    };
    let vertex_count = batch.skin.map_or(0, |k| {
        p.meshes
            .iter()
            .filter(|m| m.skin == k)
            .map(|m| m.positions.len())
            .sum()
    });
    Ok(BatchAssets {
        package: p,
        assets,
        skin,
        vertex_count,
    })
}

/// Checks every batch and instance of a frame (DESIGN.md §7b): packages, skeletons and skins
/// exist and belong together; each program validates against `limits` and has a `ToComponent`;
/// each hero palette has one finite entry per skin palette entry; placements are finite. With
/// `parallel` the instances are checked on the current rayon pool (the same first error).
pub fn validate<'a>(
    batches: &[Batch],
    limits: &ProgramLimits,
    package: impl Fn(PackageId) -> Option<&'a Package>,
    claims: &mut SlotClaims,
    parallel: bool,
) -> Result<(), FrameError> {
    claims.clear(limits.history_slots);
    for (b, batch) in batches.iter().enumerate() {
        let checked = batch_assets(b, batch, &package)?;
        let SlotClaims { bits, slots } = claims;
        slots.clear();
        slots.resize(batch.instances.len(), NO_SLOT);
        check_instances(b, batch.instances, limits, &checked, parallel, slots)?;
        for (i, &slot) in slots.iter().enumerate() {
            if slot != NO_SLOT && !claim(bits, slot) {
                return Err(FrameError::BadInstance {
                    batch: b,
                    instance: i,
                    what: format!(
                        "history slot {slot} is already named by another instance of \
                         this frame; give each instance its own slot"
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Inertialization history slots claimed by a frame's instances: each slot belongs to at most
/// one instance per frame, so no two instances race on it. Scratch a runtime keeps.
#[derive(Clone, Debug, Default)]
pub struct SlotClaims {
    bits: Vec<u64>,
    /// The slot each instance of the batch being checked names, or [`NO_SLOT`].
    slots: Vec<u32>,
}

/// No history slot.
const NO_SLOT: u32 = u32::MAX;

impl SlotClaims {
    /// Unclaims every slot of `slots` (allocating only when `slots` grew).
    fn clear(&mut self, slots: usize) {
        self.bits.clear();
        self.bits.resize(slots.div_ceil(64), 0);
    }
}

/// Claims `slot` (a declared one) in `bits`; `false` when it was already claimed.
fn claim(bits: &mut [u64], slot: u32) -> bool {
    let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
    let Some(w) = bits.get_mut(word) else {
        return false;
    };
    let free = *w & bit == 0;
    *w |= bit;
    free
}

/// Instances checked per rayon task: tens of microseconds of work.
const CHECK_CHUNK: usize = 512;

/// [`check_instance`] over a batch's instances, each one's history slot (or [`NO_SLOT`]) into
/// `slots`, with `parallel` in chunks on the current rayon pool; the error reported is that of
/// the first bad instance, whatever the threads.
fn check_instances(
    batch: usize,
    instances: &[Instance],
    limits: &ProgramLimits,
    checked: &BatchAssets,
    parallel: bool,
    slots: &mut [u32],
) -> Result<(), FrameError> {
    let check = |(c, (chunk, slots)): (usize, (&[Instance], &mut [u32]))| {
        for (k, (x, slot)) in chunk.iter().zip(slots).enumerate() {
            check_instance(batch, c * CHECK_CHUNK + k, x, limits, checked)?;
            if let Some((p, _)) = x.pose.program() {
                *slot = p.history_slot().unwrap_or(NO_SLOT);
            }
        }
        Ok(())
    };
    if !parallel {
        return check((0, (instances, slots)));
    }
    instances
        .par_chunks(CHECK_CHUNK)
        .zip(slots.par_chunks_mut(CHECK_CHUNK))
        .enumerate()
        .map(check)
        .find_first(Result::is_err)
        .unwrap_or(Ok(()))
}

fn check_instance(
    batch: usize,
    instance: usize,
    x: &Instance,
    limits: &ProgramLimits,
    checked: &BatchAssets,
) -> Result<(), FrameError> {
    let bad = |what: String| FrameError::BadInstance {
        batch,
        instance,
        what,
    };
    if !is_finite(&x.placement) {
        return Err(bad("placement is not finite".into()));
    }
    if let Some((p, lod)) = x.pose.program() {
        let skeleton = checked.assets.skeleton;
        let levels = skeleton.lods.len();
        if lod as usize > levels {
            return Err(bad(format!(
                "asks for skeleton LOD {lod}, but the skeleton has levels 0 to {levels}"
            )));
        }
        if lod > 0 {
            if p.history_slot().is_some() {
                return Err(bad(format!(
                    "asks for skeleton LOD {lod}, but its program captures or inertializes, \
                     which needs every joint; give it level 0"
                )));
            }
            let level = &skeleton.lods[lod as usize - 1];
            let n = skeleton.joint_count();
            if level.words().len() != n.div_ceil(32) || level.pose().len() != n {
                return Err(bad(format!(
                    "skeleton LOD {lod} was made for a skeleton of another size"
                )));
            }
        }
    }
    match x.pose {
        Pose::Program(p) | Pose::Lod(p, _) => {
            p.validate(limits, &checked.assets)
                .map_err(|source| FrameError::Program {
                    batch,
                    instance,
                    source,
                })?;
            if !p.ops.iter().any(|o| o.code == op::TO_COMPONENT) {
                return Err(bad(
                    "program has no ToComponent, so it names no final pose".into()
                ));
            }
        }
        Pose::Keep | Pose::Hidden => {}
        Pose::Hero(palette) => {
            let Some((_, skin)) = checked.skin else {
                return Err(bad("a hero needs a batch with a skin".into()));
            };
            if palette.len() != skin.joints.len() {
                return Err(bad(format!(
                    "hero palette has {} entries; the batch's skin has {}",
                    palette.len(),
                    skin.joints.len()
                )));
            }
            if !palette.iter().all(is_finite) {
                return Err(bad("hero palette is not finite".into()));
            }
        }
    }
    Ok(())
}

fn is_finite(m: &Affine3A) -> bool {
    m.matrix3.is_finite() && m.translation.is_finite()
}

/// Moves a component-space skinned vertex into the scene by `placement`.
pub fn place(
    placement: &Affine3A,
    cofactor_of_placement: &glam::Mat3A,
    p: Vec3,
    n: Vec3,
) -> SkinnedVertex {
    SkinnedVertex {
        position: placement.transform_point3(p),
        normal: Vec3::from(*cofactor_of_placement * Vec3A::from(n)).normalize_or_zero(),
    }
}

/// Per-thread scratch: an evaluator and skinning buffers.
#[derive(Clone, Debug)]
struct Worker {
    evaluator: Evaluator,
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    morphing: Morphing,
}

/// A worker's scratch for morphed bind shapes: positions, normals and one mesh's target weights.
#[derive(Clone, Debug)]
struct Morphing {
    positions: Vec<Vec3>,
    normals: Vec<Vec3>,
    weights: Vec<f32>,
}

impl Morphing {
    /// `mesh`'s bind-space shape for an instance whose curve values are `curves`: the mesh's
    /// own positions and normals, or, when one of its targets (`targets`: what weighs each)
    /// weighs anything, morphed into this scratch (DESIGN.md §5; `crate::morph`).
    fn shape<'a>(
        &'a mut self,
        mesh: &'a crate::SkinnedMesh,
        targets: &[TargetWeight],
        curves: &[f32],
    ) -> (&'a [Vec3], &'a [Vec3]) {
        self.weights.clear();
        self.weights.extend(targets.iter().map(|t| t.of(curves)));
        let (n, k) = (mesh.positions.len(), mesh.normals.len());
        if self.weights.iter().all(|&w| w == 0.0) || self.positions.len() < n {
            return (&mesh.positions, &mesh.normals);
        }
        let (p, nn) = (&mut self.positions[..n], &mut self.normals[..k]);
        morph(
            &mesh.positions,
            &mesh.normals,
            &mesh.targets,
            &self.weights,
            p,
            nn,
        );
        (&self.positions[..n], &self.normals[..k])
    }
}

/// The CPU frame runtime: packages, per-thread scratch and each batch's outputs.
pub struct CpuRuntime {
    limits: ProgramLimits,
    outputs: Outputs,
    packages: Vec<Package>,
    /// Per package, per skin: its animated bounds.
    skin_bounds: Vec<Vec<SkinBounds>>,
    /// Per package, per mesh: what weighs each of its morph targets.
    morphs: Vec<Vec<Vec<TargetWeight>>>,
    workers: Vec<Worker>,
    /// Largest skeleton, curve channel count and mesh of the packages: what the workers are
    /// sized for.
    joints: usize,
    curves: usize,
    mesh_vertices: usize,
    /// Most morph targets of one mesh.
    mesh_targets: usize,
    batches: Vec<BatchOutput>,
    /// `limits.history_slots` slots of inertialization history.
    history: History,
    claims: SlotClaims,
    /// Per instance of the batch being run, the offsets its `Capture` wrote (committed after).
    captures: Vec<JointOffset>,
    /// The last frame's batches, for [`Pose::Keep`].
    layout: Vec<BatchLayout>,
    /// With [`Outputs::motion`]: who resets, and per batch the last frame's palettes and
    /// placements.
    motion: MotionResets,
    last_palettes: Vec<Vec<Affine3A>>,
    last_placements: Vec<Vec<Affine3A>>,
    /// [`CpuRuntime::present`]'s runs and presented programs, kept between frames.
    runs: Vec<(crate::retained::Kind, u32, u32)>,
    presented: Vec<Program>,
}

/// Per-instance element counts of a batch's outputs.
#[derive(Clone, Copy)]
struct Strides {
    locals: usize,
    joints: usize,
    palette: usize,
    vertices: usize,
    /// 1 with a skin, else 0.
    bounds: usize,
    captures: usize,
    /// Vertices with previous positions: `vertices` with [`Outputs::motion`], else 0.
    previous: usize,
    curves: usize,
}

/// One batch's outputs for a range of its instances.
struct Slices<'a> {
    locals: &'a mut [Trs],
    components: &'a mut [Affine3A],
    palettes: &'a mut [Affine3A],
    skinned: &'a mut [SkinnedVertex],
    bounds: &'a mut [Bounds],
    captures: &'a mut [JointOffset],
    previous: &'a mut [Vec3],
    curves: &'a mut [f32],
}

impl<'a> Slices<'a> {
    /// The first `n` instances' outputs and the rest.
    fn split(self, n: usize, s: Strides) -> (Slices<'a>, Slices<'a>) {
        let (la, lb) = self.locals.split_at_mut(n * s.locals);
        let (ca, cb) = self.components.split_at_mut(n * s.joints);
        let (pa, pb) = self.palettes.split_at_mut(n * s.palette);
        let (sa, sb) = self.skinned.split_at_mut(n * s.vertices);
        let (ba, bb) = self.bounds.split_at_mut(n * s.bounds);
        let (xa, xb) = self.captures.split_at_mut(n * s.captures);
        let (va, vb) = self.previous.split_at_mut(n * s.previous);
        let (ka, kb) = self.curves.split_at_mut(n * s.curves);
        (
            Slices {
                locals: la,
                components: ca,
                palettes: pa,
                skinned: sa,
                bounds: ba,
                captures: xa,
                previous: va,
                curves: ka,
            },
            Slices {
                locals: lb,
                components: cb,
                palettes: pb,
                skinned: sb,
                bounds: bb,
                captures: xb,
                previous: vb,
                curves: kb,
            },
        )
    }
}

impl CpuRuntime {
    /// A runtime for programs within `limits`, with `threads` workers for
    /// [`CpuRuntime::frame_parallel`] (at least one).
    pub fn new(limits: ProgramLimits, outputs: Outputs, threads: usize) -> CpuRuntime {
        CpuRuntime {
            limits,
            outputs,
            packages: Vec::new(),
            skin_bounds: Vec::new(),
            morphs: Vec::new(),
            workers: Vec::new(),
            joints: 0,
            curves: 0,
            mesh_vertices: 0,
            mesh_targets: 0,
            batches: Vec::new(),
            history: History::new(limits.history_slots, 0),
            claims: SlotClaims::default(),
            captures: Vec::new(),
            layout: Vec::new(),
            motion: MotionResets::new(),
            last_palettes: Vec::new(),
            last_placements: Vec::new(),
            runs: Vec::new(),
            presented: Vec::new(),
        }
        .with_workers(threads.max(1))
    }

    fn with_workers(mut self, threads: usize) -> CpuRuntime {
        self.workers = (0..threads).map(|_| self.worker()).collect();
        self
    }

    fn worker(&self) -> Worker {
        Worker {
            evaluator: Evaluator::with_curves(self.limits, self.joints, 0, self.curves),
            positions: vec![Vec3::ZERO; self.mesh_vertices],
            normals: vec![Vec3::ZERO; self.mesh_vertices],
            morphing: Morphing {
                positions: vec![Vec3::ZERO; self.mesh_vertices],
                normals: vec![Vec3::ZERO; self.mesh_vertices],
                weights: Vec::with_capacity(self.mesh_targets),
            },
        }
    }

    pub fn limits(&self) -> &ProgramLimits {
        &self.limits
    }

    /// Adds a copy of `package`; returns its handle.
    pub fn add_package(&mut self, package: &Package) -> PackageId {
        self.packages.push(package.clone());
        self.skin_bounds.push(skin_bounds(package));
        self.morphs.push(mesh_targets(package));
        self.resize_workers();
        PackageId(self.packages.len() - 1)
    }

    /// Puts a new generation of package `id` in its place; `false` when `id` was never added.
    pub fn replace_package(&mut self, id: PackageId, package: &Package) -> bool {
        let Some(slot) = self.packages.get_mut(id.0) else {
            return false;
        };
        *slot = package.clone();
        self.skin_bounds[id.0] = skin_bounds(package);
        self.morphs[id.0] = mesh_targets(package);
        self.resize_workers();
        true
    }

    pub fn package(&self, id: PackageId) -> Option<&Package> {
        self.packages.get(id.0)
    }

    /// Grows the workers' scratch to the largest skeleton and mesh of the packages.
    fn resize_workers(&mut self) {
        let joints = self
            .packages
            .iter()
            .flat_map(|p| &p.skeletons)
            .map(|s| s.joint_count())
            .max();
        let vertices = self
            .packages
            .iter()
            .flat_map(|p| &p.meshes)
            .map(|m| m.positions.len())
            .max();
        let curves = (self.packages.iter())
            .flat_map(|p| (0..p.skeletons.len() as u32).map(|s| p.curves.range(s).len()))
            .max();
        let (joints, vertices) = (joints.unwrap_or(0), vertices.unwrap_or(0));
        let curves = curves.unwrap_or(0);
        let targets = (self.packages.iter().flat_map(|p| &p.meshes))
            .map(|m| m.targets.len())
            .max()
            .unwrap_or(0);
        if joints > self.joints
            || vertices > self.mesh_vertices
            || curves > self.curves
            || targets > self.mesh_targets
        {
            self.joints = self.joints.max(joints);
            self.curves = self.curves.max(curves);
            self.mesh_targets = self.mesh_targets.max(targets);
            self.mesh_vertices = self.mesh_vertices.max(vertices);
            let threads = self.workers.len();
            self.workers = (0..threads).map(|_| self.worker()).collect();
            self.history = self.history.with_joints(self.joints);
        }
    }

    /// With [`Outputs::motion`]: instance `instance` of batch `batch` of the next frame has no
    /// motion (a teleport; `crate::motion`).
    pub fn reset_motion(&mut self, batch: usize, instance: usize) {
        self.motion.reset(batch, instance);
    }

    /// The inertialization history after the last frame.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Outputs of the last frame, one per batch.
    pub fn outputs(&self) -> &[BatchOutput] {
        &self.batches
    }

    /// Validates and evaluates `batches` on the calling thread.
    pub fn frame(&mut self, batches: &[Batch]) -> Result<(), FrameError> {
        self.run(batches, false)
    }

    /// Validates `batches`, then evaluates them with each batch's instances split into one
    /// contiguous block per worker, over rayon.
    pub fn frame_parallel(&mut self, batches: &[Batch]) -> Result<(), FrameError> {
        self.run(batches, true)
    }

    /// Presents `instances` at `alpha` of the way from their second-last committed tick to the
    /// last (`crate::retained`, `crate::present`): one batch per run of consecutive slots of one
    /// kind ([`Instances::runs`]), each instance posed from its presented program and placed at
    /// its presented placement, evaluated as [`CpuRuntime::frame`] (`parallel`:
    /// [`CpuRuntime::frame_parallel`]) evaluates a frame. Outputs are per run, in slot order.
    /// The frame's instance list is allocated per call (it borrows the presented programs).
    pub fn present(
        &mut self,
        instances: &Instances,
        alpha: f32,
        parallel: bool,
    ) -> Result<(), FrameError> {
        let mut runs = std::mem::take(&mut self.runs);
        let mut programs = std::mem::take(&mut self.presented);
        instances.runs(&mut runs);
        let total: usize = runs.iter().map(|r| r.2 as usize).sum();
        programs.resize_with(total, Program::default);
        let mut placements = Vec::with_capacity(total);
        let mut k = 0;
        for &(kind, first, n) in &runs {
            let clips = self
                .packages
                .get(kind.package.0)
                .map_or(&[][..], |p| &p.clips);
            for slot in first..first + n {
                instances.present_program(slot, alpha, clips, &mut programs[k]);
                placements.push(instances.present_placement(slot, alpha));
                k += 1;
            }
        }
        let list: Vec<Instance> = (runs.iter())
            .flat_map(|&(_, first, n)| first..first + n)
            .zip(programs.iter().zip(&placements))
            .filter_map(|(slot, (program, &placement))| {
                let view = instances.view(slot)?;
                Some(Instance {
                    pose: Instances::pose(&view, program),
                    placement,
                })
            })
            .collect();
        let mut at = 0;
        let batches: Vec<Batch> = (runs.iter())
            .map(|&(kind, _, n)| {
                let b = Batch {
                    package: kind.package,
                    skeleton: kind.skeleton,
                    skin: kind.skin,
                    instances: &list[at..at + n as usize],
                };
                at += n as usize;
                b
            })
            .collect();
        let result = self.run(&batches, parallel);
        drop(batches);
        drop(list);
        self.runs = runs;
        self.presented = programs;
        result
    }

    fn run(&mut self, batches: &[Batch], parallel: bool) -> Result<(), FrameError> {
        let packages = &self.packages;
        validate(
            batches,
            &self.limits,
            |id| packages.get(id.0),
            &mut self.claims,
            parallel,
        )?;
        check_keeps(batches, |b| self.layout.get(b).copied())?;
        if self.outputs.motion {
            self.motion.frame(batches);
            self.last_palettes.resize_with(batches.len(), Vec::new);
            self.last_placements.resize_with(batches.len(), Vec::new);
        }
        self.layout.clear();
        self.layout.extend(batches.iter().map(BatchLayout::of));
        self.batches
            .resize_with(batches.len(), BatchOutput::default);
        for (b, batch) in batches.iter().enumerate() {
            let checked = batch_assets(b, batch, |id| packages.get(id.0))?;
            let n = batch.instances.len();
            let strides = Strides {
                locals: if self.outputs.locals {
                    checked.joints()
                } else {
                    0
                },
                joints: checked.joints(),
                palette: checked.palette_len(),
                vertices: checked.vertex_count,
                bounds: usize::from(checked.skin.is_some()),
                captures: if batch.instances.iter().any(captures) {
                    checked.joints()
                } else {
                    0
                },
                previous: if self.outputs.motion {
                    checked.vertex_count
                } else {
                    0
                },
                curves: checked.curve_count(),
            };
            self.captures
                .resize(n * strides.captures, JointOffset::ZERO);
            let out = &mut self.batches[b];
            let motion = self.outputs.motion;
            if motion {
                let last = &mut self.last_palettes[b];
                last.clear();
                last.extend_from_slice(&out.palettes);
            }
            out.joints = strides.joints;
            out.palette_len = strides.palette;
            out.vertex_count = strides.vertices;
            out.curve_count = strides.curves;
            out.locals.resize(n * strides.locals, Trs::IDENTITY);
            out.components
                .resize(n * strides.joints, Affine3A::IDENTITY);
            out.palettes.resize(n * strides.palette, Affine3A::IDENTITY);
            out.skinned
                .resize(n * strides.vertices, SkinnedVertex::default());
            out.bounds.resize(n * strides.bounds, Bounds::EMPTY);
            out.previous.resize(n * strides.previous, Vec3::ZERO);
            out.curves.resize(n * strides.curves, 0.0);
            let slices = Slices {
                locals: &mut out.locals,
                components: &mut out.components,
                palettes: &mut out.palettes,
                skinned: &mut out.skinned,
                bounds: &mut out.bounds,
                captures: &mut self.captures,
                previous: &mut out.previous,
                curves: &mut out.curves,
            };
            let bounds = batch
                .skin
                .and_then(|k| self.skin_bounds[batch.package.0].get(k as usize));
            let workers = if parallel {
                &mut self.workers[..]
            } else {
                &mut self.workers[..1]
            };
            let history = &self.history;
            let last = motion.then(|| Last {
                palettes: &self.last_palettes[b],
                placements: &self.last_placements[b],
                resets: self.motion.batch(b),
            });
            let batch_in = BatchIn {
                assets: &checked,
                morphs: &self.morphs[batch.package.0],
                bounds,
                history,
                last,
            };
            run_range(workers, batch.instances, slices, &batch_in, strides, 0);
            if motion {
                let placements = &mut self.last_placements[b];
                placements.clear();
                placements.extend(batch.instances.iter().map(|x| x.placement));
            }
            commit_captures(
                &mut self.history,
                &self.captures,
                batch.instances,
                strides.captures,
            );
        }
        Ok(())
    }
}

/// Moves the offsets each of `instances` captured (`joints` per instance in `captures`) into
/// its history slot.
fn commit_captures(
    history: &mut History,
    captures: &[JointOffset],
    instances: &[Instance],
    joints: usize,
) {
    if joints == 0 {
        return;
    }
    for (x, from) in instances.iter().zip(captures.chunks_exact(joints)) {
        let Some((p, _)) = x.pose.program() else {
            continue;
        };
        if let Some(to) = p.capture_slot().and_then(|s| history.slot_mut(s)) {
            to[..joints].copy_from_slice(from);
        }
    }
}

/// Whether the instance's program captures inertialization history.
fn captures(x: &Instance) -> bool {
    x.pose
        .program()
        .is_some_and(|(p, _)| p.capture_slot().is_some())
}

/// Evaluates `instances` into `out`, halving workers and instances over `rayon::join` until
/// one worker is left (no allocation).
fn run_range(
    workers: &mut [Worker],
    instances: &[Instance],
    out: Slices,
    batch: &BatchIn,
    s: Strides,
    first: usize,
) {
    if workers.len() <= 1 || instances.len() <= 1 {
        if let Some(w) = workers.first_mut() {
            run_serial(w, instances, out, batch, s, first);
        }
        return;
    }
    let half = workers.len() / 2;
    let n = instances.len() * half / workers.len();
    let (wa, wb) = workers.split_at_mut(half);
    let (ia, ib) = instances.split_at(n);
    let (oa, ob) = out.split(n, s);
    rayon::join(
        || run_range(wa, ia, oa, batch, s, first),
        || run_range(wb, ib, ob, batch, s, first + n),
    );
}

/// Evaluates `instances`, the first of them instance `first` of the batch.
fn run_serial(
    w: &mut Worker,
    instances: &[Instance],
    out: Slices,
    batch: &BatchIn,
    s: Strides,
    first: usize,
) {
    let mut out = out;
    for (i, x) in (first..).zip(instances) {
        let (one, rest) = out.split(1, s);
        out = rest;
        pose_instance(w, x, i, one, batch);
    }
}

/// Steps 1–5 of the module doc (and with motion, step 6) for instance `i` of a validated batch.
fn pose_instance(w: &mut Worker, x: &Instance, i: usize, out: Slices, batch_in: &BatchIn) {
    let batch = batch_in.assets;
    if let Pose::Hidden = x.pose {
        let nan = Vec3::splat(f32::NAN);
        out.skinned.fill(SkinnedVertex {
            position: nan,
            normal: nan,
        });
        out.previous.fill(nan);
        out.bounds.fill(Bounds::EMPTY);
        return;
    }
    match x.pose {
        Pose::Program(program) | Pose::Lod(program, _) => {
            let lod = match x.pose {
                Pose::Lod(_, l) if l > 0 => batch.assets.skeleton.lods.get(usize::from(l) - 1),
                _ => None,
            };
            w.evaluator
                .evaluate(program, &batch.assets, lod, batch_in.history, false);
            if let Some((_, offsets)) = w.evaluator.captured() {
                if out.captures.len() == offsets.len() {
                    out.captures.copy_from_slice(offsets);
                }
            }
            if let Some(local) = w.evaluator.final_local(program) {
                if out.locals.len() == local.len() {
                    out.locals.copy_from_slice(local);
                }
            }
            out.components.copy_from_slice(w.evaluator.component());
            if out.curves.len() == w.evaluator.curves().len() {
                out.curves.copy_from_slice(w.evaluator.curves());
            }
            if let Some((_, skin)) = batch.skin {
                build_palette(skin, out.components, out.palettes);
            }
        }
        Pose::Hero(palette) => out.palettes.copy_from_slice(palette),
        Pose::Keep | Pose::Hidden => {}
    }
    let cof = cofactor(&x.placement.matrix3);
    let hero = matches!(x.pose, Pose::Hero(_));
    let curves = morph_curves(out.curves, hero);
    let mut at = 0;
    for (m, mesh) in batch.meshes_indexed() {
        let n = mesh.positions.len();
        let (positions, normals) = (&mut w.positions[..n], &mut w.normals[..n]);
        normals.fill(Vec3::ZERO);
        let targets = batch_in.morphs.get(m).map_or(&[][..], |t| &t[..]);
        let shape = w.morphing.shape(mesh, targets, curves);
        skin_shape(mesh, shape, out.palettes, positions, normals);
        for ((o, &p), &nn) in out.skinned[at..at + n]
            .iter_mut()
            .zip(&*positions)
            .zip(&*normals)
        {
            *o = place(&x.placement, &cof, p, nn);
        }
        at += n;
    }
    if let (Some(b), Some(bounds)) = (out.bounds.first_mut(), batch_in.bounds) {
        *b = bounds.instance(out.palettes, &x.placement, curves);
    }
    if let Some(last) = &batch_in.last {
        previous_positions(w, i, out, batch_in, last, hero);
    }
}

/// The curve values that weigh an instance's morph targets: its own, or none for a hero (no
/// program of its evaluates curves), whose targets take their default weights.
fn morph_curves(curves: &[f32], hero: bool) -> &[f32] {
    if hero {
        &[]
    } else {
        curves
    }
}

/// Step 6: each vertex skinned with instance `i`'s last palette and placement, or its current
/// position when it resets.
fn previous_positions(
    w: &mut Worker,
    i: usize,
    out: Slices,
    batch_in: &BatchIn,
    last: &Last,
    hero: bool,
) {
    let batch = batch_in.assets;
    let curves = morph_curves(out.curves, hero);
    let k = batch.palette_len();
    let palette = last.palettes.get(i * k..(i + 1) * k);
    let (Some(palette), Some(placement), false) = (
        palette,
        last.placements.get(i),
        last.resets.get(i).copied().unwrap_or(true),
    ) else {
        for (p, v) in out.previous.iter_mut().zip(out.skinned.iter()) {
            *p = v.position;
        }
        return;
    };
    let mut at = 0;
    for (m, mesh) in batch.meshes_indexed() {
        let n = mesh.positions.len();
        let positions = &mut w.positions[..n];
        let targets = batch_in.morphs.get(m).map_or(&[][..], |t| &t[..]);
        let shape = w.morphing.shape(mesh, targets, curves);
        skin_shape(mesh, shape, palette, positions, &mut []);
        for (o, &p) in out.previous[at..at + n].iter_mut().zip(&*positions) {
            *o = placement.transform_point3(p);
        }
        at += n;
    }
}

/// What every instance of a batch reads.
struct BatchIn<'a> {
    assets: &'a BatchAssets<'a>,
    /// Per mesh of the batch's package: what weighs each of its morph targets.
    morphs: &'a [Vec<TargetWeight>],
    /// The batch skin's bounds (`None` without a skin).
    bounds: Option<&'a SkinBounds>,
    history: &'a History,
    /// With [`Outputs::motion`]: the last frame's palettes and placements, and the resets.
    last: Option<Last<'a>>,
}

/// A batch's last palettes and placements (by instance) and this frame's resets.
struct Last<'a> {
    palettes: &'a [Affine3A],
    placements: &'a [Affine3A],
    resets: &'a [bool],
}

/// Per mesh of `package`, what weighs each of its morph targets.
fn mesh_targets(package: &Package) -> Vec<Vec<TargetWeight>> {
    (0..package.meshes.len())
        .map(|m| crate::morph::target_weights(package, m))
        .collect()
}

/// Every skin's animated bounds, in package order.
pub fn skin_bounds(package: &Package) -> Vec<SkinBounds> {
    (0..package.skins.len())
        .map(|k| SkinBounds::for_skin(package, k))
        .collect()
}
