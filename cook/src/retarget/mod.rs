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
//! the source's displacement from its reference, turned by `F` and scaled (by default target leg
//! length over source leg length), and its height above the floor is the source's, scaled;
//! other joints keep their rest translation, except joints that follow another (an IK foot bone
//! under the root keeps its reference offset from the shin). Root motion is then extracted on
//! the target by the ordinary cook (the profile's `[root_motion]`), from motion already scaled.
//! A chain's twist moves part of its last joint's roll about the bone onto the joint before it.
//!
//! The cook has no additive clips (additives are pose-program ops on ordinary clips, evaluated
//! against a reference clip at run time), so retargeting never sees a delta: an additive layer
//! over a retargeted clip is computed against the target's own reference.
//!
//! The idea follows the rest-pose-relative world-rotation transfer used by game retargeters,
//! e.g. Unreal Engine's IK Retargeter "FK chains" (https://dev.epicgames.com/documentation/en-us/unreal-engine/ik-rig-retargeting-in-unreal-engine).

pub mod profile;
pub mod report;

use glam::{DAffine3, DQuat, DVec3};
use thiserror::Error;
use throng_cpu_ref::clip::sample_clip;
use throng_cpu_ref::curve::{Channel, ChannelPath, Interpolation};
use throng_cpu_ref::{Clip, Package, Skeleton, SourceClip, Trs};

use crate::import::{ClipMeta, Origin, Placed as MetaPlaced, RootMotionRequest};
use crate::{CookError, Imported};
pub use profile::{Reference, RetargetProfile, Scale, TranslationPolicy};

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

/// A source's skeleton (its first) and the clips on it, each with its metadata.
#[derive(Clone, Debug)]
pub struct Source {
    pub file: String,
    pub package: Package,
    pub clips: Vec<(Motion, ClipMeta)>,
}

/// A source clip: glTF curves (sampled exactly) or a cooked clip without root motion.
#[derive(Clone, Debug)]
pub enum Motion {
    Curves(SourceClip),
    Cooked(Box<Clip>),
}

impl Motion {
    pub fn name(&self) -> &str {
        match self {
            Motion::Curves(c) => &c.name,
            Motion::Cooked(c) => &c.name,
        }
    }

    /// Times to sample the retargeted clip at: the union of the source's key times (a cooked
    /// clip's sample times), so key-aligned sources stay key-aligned.
    pub fn times(&self) -> Vec<f64> {
        match self {
            Motion::Curves(c) => {
                let mut t: Vec<f32> = c.channels.iter().flat_map(|ch| ch.times.clone()).collect();
                t.sort_by(f32::total_cmp);
                t.dedup();
                if t.last().is_none_or(|&l| l < c.duration) {
                    t.push(c.duration);
                }
                t.into_iter().map(f64::from).collect()
            }
            Motion::Cooked(c) => (0..c.sample_count).map(|i| c.sample_time(i)).collect(),
        }
    }

    /// The local pose at `time`.
    pub fn sample(&self, skeleton: &Skeleton, time: f64, local: &mut [Trs]) {
        match self {
            Motion::Curves(c) => {
                throng_cpu_ref::curve::sample_exact(c, skeleton, time as f32, local)
            }
            Motion::Cooked(c) => sample_clip(c, skeleton, time as f32, local),
        }
    }
}

impl Source {
    /// The first skeleton of an imported glTF file and its clips.
    pub fn from_imported(imported: &Imported) -> Source {
        let clips = imported
            .source_clips
            .iter()
            .enumerate()
            .filter(|(_, c)| c.skeleton == 0)
            .map(|(i, c)| {
                let meta = imported.clip_meta.get(i).cloned().unwrap_or_default();
                (Motion::Curves(c.clone()), meta)
            })
            .collect();
        Source {
            file: imported.source.clone(),
            package: imported.package.clone(),
            clips,
        }
    }

    /// The first skeleton of a cooked package and its clips. A clip whose root motion was
    /// extracted is refused: its pose no longer holds the motion (retarget its glTF source).
    pub fn from_package(package: Package, file: &str) -> Result<Source, RetargetError> {
        let mut clips = Vec::new();
        for clip in package.clips.iter().filter(|c| c.skeleton == 0) {
            if clip.root_motion.is_some() {
                return Err(RetargetError::Source {
                    file: file.to_string(),
                    reason: format!(
                        "clip '{}' had its root motion extracted by the cook; retarget from the \
                         glTF it was cooked from",
                        clip.name
                    ),
                });
            }
            let meta = ClipMeta {
                events: clip
                    .events
                    .iter()
                    .map(|e| cooked_meta(e.clone(), file))
                    .collect(),
                markers: clip
                    .markers
                    .iter()
                    .map(|m| cooked_meta(m.clone(), file))
                    .collect(),
                root_motion: None,
            };
            clips.push((Motion::Cooked(Box::new(clip.clone())), meta));
        }
        Ok(Source {
            file: file.to_string(),
            package,
            clips,
        })
    }

    pub fn skeleton(&self) -> Result<&Skeleton, RetargetError> {
        self.package
            .skeletons
            .first()
            .ok_or_else(|| RetargetError::Source {
                file: self.file.clone(),
                reason: "has no skeleton".into(),
            })
    }
}

fn cooked_meta<T>(value: T, file: &str) -> MetaPlaced<T> {
    MetaPlaced {
        value,
        origin: Origin {
            file: file.to_string(),
            line: None,
            key: "cooked clip".into(),
        },
    }
}

/// Scene-space placement of every joint of a pose (f64): positions and rotations. Rotations are
/// composed (parent × local) so that they stay unit; positions come from the affine FK.
#[derive(Clone, Debug, Default)]
struct ScenePose {
    affine: Vec<DAffine3>,
    rotation: Vec<DQuat>,
}

impl ScenePose {
    fn position(&self, j: usize) -> DVec3 {
        self.affine[j].translation
    }

    /// FK of `local` under the skeleton's root transform.
    fn compute(&mut self, skeleton: &Skeleton, local: &[Trs]) {
        self.fill(skeleton, local, skeleton.root_transform.as_daffine3());
    }

    /// FK of `local` under the scene frame `root`.
    fn fill(&mut self, skeleton: &Skeleton, local: &[Trs], root: DAffine3) {
        let n = skeleton.joint_count();
        self.affine.resize(n, DAffine3::IDENTITY);
        self.rotation.resize(n, DQuat::IDENTITY);
        let root_rotation = root.to_scale_rotation_translation().1;
        for (j, l) in local.iter().enumerate().take(n) {
            let (pa, pq) = match parent(skeleton, j) {
                Some(p) => (self.affine[p], self.rotation[p]),
                None => (root, root_rotation),
            };
            self.affine[j] = pa * affine(l);
            self.rotation[j] = (pq * l.rotation.as_dquat()).normalize();
        }
    }
}

fn parent(skeleton: &Skeleton, j: usize) -> Option<usize> {
    let p = skeleton.parents[j] as usize;
    (p < j).then_some(p)
}

fn affine(trs: &Trs) -> DAffine3 {
    DAffine3::from_scale_rotation_translation(
        trs.scale.as_dvec3(),
        trs.rotation.as_dquat(),
        trs.translation.as_dvec3(),
    )
}

/// Writes joint `j`'s local transform (rest scale) and its scene placement under `parent`.
fn store(
    j: usize,
    rest: &Trs,
    rotation: DQuat,
    translation: DVec3,
    (pa, pq): (DAffine3, DQuat),
    t: &mut ScenePose,
    target_local: &mut [Trs],
) {
    let local = Trs {
        translation: translation.as_vec3(),
        rotation: rotation.as_quat(),
        scale: rest.scale,
    };
    t.affine[j] = pa * affine(&local);
    t.rotation[j] = (pq * rotation).normalize();
    target_local[j] = local;
}

/// Scene frame (affine, rotation) of `j`'s parent, or of the skeleton's root frame.
fn parent_frame(skeleton: &Skeleton, t: &ScenePose, j: usize) -> (DAffine3, DQuat) {
    match parent(skeleton, j) {
        Some(p) => (t.affine[p], t.rotation[p]),
        None => {
            let root = skeleton.root_transform.as_daffine3();
            (root, root.to_scale_rotation_translation().1)
        }
    }
}

/// FK again over the subtree of `root` from `local`.
fn refresh(skeleton: &Skeleton, root: usize, t: &mut ScenePose, local: &[Trs]) {
    let end = skeleton.subtree_end[root] as usize;
    for (j, l) in local.iter().enumerate().take(end).skip(root) {
        let (pa, pq) = parent_frame(skeleton, t, j);
        t.affine[j] = pa * affine(l);
        t.rotation[j] = (pq * l.rotation.as_dquat()).normalize();
    }
}

/// Shortest arc taking direction `from` onto `to`; identity when either is degenerate.
fn arc(from: DVec3, to: DVec3) -> DQuat {
    match (from.try_normalize(), to.try_normalize()) {
        (Some(a), Some(b)) => DQuat::from_rotation_arc(a, b),
        _ => DQuat::IDENTITY,
    }
}

/// The twist of `q` about unit `axis` (swing-twist decomposition; identity for a half turn of
/// pure swing).
fn twist(q: DQuat, axis: DVec3) -> DQuat {
    let p = axis * DVec3::new(q.x, q.y, q.z).dot(axis);
    let t = DQuat::from_xyzw(p.x, p.y, p.z, q.w);
    if t.length() > 1e-12 {
        t.normalize()
    } else {
        DQuat::IDENTITY
    }
}

const NONE: u32 = u32::MAX;

/// How long a planted foot's IK eases in before a contact and out after it, seconds.
pub const PLANT_EASE_S: f64 = 0.1;

/// A profile resolved against a source and a target skeleton: every name an index, every
/// constant precomputed. [`Binding::pose`] retargets one pose.
#[derive(Clone, Debug)]
pub struct Binding {
    /// Per target joint: the source joint driving it, or `NONE`.
    pub(crate) source_of: Vec<u32>,
    /// Per target joint: the next joint of its chain (target, source), or `NONE`s.
    next: Vec<(u32, u32)>,
    /// Per target joint: the carry rotation `C`.
    carry: Vec<DQuat>,
    /// Per target joint: its bone direction in its own frame at the reference (unit or zero).
    bone_local: Vec<DVec3>,
    /// Per target joint: the local rotation an unmapped joint keeps.
    rest_rotation: Vec<DQuat>,
    /// (last, previous, fraction, axis in previous's frame, last's reference local rotation).
    twists: Vec<(usize, usize, f64, DVec3, DQuat)>,
    /// (follower, followed, offset in the followed joint's reference frame).
    follow: Vec<(usize, usize, DVec3)>,
    pub facing: DQuat,
    pub scale: f64,
    pub policy: TranslationPolicy,
    /// Translation joint on the target and its source.
    pub translation_joint: (usize, usize),
    /// Reference scene positions of the translation joint (source, target).
    reference_position: (DVec3, DVec3),
    floors: (f64, f64),
    /// First joint of each leg chain: (source joint, the target's offset from the translation
    /// joint in that joint's reference frame).
    leg_roots: Vec<(usize, DVec3)>,
    /// Height of the leg chains' last joints (ankles) above the floor when planted: the lowest
    /// the source's come over its clips, and the target's at its reference (source, target).
    clearance: (f64, f64),
    /// Chains by name: (target joints, source joints).
    pub chains: Vec<(String, Vec<usize>, Vec<usize>)>,
    /// Feet: (source joint, target joint).
    pub feet: Vec<(usize, usize)>,
    /// Legs whose foot reaches the source's by IK.
    legs: Vec<Leg>,
    pub warnings: Vec<String>,
}

/// A two-bone leg of the target and the source foot it reaches for.
#[derive(Clone, Debug)]
struct Leg {
    thigh: usize,
    calf: usize,
    foot: usize,
    source_foot: usize,
    /// Source joints of the `[[feet]]` entries on this foot (itself, its toe): the foot is
    /// planted while any of them is in contact.
    watch: Vec<usize>,
}

/// Reusable per-pose buffers of [`Binding::pose`].
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    source: ScenePose,
    target: ScenePose,
}

impl Binding {
    /// Resolves `profile` against the source's and target's first skeletons; `target_clips`
    /// lets a reference name one of the target's clips. Errors name the profile line.
    pub fn new(
        profile: &RetargetProfile,
        source: &Source,
        target: &Imported,
    ) -> Result<Binding, RetargetError> {
        let err = |line: usize, key: &str, reason: String| RetargetError::Profile {
            file: profile.file.clone(),
            line,
            key: key.to_string(),
            reason,
        };
        let src = source.skeleton()?;
        let tgt = target
            .package
            .skeletons
            .first()
            .ok_or_else(|| RetargetError::Source {
                file: target.source.clone(),
                reason: "has no skeleton".into(),
            })?;
        let find = |skeleton: &Skeleton, names: &str| -> Option<usize> {
            names
                .split('|')
                .find_map(|n| skeleton.names.iter().position(|m| m == n.trim()))
        };
        let unknown = |side: &str, name: &str, skeleton: &Skeleton| {
            format!(
                "{side} joint '{name}' is not in the {side} skeleton (it has: {})",
                skeleton.names.join(", ")
            )
        };
        let n = tgt.joint_count();
        let mut source_of = vec![NONE; n];
        let mut next = vec![(NONE, NONE); n];
        let mut chains = Vec::new();
        for c in &profile.chains {
            let key = format!("chains ({})", c.name);
            let mut t_joints = Vec::new();
            let mut s_joints = Vec::new();
            for (s_name, t_name) in c.source.iter().zip(&c.target) {
                let s = find(src, s_name)
                    .ok_or_else(|| err(c.line, &key, unknown("source", s_name, src)))?;
                let t = find(tgt, t_name)
                    .ok_or_else(|| err(c.line, &key, unknown("target", t_name, tgt)))?;
                if source_of[t] != NONE {
                    let reason = format!("target joint '{t_name}' is mapped twice");
                    return Err(err(c.line, &key, reason));
                }
                source_of[t] = s as u32;
                t_joints.push(t);
                s_joints.push(s);
            }
            for k in 1..t_joints.len() {
                next[t_joints[k - 1]] = (t_joints[k] as u32, s_joints[k] as u32);
            }
            chains.push((c.name.clone(), t_joints, s_joints));
        }
        // A chain's last joint points at the first joint of the one chain that continues from
        // it (a chain starting at its child): the foot at the toe, the hand at the fingers.
        for (_, t_joints, _) in &chains {
            let last = t_joints[t_joints.len() - 1];
            let mut continuing = chains
                .iter()
                .filter(|(_, t, _)| parent(tgt, t[0]) == Some(last));
            if let (Some((_, t, s)), None) = (continuing.next(), continuing.next()) {
                next[last] = (t[0] as u32, s[0] as u32);
            }
        }

        let reference = |side: &profile::Side,
                         package: &Package,
                         clips: &dyn Fn(&str) -> Option<Motion>,
                         file: &str|
         -> Result<ScenePose, RetargetError> {
            let skeleton = &package.skeletons[0];
            let mut local = skeleton.rest.clone();
            match &side.reference {
                Reference::Rest => {}
                Reference::Clip { name, time } => {
                    let motion = clips(name).ok_or_else(|| RetargetError::Source {
                        file: file.to_string(),
                        reason: format!("has no clip '{name}' on its first skeleton for the profile's reference pose"),
                    })?;
                    motion.sample(skeleton, *time, &mut local);
                }
                Reference::Bind => return bind_pose(package, file),
            }
            let mut pose = ScenePose::default();
            pose.compute(skeleton, &local);
            Ok(pose)
        };
        let source_clip = |name: &str| {
            source
                .clips
                .iter()
                .map(|(m, _)| m)
                .find(|m| m.name() == name)
                .cloned()
        };
        let target_clip = |name: &str| {
            target
                .source_clips
                .iter()
                .find(|c| c.skeleton == 0 && c.name == name)
                .cloned()
                .map(Motion::Curves)
        };
        let s_ref = reference(&profile.source, &source.package, &source_clip, &source.file)?;
        let t_ref = reference(
            &profile.target,
            &target.package,
            &target_clip,
            &target.source,
        )?;

        let yaw = |f: [f64; 3]| f[0].atan2(f[2]);
        let facing =
            DQuat::from_rotation_y(yaw(profile.target.forward) - yaw(profile.source.forward));

        let mut carry = vec![DQuat::IDENTITY; n];
        let mut bone_local = vec![DVec3::ZERO; n];
        for t in 0..n {
            let s = source_of[t];
            if s == NONE {
                continue;
            }
            let s = s as usize;
            let (tn, sn) = next[t];
            let align = if tn == NONE {
                DQuat::IDENTITY
            } else {
                let dt = t_ref.position(tn as usize) - t_ref.position(t);
                let ds = facing * (s_ref.position(sn as usize) - s_ref.position(s));
                bone_local[t] = (t_ref.rotation[t].inverse() * dt).normalize_or_zero();
                arc(dt, ds)
            };
            carry[t] = (s_ref.rotation[s].inverse() * facing.inverse() * align * t_ref.rotation[t])
                .normalize();
        }

        let mut rest_rotation: Vec<DQuat> =
            tgt.rest.iter().map(|r| r.rotation.as_dquat()).collect();
        for (joint, q) in &profile.defaults {
            let t = find(tgt, &joint.value)
                .ok_or_else(|| err(joint.line, "defaults", unknown("target", &joint.value, tgt)))?;
            if source_of[t] != NONE {
                return Err(err(
                    joint.line,
                    "defaults",
                    format!(
                        "'{}' is mapped by a chain; a default is for an unmapped joint",
                        joint.value
                    ),
                ));
            }
            rest_rotation[t] = DQuat::from_array(*q);
        }

        let mut twists = Vec::new();
        for (c, (_, t_joints, _)) in profile.chains.iter().zip(&chains) {
            if c.twist == 0.0 {
                continue;
            }
            let key = format!("chains ({})", c.name);
            let (last, previous) = match t_joints.as_slice() {
                [.., p, l] if parent(tgt, *l) == Some(*p) => (*l, *p),
                _ => {
                    return Err(err(
                        c.line,
                        &key,
                        "twist needs a chain whose last two target joints are parent and child"
                            .into(),
                    ))
                }
            };
            let axis = tgt.rest[last].translation.as_dvec3().normalize_or_zero();
            if axis == DVec3::ZERO {
                return Err(err(
                    c.line,
                    &key,
                    "twist needs the last joint away from its parent (a bone to twist about)"
                        .into(),
                ));
            }
            let reference_local =
                (t_ref.rotation[previous].inverse() * t_ref.rotation[last]).normalize();
            twists.push((last, previous, c.twist, axis, reference_local));
        }

        let mut follow = Vec::new();
        for (joint, of) in &profile.follow {
            let f = find(tgt, &joint.value)
                .ok_or_else(|| err(joint.line, "follow", unknown("target", &joint.value, tgt)))?;
            let o = find(tgt, of)
                .ok_or_else(|| err(joint.line, "follow", unknown("target", of, tgt)))?;
            let inside =
                |j: usize, root: usize| (root..tgt.subtree_end[root] as usize).contains(&j);
            if inside(o, f) {
                return Err(err(
                    joint.line,
                    "follow",
                    format!(
                        "'{}' cannot follow '{of}', which lies in its own subtree",
                        joint.value
                    ),
                ));
            }
            let offset = t_ref.affine[o]
                .inverse()
                .transform_point3(t_ref.position(f));
            follow.push((f, o, offset));
        }
        for (i, &(f, ..)) in follow.iter().enumerate() {
            if follow.iter().any(|&(g, o, _)| {
                g != f
                    && (g..tgt.subtree_end[g] as usize).contains(&o)
                    && (g..tgt.subtree_end[g] as usize).contains(&f)
            }) || follow[..i].iter().any(|&(g, ..)| g == f)
            {
                return Err(err(
                    0,
                    "follow",
                    "a follower may not lie under another follower or follow twice".into(),
                ));
            }
        }

        let tj = &profile.translation.joint;
        let translation_t = find(tgt, &tj.value).ok_or_else(|| {
            err(
                tj.line,
                "translation.joint",
                unknown("target", &tj.value, tgt),
            )
        })?;
        if source_of[translation_t] == NONE {
            return Err(err(
                tj.line,
                "translation.joint",
                format!(
                    "'{}' is in no chain: the translation joint needs a source joint",
                    tj.value
                ),
            ));
        }
        let translation_s = source_of[translation_t] as usize;

        let mut leg_chains = Vec::new();
        for leg in &profile.translation.legs {
            let (_, t_joints, s_joints) = chains
                .iter()
                .find(|(name, ..)| *name == leg.value)
                .ok_or_else(|| {
                    err(
                        leg.line,
                        "translation.legs",
                        format!("no chain is named '{}'", leg.value),
                    )
                })?;
            leg_chains.push((t_joints.clone(), s_joints.clone()));
        }
        let leg_roots = leg_chains
            .iter()
            .map(|(t, s)| {
                let offset = t_ref.rotation[translation_t].inverse()
                    * (t_ref.position(t[0]) - t_ref.position(translation_t));
                (s[0], offset)
            })
            .collect();
        let ends: Vec<(usize, usize)> = leg_chains
            .iter()
            .map(|(t, s)| (t[t.len() - 1], s[s.len() - 1]))
            .collect();
        let clearance = (
            source_clearance(source, &ends, profile.source.floor),
            ends.iter()
                .map(|&(t, _)| t_ref.position(t).y - profile.target.floor)
                .sum::<f64>()
                / ends.len().max(1) as f64,
        );
        let mut warnings = Vec::new();
        let scale = match &profile.translation.scale {
            Scale::Fixed(x) if x.is_finite() && *x > 0.0 => *x,
            Scale::Fixed(x) => {
                warnings.push(format!(
                    "{}: translation scale {x} is not a finite positive number; using 1",
                    profile.file
                ));
                1.0
            }
            Scale::Legs => {
                // Straight-legged standing heights of the leg roots: leg length plus the ankle's
                // clearance on each side (a reference need not stand on the floor, nor straight:
                // the CMU zero pose has the hips at the origin, the Knight's knees are bent).
                let path = |pose: &ScenePose, joints: &[usize]| {
                    joints
                        .windows(2)
                        .map(|w| (pose.position(w[1]) - pose.position(w[0])).length())
                        .sum::<f64>()
                };
                let (mut lt, mut ls) = (0.0, 0.0);
                for (t_joints, s_joints) in &leg_chains {
                    lt += path(&t_ref, t_joints) + clearance.1;
                    ls += path(&s_ref, s_joints) + clearance.0;
                }
                let s = lt / ls;
                if s.is_finite() && s > 0.0 {
                    s
                } else {
                    warnings.push(format!("{}: the leg chains give no length (target {lt}, source {ls}); using scale 1", profile.file));
                    1.0
                }
            }
        };

        let mut feet = Vec::new();
        let mut legs = Vec::new();
        for foot in &profile.feet {
            let s = find(src, &foot.source)
                .ok_or_else(|| err(foot.line, "feet", unknown("source", &foot.source, src)))?;
            let t = find(tgt, &foot.target)
                .ok_or_else(|| err(foot.line, "feet", unknown("target", &foot.target, tgt)))?;
            feet.push((s, t));
            if !foot.ik {
                continue;
            }
            let chain = chains
                .iter()
                .map(|(_, t_joints, _)| t_joints)
                .find(|j| j.last() == Some(&t));
            let leg = match chain.map(|j| j.as_slice()) {
                Some([.., thigh, calf, foot_joint]) => Leg {
                    thigh: *thigh,
                    calf: *calf,
                    foot: *foot_joint,
                    source_foot: s,
                    watch: Vec::new(),
                },
                _ => {
                    return Err(err(
                        foot.line,
                        "feet",
                        format!(
                            "ik needs a chain of at least three joints ending at '{}'",
                            foot.target
                        ),
                    ))
                }
            };
            let follows_calf = follow
                .iter()
                .any(|&(f, o, _)| f == leg.foot && o == leg.calf);
            if parent(tgt, leg.calf) != Some(leg.thigh)
                || !(parent(tgt, leg.foot) == Some(leg.calf) || follows_calf)
            {
                let reason = format!("ik needs '{}' under the joint before it and '{}' under (or following) that one", tgt.names[leg.calf], foot.target);
                return Err(err(foot.line, "feet", reason));
            }
            legs.push(leg);
        }
        for leg in &mut legs {
            let on_foot = |t: usize| (leg.foot..tgt.subtree_end[leg.foot] as usize).contains(&t);
            leg.watch = feet
                .iter()
                .filter(|&&(_, t)| on_foot(t))
                .map(|&(s, _)| s)
                .collect();
        }

        Ok(Binding {
            source_of,
            next,
            carry,
            bone_local,
            rest_rotation,
            twists,
            follow,
            facing,
            scale,
            policy: profile.translation.policy,
            translation_joint: (translation_t, translation_s),
            reference_position: (s_ref.position(translation_s), t_ref.position(translation_t)),
            floors: (profile.source.floor, profile.target.floor),
            clearance,
            leg_roots,
            chains,
            feet,
            legs,
            warnings,
        })
    }

    /// Retargets one source local pose onto the target: `target_local` gets every joint's local
    /// transform (rest scale everywhere).
    /// `plant`: per IK leg of the profile, how far (0 to 1) its foot reaches for the source's
    /// ([`Binding::plant_weights`]); missing entries count as 0.
    pub fn pose(
        &self,
        source: &Skeleton,
        source_local: &[Trs],
        target: &Skeleton,
        target_local: &mut [Trs],
        plant: &[f64],
        scratch: &mut Scratch,
    ) {
        scratch.source.compute(source, source_local);
        let s = &scratch.source;
        let t = &mut scratch.target;
        let n = target.joint_count();
        t.affine.resize(n, DAffine3::IDENTITY);
        t.rotation.resize(n, DQuat::IDENTITY);
        let root = target.root_transform.as_daffine3();
        let root_rotation = root.to_scale_rotation_translation().1;
        let tj = self.translation_joint.0;
        for j in 0..n {
            let (pa, pq) = match parent(target, j) {
                Some(p) => (t.affine[p], t.rotation[p]),
                None => (root, root_rotation),
            };
            let rest = &target.rest[j];
            let mut rotation = self.rest_rotation[j];
            let mut translation = rest.translation.as_dvec3();
            let src = self.source_of[j];
            if src != NONE {
                let src = src as usize;
                let mut goal = self.facing * s.rotation[src] * self.carry[j];
                let (_, sn) = self.next[j];
                if sn != NONE {
                    let want = self.facing * (s.position(sn as usize) - s.position(src));
                    goal = arc(goal * self.bone_local[j], want) * goal;
                }
                rotation = (pq.inverse() * goal).normalize();
                if self.policy == TranslationPolicy::All && j != tj {
                    translation = source_local[src].translation.as_dvec3() * self.scale;
                }
            }
            if j == tj && self.policy != TranslationPolicy::None {
                let position = self.hips(s, pq * rotation);
                translation = pa.inverse().transform_point3(position);
            }
            if let Some(&(_, previous, fraction, axis, reference)) =
                self.twists.iter().find(|tw| tw.0 == j)
            {
                let roll = twist(rotation * reference.inverse(), axis);
                let moved = DQuat::IDENTITY.slerp(roll, fraction);
                let mut before = target_local[previous];
                before.rotation = (before.rotation.as_dquat() * moved).normalize().as_quat();
                t.rotation[previous] = (t.rotation[previous] * moved).normalize();
                let grand = parent(target, previous).map_or(root, |g| t.affine[g]);
                t.affine[previous] = grand * affine(&before);
                target_local[previous] = before;
                rotation = (moved.inverse() * rotation).normalize();
                let (pa, pq) = (t.affine[previous], t.rotation[previous]);
                store(j, rest, rotation, translation, (pa, pq), t, target_local);
                continue;
            }
            store(j, rest, rotation, translation, (pa, pq), t, target_local);
        }
        self.follow_pass(target, t, target_local);
        if !self.legs.is_empty() {
            for (leg, &weight) in self.legs.iter().zip(plant) {
                if weight > 0.0 {
                    self.reach(leg, weight, s, target, t, target_local);
                }
            }
            self.follow_pass(target, t, target_local);
        }
    }

    /// Places every follower at its reference offset from the joint it follows.
    fn follow_pass(&self, target: &Skeleton, t: &mut ScenePose, target_local: &mut [Trs]) {
        for &(f, o, offset) in &self.follow {
            let at = t.affine[o].transform_point3(offset);
            let pa = parent_frame(target, t, f).0;
            target_local[f].translation = pa.inverse().transform_point3(at).as_vec3();
            refresh(target, f, t, target_local);
        }
    }

    /// Per IK leg, per time of `times`: 1 while the source foot or its toe (the `[[feet]]` on
    /// it) is in contact (the report's detector, [`report::contact_runs`]), easing to 0 over
    /// [`PLANT_EASE_S`] either side.
    pub fn plant_weights(
        &self,
        source: &Skeleton,
        motion: &Motion,
        times: &[f64],
    ) -> Vec<Vec<f64>> {
        if self.legs.is_empty() {
            return Vec::new();
        }
        let mut local = source.rest.clone();
        let mut pose = ScenePose::default();
        let watched: Vec<usize> = self.legs.iter().flat_map(|l| l.watch.clone()).collect();
        let mut paths = vec![Vec::with_capacity(times.len()); watched.len()];
        for &time in times {
            motion.sample(source, time, &mut local);
            pose.compute(source, &local);
            for (&joint, path) in watched.iter().zip(&mut paths) {
                path.push(pose.position(joint));
            }
        }
        self.legs
            .iter()
            .map(|leg| {
                let runs: Vec<_> = watched
                    .iter()
                    .zip(&paths)
                    .filter(|(j, _)| leg.watch.contains(j))
                    .flat_map(|(_, path)| report::contact_runs(path, times))
                    .collect();
                times
                    .iter()
                    .map(|&t| {
                        let gap = |r: &std::ops::Range<usize>| {
                            (times[r.start] - t).max(t - times[r.end - 1]).max(0.0)
                        };
                        let nearest = runs.iter().map(gap).fold(f64::INFINITY, f64::min);
                        let x = (1.0 - nearest / PLANT_EASE_S).clamp(0.0, 1.0);
                        x * x * (3.0 - 2.0 * x)
                    })
                    .collect()
            })
            .collect()
    }

    /// Two-bone IK of `leg` (at `weight`) toward the source foot's position: horizontally relative to the
    /// hips, turned and scaled; vertically its height above the floor, scaled (relative to the
    /// hips too when the hips keep their height). The bend plane is kept (law of cosines, as `throng_cpu_ref::ik::solve_two_bone`,
    /// for a foot that may follow the calf instead of hanging under it). The foot keeps its
    /// scene rotation.
    fn reach(
        &self,
        leg: &Leg,
        weight: f64,
        source: &ScenePose,
        target: &Skeleton,
        t: &mut ScenePose,
        target_local: &mut [Trs],
    ) {
        let (tj, sj) = self.translation_joint;
        let foot = source.position(leg.source_foot);
        let mut goal = t.position(tj) + self.facing * (foot - source.position(sj)) * self.scale;
        if self.policy == TranslationPolicy::RootPelvisHeight
            || self.policy == TranslationPolicy::All
        {
            let (s_clear, t_clear) = self.clearance;
            goal.y = self.floors.1 + t_clear + (foot.y - self.floors.0 - s_clear) * self.scale;
        }
        let (h, k, a) = (
            t.position(leg.thigh),
            t.position(leg.calf),
            t.position(leg.foot),
        );
        let (l1, l2) = ((k - h).length(), (a - k).length());
        let to = goal - h;
        let d = to.length();
        let tiny = 1e-9 * (l1 + l2).max(1e-12);
        if l1 <= tiny || l2 <= tiny || d <= tiny {
            return;
        }
        let dir = to / d;
        let reach = d.clamp((l1 - l2).abs(), l1 + l2);
        let bend = ((k - h) - dir * (k - h).dot(dir))
            .try_normalize()
            .unwrap_or_else(|| dir.any_orthonormal_vector());
        let cos = ((l1 * l1 + reach * reach - l2 * l2) / (2.0 * l1 * reach)).clamp(-1.0, 1.0);
        let knee = h + l1 * (dir * cos + bend * (1.0 - cos * cos).max(0.0).sqrt());
        let thigh_turn = arc(k - h, knee - h);
        let calf_turn = arc(thigh_turn * (a - k), h + dir * reach - knee);
        let (thigh_turn, calf_turn) = (
            DQuat::IDENTITY.slerp(thigh_turn, weight),
            DQuat::IDENTITY.slerp(calf_turn, weight),
        );
        let foot_rotation = t.rotation[leg.foot];
        for (joint, turn) in [(leg.thigh, thigh_turn), (leg.calf, calf_turn * thigh_turn)] {
            let goal = turn * t.rotation[joint];
            let pq = parent_frame(target, t, joint).1;
            target_local[joint].rotation = (pq.inverse() * goal).normalize().as_quat();
            t.rotation[joint] = goal;
        }
        if parent(target, leg.foot) == Some(leg.calf) {
            let local = t.rotation[leg.calf].inverse() * foot_rotation;
            target_local[leg.foot].rotation = local.normalize().as_quat();
        }
        refresh(target, leg.thigh, t, target_local);
    }

    /// Scene position of the target's translation joint for the source's at `source`.
    /// `rotation`: the joint's scene rotation, already retargeted. With leg roots, the height
    /// puts them (on average) at the source's leg-root height above its floor, scaled, so legs
    /// of different hip placement reach the ground alike; without, the joint's own height.
    fn hips(&self, source: &ScenePose, rotation: DQuat) -> DVec3 {
        let (s_ref, t_ref) = self.reference_position;
        let (s_floor, t_floor) = self.floors;
        let sj = self.translation_joint.1;
        let moved = self.facing * (source.position(sj) - s_ref) * self.scale;
        let lift = |s_y: f64| t_floor + (s_y - s_floor) * self.scale;
        let height = match self.policy {
            TranslationPolicy::Root => t_ref.y,
            _ if self.leg_roots.is_empty() => lift(source.position(sj).y),
            _ => {
                let sum: f64 = self
                    .leg_roots
                    .iter()
                    .map(|&(s, offset)| lift(source.position(s).y) - (rotation * offset).y)
                    .sum();
                sum / self.leg_roots.len() as f64
            }
        };
        DVec3::new(t_ref.x + moved.x, height, t_ref.z + moved.z)
    }
}

/// The lowest height above `floor` that the source joints of `ends` reach over every source
/// clip (0 without clips).
fn source_clearance(source: &Source, ends: &[(usize, usize)], floor: f64) -> f64 {
    let Ok(skeleton) = source.skeleton() else {
        return 0.0;
    };
    let mut local = skeleton.rest.clone();
    let mut pose = ScenePose::default();
    let mut lowest = f64::INFINITY;
    for (motion, _) in &source.clips {
        for time in motion.times() {
            motion.sample(skeleton, time, &mut local);
            pose.compute(skeleton, &local);
            for &(_, s) in ends {
                lowest = lowest.min(pose.position(s).y - floor);
            }
        }
    }
    if lowest.is_finite() {
        lowest
    } else {
        0.0
    }
}

/// The bind pose of a package's first skeleton in scene space: joints in its first skin take
/// the inverse of their inverse bind matrix, the rest compose their rest local under the parent.
fn bind_pose(package: &Package, file: &str) -> Result<ScenePose, RetargetError> {
    let skeleton = &package.skeletons[0];
    let skin = package
        .skins
        .iter()
        .find(|s| s.skeleton == 0)
        .ok_or_else(|| RetargetError::Source {
            file: file.to_string(),
            reason: "has no skin on its first skeleton, so no bind pose; use reference = \"rest\""
                .into(),
        })?;
    let n = skeleton.joint_count();
    let root = skeleton.root_transform.as_daffine3();
    let mut bound: Vec<Option<DAffine3>> = vec![None; n];
    for (&j, ibm) in skin.joints.iter().zip(&skin.inverse_bind) {
        if let Some(b) = bound.get_mut(j as usize) {
            *b = Some(root * ibm.as_daffine3().inverse());
        }
    }
    let mut pose = ScenePose {
        affine: vec![DAffine3::IDENTITY; n],
        rotation: vec![DQuat::IDENTITY; n],
    };
    for (j, b) in bound.iter().enumerate() {
        let parent_affine = parent(skeleton, j).map_or(root, |p| pose.affine[p]);
        pose.affine[j] = b.unwrap_or_else(|| parent_affine * affine(&skeleton.rest[j]));
        pose.rotation[j] = pose.affine[j].to_scale_rotation_translation().1.normalize();
    }
    Ok(pose)
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
    let weights = binding.plant_weights(source, motion, &times);
    let mut plant = vec![0.0; weights.len()];
    for (i, &time) in times.iter().enumerate() {
        for (p, w) in plant.iter_mut().zip(&weights) {
            *p = w[i];
        }
        motion.sample(source, time, &mut source_local);
        binding.pose(
            source,
            &source_local,
            target,
            &mut target_local,
            &plant,
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
        });
    }
    out.warnings.extend(binding.warnings.iter().cloned());
    Ok((out, binding))
}
