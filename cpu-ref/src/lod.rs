//! Skeleton LOD: the joints whose programs run at a reduced level of detail, and how a level is
//! chosen from an instance's size on screen.
//!
//! Level 0 is the whole skeleton. Level `k ≥ 1` is [`Skeleton::lods`]`[k - 1]`, a set of joints
//! cooked per skeleton (throng-cook's `lod` module) that holds the root and every ancestor of each
//! joint it holds, each level a subset of the one before, and a local pose for each joint it
//! drops (the cook's choice: the mean of the skeleton's clips). At a reduced level a program runs
//! on the retained joints only; a dropped joint takes the level's pose, so FK carries it rigidly
//! with its nearest retained ancestor and the palette still gives every entry a transform.

use thiserror::Error;

use crate::{Skeleton, Trs, NO_PARENT};

/// One reduced level of a skeleton: its retained joints, ancestor-closed, and the local pose its
/// dropped joints hold.
#[derive(Clone, Debug, PartialEq)]
pub struct SkeletonLod {
    /// Retained joints, ascending.
    joints: Vec<u32>,
    /// Bit `j % 32` of word `j / 32`: joint `j` is retained (the GPU's table, as uploaded).
    words: Vec<u32>,
    /// Per joint: the local pose a dropped joint holds; a retained joint's entry is its rest.
    pose: Vec<Trs>,
    /// Largest distance between a vertex at full detail and at this level, measured by the
    /// cook over the skeleton's clips (scene units): what [`lod_for_scale`] projects.
    error: f32,
}

#[derive(Debug, Error, PartialEq)]
pub enum LodError {
    #[error("a LOD level retains no joints")]
    Empty,
    #[error("a skeleton has {0} LOD levels; at most {MAX_LOD_LEVELS} are allowed")]
    TooMany(usize),
    #[error("LOD joint {joint} is out of range (the skeleton has {joints} joints)")]
    OutOfRange { joint: u32, joints: usize },
    #[error("a LOD level was made for a skeleton of another size (this one has {joints} joints)")]
    OtherSkeleton { joints: usize },
    #[error("LOD pose of joint {joint} is not finite, has a rotation far from unit length or a scale that is not positive")]
    BadPose { joint: usize },
    #[error("a LOD level's error {0} is not a finite distance")]
    BadError(f32),
    #[error("a LOD level has {count} poses for its {dropped} dropped joints")]
    PoseCount { count: usize, dropped: usize },
    #[error("LOD joints must be strictly ascending; {joint} follows {previous}")]
    NotAscending { joint: u32, previous: u32 },
    #[error("LOD level retains joint {joint} but not its parent {parent}")]
    NotAncestorClosed { joint: u32, parent: u32 },
    #[error("LOD level {level} retains joint {joint}, which level {} dropped", level - 1)]
    NotNested { level: usize, joint: u32 },
    #[error("LOD level {level} retains {count} joints, not fewer than the {previous} before it")]
    NotCoarser {
        level: usize,
        count: usize,
        previous: usize,
    },
}

impl SkeletonLod {
    /// The level retaining `joints` (ascending) of `skeleton`, its dropped joints holding
    /// `dropped_pose` (one entry per dropped joint, ascending); refused unless `joints` is
    /// non-empty, in range and ancestor-closed (so it holds the root), every pose is finite
    /// with a unit rotation (within 1e-3) and a positive scale, and `error` (scene units) is
    /// finite and not negative.
    pub fn new(
        skeleton: &Skeleton,
        joints: Vec<u32>,
        dropped_pose: &[Trs],
        error: f32,
    ) -> Result<SkeletonLod, LodError> {
        let n = skeleton.joint_count();
        if !(error.is_finite() && error >= 0.0) {
            return Err(LodError::BadError(error));
        }
        if joints.is_empty() {
            return Err(LodError::Empty);
        }
        let mut words = vec![0u32; n.div_ceil(32)];
        let mut previous = None;
        for &j in &joints {
            if j as usize >= n {
                return Err(LodError::OutOfRange {
                    joint: j,
                    joints: n,
                });
            }
            if let Some(p) = previous.filter(|&p| p >= j) {
                return Err(LodError::NotAscending {
                    joint: j,
                    previous: p,
                });
            }
            let parent = skeleton.parents[j as usize];
            // Parents precede children, so the parent's bit is already set if it is retained.
            if parent != NO_PARENT && words[parent as usize / 32] & (1 << (parent % 32)) == 0 {
                return Err(LodError::NotAncestorClosed { joint: j, parent });
            }
            words[j as usize / 32] |= 1 << (j % 32);
            previous = Some(j);
        }
        let mut pose = skeleton.rest.clone();
        let mut fill = dropped_pose.iter();
        for (j, x) in pose.iter_mut().enumerate() {
            if words[j / 32] & (1 << (j % 32)) != 0 {
                continue;
            }
            let t = fill.next().ok_or(LodError::PoseCount {
                count: dropped_pose.len(),
                dropped: n - joints.len(),
            })?;
            let unit = (t.rotation.length() - 1.0).abs() <= 1e-3;
            if !t.is_finite() || !unit || t.scale.min_element() <= 0.0 {
                return Err(LodError::BadPose { joint: j });
            }
            *x = *t;
        }
        if fill.next().is_some() {
            return Err(LodError::PoseCount {
                count: dropped_pose.len(),
                dropped: n - joints.len(),
            });
        }
        Ok(SkeletonLod {
            joints,
            words,
            pose,
            error,
        })
    }

    /// The cook's measured error of this level (scene units).
    pub fn error(&self) -> f32 {
        self.error
    }

    /// Local pose per joint: the level's pose at a dropped joint, the rest at a retained one.
    pub fn pose(&self) -> &[Trs] {
        &self.pose
    }

    /// The poses of the dropped joints, ascending (what [`SkeletonLod::new`] takes).
    pub fn dropped_pose(&self) -> impl Iterator<Item = &Trs> + '_ {
        (self.pose.iter().enumerate())
            .filter(|(j, _)| !self.retains(*j))
            .map(|(_, t)| t)
    }

    /// Retained joints, ascending.
    pub fn joints(&self) -> &[u32] {
        &self.joints
    }

    /// The retained-joint bitset: bit `j % 32` of word `j / 32`.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    pub fn retains(&self, joint: usize) -> bool {
        self.words
            .get(joint / 32)
            .is_some_and(|w| w & (1 << (joint % 32)) != 0)
    }
}

/// Most reduced levels a skeleton has (the GPU sizes its per-level tables by it).
pub const MAX_LOD_LEVELS: usize = 2;

/// Checks that `lods` are levels 1, 2, … of `skeleton`, at most [`MAX_LOD_LEVELS`]: each
/// within it, nested in the level before and strictly coarser.
pub fn check_levels(skeleton: &Skeleton, lods: &[SkeletonLod]) -> Result<(), LodError> {
    if lods.len() > MAX_LOD_LEVELS {
        return Err(LodError::TooMany(lods.len()));
    }
    let mut previous = skeleton.joint_count();
    for (i, lod) in lods.iter().enumerate() {
        let level = i + 1;
        let n = skeleton.joint_count();
        if let Some(&joint) = lod.joints.iter().find(|&&j| j as usize >= n) {
            return Err(LodError::OutOfRange { joint, joints: n });
        }
        if lod.words.len() != n.div_ceil(32) || lod.pose.len() != n {
            return Err(LodError::OtherSkeleton { joints: n });
        }
        for &joint in &lod.joints {
            let parent = skeleton.parents[joint as usize];
            if parent != NO_PARENT && !lod.retains(parent as usize) {
                return Err(LodError::NotAncestorClosed { joint, parent });
            }
        }
        if let Some(before) = i.checked_sub(1).map(|b| &lods[b]) {
            if let Some(&joint) = lod.joints.iter().find(|&&j| !before.retains(j as usize)) {
                return Err(LodError::NotNested { level, joint });
            }
        }
        if lod.joints.len() >= previous {
            return Err(LodError::NotCoarser {
                level,
                count: lod.joints.len(),
                previous,
            });
        }
        previous = lod.joints.len();
    }
    Ok(())
}

/// Largest error a level may project to on screen (pixels) for [`lod_for_scale`] to choose it.
pub const LOD_PIXEL_ERROR: f32 = 1.0;

/// Fraction past [`LOD_PIXEL_ERROR`] a level's projected error must go before an instance
/// changes level, so one hovering at a threshold does not flip every frame.
pub const LOD_HYSTERESIS: f32 = 0.2;

/// The level for an instance seen at `pixels_per_unit` (screen pixels per scene unit at its
/// distance) that was at `current` last frame, among `lods` (levels 1, 2, …): coarser while the
/// next level's error projects [`LOD_HYSTERESIS`] under [`LOD_PIXEL_ERROR`], finer while the
/// current level's projects as far over it. A non-finite scale gives level 0.
pub fn lod_for_scale(pixels_per_unit: f32, current: u8, lods: &[SkeletonLod]) -> u8 {
    if !pixels_per_unit.is_finite() {
        return 0;
    }
    let projected = |level: usize| lods[level - 1].error * pixels_per_unit;
    let mut level = usize::from(current).min(lods.len());
    while level < lods.len() && projected(level + 1) <= LOD_PIXEL_ERROR * (1.0 - LOD_HYSTERESIS) {
        level += 1;
    }
    while level > 0 && projected(level) > LOD_PIXEL_ERROR * (1.0 + LOD_HYSTERESIS) {
        level -= 1;
    }
    level as u8
}

/// The level for an instance seen at `pixels_per_unit` among `lods`, and the share of its
/// pixels the next coarser level takes, for a cross-fade between mesh LODs that needs no
/// history (docs/gpu.md, "Mesh LOD cross-fade"): the coarsest level whose error projects under
/// `1 − LOD_HYSTERESIS` of [`LOD_PIXEL_ERROR`]; the next level's share grows linearly from 0
/// where its error projects `1 + LOD_HYSTERESIS` of it to 1 where it projects `1 −`, at which
/// point the instance is at that level alone. Over the same distances [`lod_for_scale`] would
/// switch with hysteresis. A non-finite scale gives level 0 alone.
pub fn lod_fade_for_scale(pixels_per_unit: f32, lods: &[SkeletonLod]) -> (u8, f32) {
    if !pixels_per_unit.is_finite() {
        return (0, 0.0);
    }
    let projected = |level: usize| lods[level - 1].error * pixels_per_unit;
    let (low, high) = (
        LOD_PIXEL_ERROR * (1.0 - LOD_HYSTERESIS),
        LOD_PIXEL_ERROR * (1.0 + LOD_HYSTERESIS),
    );
    let mut level = 0;
    while level < lods.len() && projected(level + 1) <= low {
        level += 1;
    }
    let share = match level < lods.len() {
        true => ((high - projected(level + 1)) / (high - low)).clamp(0.0, 1.0),
        false => 0.0,
    };
    // Past the loop the next level projects over `low`, so its share is under 1.
    (level as u8, share)
}

/// The skeleton LOD level of each instance of a crowd (by id), kept from frame to frame for the
/// hysteresis of [`lod_for_scale`].
#[derive(Clone, Debug, Default)]
pub struct LodState {
    levels: Vec<u8>,
}

impl LodState {
    pub fn new() -> LodState {
        LodState::default()
    }

    /// The level of instance `id` this frame, seen at `pixels_per_unit`, among `lods`; an
    /// instance never asked about starts at level 0.
    pub fn choose(&mut self, id: usize, pixels_per_unit: f32, lods: &[SkeletonLod]) -> u8 {
        if id >= self.levels.len() {
            self.levels.resize(id + 1, 0);
        }
        let level = lod_for_scale(pixels_per_unit, self.levels[id], lods);
        self.levels[id] = level;
        level
    }
}
