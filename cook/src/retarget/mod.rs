//! Cook-time retargeting (docs/retargeting.md): clips captured on one skeleton rebuilt on
//! another and baked into the target package, so a crowd pays nothing for it at run time.
//!
//! # Rest-space retargeting
//!
//! Everything happens in each side's scene space (`root_transform * component`, +Y up), in f64.
//! `F` is the facing alignment: the turn about +Y that takes the source's reference facing onto
//! the target's. For each mapped target joint `j` driven by source joint `s`, with reference
//! (rest, bind or a clip frame) scene rotations `S₀` and `T₀`, a constant carry rotation
//!
//! ```text
//! C = S₀⁻¹ · F⁻¹ · A · T₀        A: the shortest arc from the target's reference bone direction
//!                                   (j to the next joint of its chain) onto F · the source's
//! ```
//!
//! is precomputed. Per sample the source's scene rotations `S(t)` come from FK of its local pose
//! (parent × local, so the rest-relative rotation of every joint above is included), and the
//! target's goal rotation is `T(t) = F · S(t) · C`: at the reference, `T = A · T₀`, and every
//! change the source makes from its reference is made, in the target's space, from the target's.
//! A joint with a next joint in its chain then turns by the shortest arc that lays its bone onto
//! the source's current bone direction (under `F`), so chains whose proportions or intermediate
//! joints differ still point where the source points. The target's local rotation is its current
//! parent's scene rotation inverted times `T(t)`; joints come parent first, so the parent is
//! already retargeted. Unmapped joints keep their rest local rotation (or the profile's default).
//!
//! Translation ([`TranslationPolicy`]): the translation joint (the hips) moves horizontally by
//! the source's displacement from its reference, turned by `F` and scaled (by default the ratio
//! of straight-legged standing hip heights), and its height puts the legs' roots at the source's
//! leg-root height, scaled; other joints keep their rest translation, except joints that follow
//! another (an IK foot bone under the root keeps its reference offset from the shin). A chain's
//! twist moves part of its last joint's roll about the bone onto the joint before it. Feet
//! marked for IK are planted during the source's contacts: the translation joint follows them
//! (a ground-plane offset and a twist about its own bone, which turn no bone, and a lift to the
//! floor, [`Shift`]), and IK reaches each contact's landing place for what that leaves
//! ([`Binding::plants`]). Root motion is then extracted
//! on the target by the ordinary cook (the profile's `[root_motion]`), from motion already scaled.
//!
//! Modules: [`profile`] parses the TOML, [`binding`] resolves it against the two skeletons,
//! `pose` retargets one pose, [`report`] measures the cooked result; [`retarget`] runs them over
//! every clip.
//!
//! The cook has no additive clips (additives are pose-program ops on ordinary clips, evaluated
//! against a reference clip at run time), so retargeting never sees a delta: an additive layer
//! over a retargeted clip is computed against the target's own reference.
//!
//! The idea follows the rest-pose-relative world-rotation transfer used by game retargeters,
//! e.g. Unreal Engine's IK Retargeter "FK chains" (https://dev.epicgames.com/documentation/en-us/unreal-engine/ik-rig-retargeting-in-unreal-engine).

pub mod binding;
mod pose;
pub mod profile;
pub mod report;
mod scene;
mod source;

use thiserror::Error;
use throng_cpu_ref::curve::{Channel, ChannelPath, Interpolation};
use throng_cpu_ref::{Skeleton, SourceClip};

use crate::import::{ClipMeta, Origin, Placed as MetaPlaced, RootMotionRequest};
use crate::{CookError, Imported};
pub use binding::Binding;
pub use pose::{Plan, Plant, Scratch, Shift, PLANT_EASE_S, TWIST_RELAX_S};
pub use profile::{Reference, RetargetProfile, Scale, TranslationPolicy};
pub use source::{Motion, Source};

#[derive(Debug, Error)]
pub enum RetargetError {
    #[error("{file}: cannot read: {message}")]
    Io { file: String, message: String },
    #[error("{file} line {line}: {key}: {reason}")]
    Profile {
        file: String,
        line: usize,
        key: String,
        reason: String,
    },
    #[error("{file}: {reason}")]
    Source { file: String, reason: String },
    #[error(transparent)]
    Cook(#[from] CookError),
}

/// One retargeted clip as glTF-style LINEAR curves on the target, keyed at the source's times:
/// rotation and translation of every target joint.
pub fn retarget_clip(
    binding: &Binding,
    source: &Skeleton,
    motion: &Motion,
    target: &Skeleton,
) -> SourceClip {
    let times = motion.times();
    let n = target.joint_count();
    let mut source_local = source.rest.clone();
    let mut target_local = target.rest.clone();
    let mut scratch = Scratch::default();
    let mut rotations = vec![Vec::with_capacity(times.len() * 4); n];
    let mut translations = vec![Vec::with_capacity(times.len() * 3); n];
    let plan = binding.plants(source, motion, target, &times);
    let mut plant = vec![Plant::default(); plan.legs.len()];
    for (i, &time) in times.iter().enumerate() {
        for (p, w) in plant.iter_mut().zip(&plan.legs) {
            *p = w[i];
        }
        motion.sample(source, time, &mut source_local);
        binding.pose(
            source,
            &source_local,
            target,
            &mut target_local,
            (&plant, plan.hips[i]),
            &mut scratch,
        );
        for j in 0..n {
            rotations[j].extend_from_slice(&target_local[j].rotation.to_array());
            translations[j].extend_from_slice(&target_local[j].translation.to_array());
        }
    }
    let key_times: Vec<f32> = times.iter().map(|&t| t as f32).collect();
    let mut channels = Vec::with_capacity(2 * n);
    for (j, (r, t)) in rotations.into_iter().zip(translations).enumerate() {
        for (path, values) in [(ChannelPath::Rotation, r), (ChannelPath::Translation, t)] {
            channels.push(Channel {
                joint: j as u32,
                path,
                interpolation: Interpolation::Linear,
                times: key_times.clone(),
                values,
            });
        }
    }
    SourceClip {
        name: motion.name().to_string(),
        skeleton: 0,
        channels,
        duration: key_times.last().copied().unwrap_or(0.0),
    }
}

/// The target, ready for [`crate::cook`]: its own clips followed by every source clip named in
/// `clips` (all when empty) retargeted, with the source clip's events and markers and the
/// profile's root-motion request. Returns the binding too, for the report.
pub fn retarget(
    profile: &RetargetProfile,
    source: &Source,
    target: &Imported,
    clips: &[String],
) -> Result<(Imported, Binding), RetargetError> {
    let binding = Binding::new(profile, source, target)?;
    let src = source.skeleton()?;
    let tgt = &target.package.skeletons[0];
    for name in clips {
        if !source.clips.iter().any(|(m, _)| m.name() == name) {
            let names: Vec<&str> = source.clips.iter().map(|(m, _)| m.name()).collect();
            return Err(RetargetError::Source {
                file: source.file.clone(),
                reason: format!("has no clip '{name}' (it has: {})", names.join(", ")),
            });
        }
    }
    let mut out = target.clone();
    out.clip_meta
        .resize(out.source_clips.len(), ClipMeta::default());
    let root_motion = profile
        .root_motion
        .as_ref()
        .map(|(joint, policy)| MetaPlaced {
            value: RootMotionRequest {
                joint: joint.value.clone(),
                policy: *policy,
            },
            origin: Origin {
                file: profile.file.clone(),
                line: Some(joint.line),
                key: "root_motion".into(),
            },
        });
    for (motion, meta) in &source.clips {
        if !clips.is_empty() && !clips.iter().any(|c| c == motion.name()) {
            continue;
        }
        if out.source_clips.iter().any(|c| c.name == motion.name()) {
            return Err(RetargetError::Source {
                file: target.source.clone(),
                reason: format!(
                    "already has a clip named '{}'; pick other clips with --clip",
                    motion.name()
                ),
            });
        }
        out.source_clips
            .push(retarget_clip(&binding, src, motion, tgt));
        out.clip_meta.push(ClipMeta {
            events: meta.events.clone(),
            markers: meta.markers.clone(),
            root_motion: root_motion.clone(),
            curves: meta.curves.clone(),
        });
    }
    out.warnings.extend(binding.warnings.iter().cloned());
    Ok((out, binding))
}
