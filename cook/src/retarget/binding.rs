//! A profile resolved against the source's and target's first skeletons ([`Binding::new`]):
//! every name an index, every constant of the module doc of [`super`] precomputed, each
//! resolution step its own function. Errors name the profile's line and key and list the joints
//! a skeleton has.

use glam::{DAffine3, DQuat, DVec3};
use throng_cpu_ref::{Package, Skeleton};

use super::profile::{self, Reference, RetargetProfile, Scale};
use super::scene::{affine, arc, parent, ScenePose};
use super::{Motion, RetargetError, Source, TranslationPolicy};
use crate::Imported;

/// No joint.
pub(super) const NONE: u32 = u32::MAX;

/// A profile resolved against a source and a target skeleton: every name an index, every
/// constant precomputed. [`Binding::pose`] retargets one pose.
#[derive(Clone, Debug)]
pub struct Binding {
    /// Per target joint: the source joint driving it, or `NONE`.
    pub(super) source_of: Vec<u32>,
    /// Per target joint: the next joint of its chain (target, source), or `NONE`s.
    pub(super) next: Vec<(u32, u32)>,
    /// Per target joint: the carry rotation `C`.
    pub(super) carry: Vec<DQuat>,
    /// Per target joint: its bone direction in its own frame at the reference (unit or zero).
    pub(super) bone_local: Vec<DVec3>,
    /// Per target joint: the local rotation an unmapped joint keeps.
    pub(super) rest_rotation: Vec<DQuat>,
    pub(super) twists: Vec<Twist>,
    /// (follower, followed, offset in the followed joint's reference frame).
    pub(super) follow: Vec<(usize, usize, DVec3)>,
    pub facing: DQuat,
    pub scale: f64,
    pub policy: TranslationPolicy,
    /// Translation joint on the target and its source.
    pub translation_joint: (usize, usize),
    /// Reference scene positions of the translation joint (source, target).
    pub(super) reference_position: (DVec3, DVec3),
    pub(super) floors: (f64, f64),
    /// First joint of each leg chain: (source joint, the target's offset from the translation
    /// joint in that joint's reference frame).
    pub(super) leg_roots: Vec<(usize, DVec3)>,
    /// Height of the leg chains' last joints (ankles) above the floor when planted: the lowest
    /// the source's come over its clips, and the target's at its reference (source, target).
    pub(super) clearance: (f64, f64),
    /// Chains by name: (target joints, source joints).
    pub chains: Vec<(String, Vec<usize>, Vec<usize>)>,
    /// Feet: (source joint, target joint).
    pub feet: Vec<(usize, usize)>,
    /// Legs whose foot reaches the source's by IK.
    pub(super) legs: Vec<Leg>,
    pub warnings: Vec<String>,
}

/// A two-bone leg of the target and the source foot it reaches for.
#[derive(Clone, Debug)]
pub(super) struct Leg {
    pub(super) thigh: usize,
    pub(super) calf: usize,
    pub(super) foot: usize,
    pub(super) source_foot: usize,
    /// Source joints of the `[[feet]]` entries on this foot (itself, its toe): the foot is
    /// planted while any of them is in contact.
    pub(super) watch: Vec<usize>,
    /// IK reaches the floor height too, not only the planted ground-plane position.
    pub(super) height: bool,
}

/// A chain's twist share: part of its last joint's roll moved onto the joint before it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Twist {
    pub(super) last: usize,
    pub(super) previous: usize,
    pub(super) fraction: f64,
    /// The bone from `previous` to `last`, in `previous`'s frame (unit).
    pub(super) axis: DVec3,
    /// `last`'s local rotation at the reference.
    pub(super) reference: DQuat,
}

/// The `[[feet]]` (source, target) and the legs planted by IK.
type Feet = (Vec<(usize, usize)>, Vec<Leg>);

/// Chains resolved to joints: per target joint its source and the next joint of its chain.
struct Mapping {
    source_of: Vec<u32>,
    next: Vec<(u32, u32)>,
    chains: Vec<(String, Vec<usize>, Vec<usize>)>,
}

/// Target joints of the `legs` chains (target, source), each chain root first.
type LegChains = Vec<(Vec<usize>, Vec<usize>)>;

/// Name lookups and errors against the two skeletons.
struct Resolver<'a> {
    file: &'a str,
    src: &'a Skeleton,
    tgt: &'a Skeleton,
}

impl Resolver<'_> {
    fn err(&self, line: usize, key: &str, reason: String) -> RetargetError {
        RetargetError::Profile {
            file: self.file.to_string(),
            line,
            key: key.to_string(),
            reason,
        }
    }

    /// The first of the `|`-separated `names` that `skeleton` has.
    fn find(skeleton: &Skeleton, names: &str) -> Option<usize> {
        names
            .split('|')
            .find_map(|n| skeleton.names.iter().position(|m| m == n.trim()))
    }

    fn joint(
        &self,
        source: bool,
        names: &str,
        line: usize,
        key: &str,
    ) -> Result<usize, RetargetError> {
        let (side, skeleton) = if source {
            ("source", self.src)
        } else {
            ("target", self.tgt)
        };
        Self::find(skeleton, names).ok_or_else(|| {
            let reason = format!(
                "{side} joint '{names}' is not in the {side} skeleton (it has: {})",
                skeleton.names.join(", ")
            );
            self.err(line, key, reason)
        })
    }

    fn target(&self, names: &str, line: usize, key: &str) -> Result<usize, RetargetError> {
        self.joint(false, names, line, key)
    }

    fn source(&self, names: &str, line: usize, key: &str) -> Result<usize, RetargetError> {
        self.joint(true, names, line, key)
    }

    /// Every chain's joints; each joint's next is the next of its chain, and a chain's last
    /// points at the first joint of the one chain that continues from it (a chain starting at
    /// its child): the foot at the toe, the hand at the fingers.
    fn chains(&self, profile: &RetargetProfile) -> Result<Mapping, RetargetError> {
        let n = self.tgt.joint_count();
        let mut source_of = vec![NONE; n];
        let mut next = vec![(NONE, NONE); n];
        let mut chains = Vec::new();
        for c in &profile.chains {
            let key = format!("chains ({})", c.name);
            let mut t_joints = Vec::new();
            let mut s_joints = Vec::new();
            for (s_name, t_name) in c.source.iter().zip(&c.target) {
                let s = self.source(s_name, c.line, &key)?;
                let t = self.target(t_name, c.line, &key)?;
                if source_of[t] != NONE {
                    let reason = format!("target joint '{t_name}' is mapped twice");
                    return Err(self.err(c.line, &key, reason));
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
        for (_, t_joints, _) in &chains {
            let last = t_joints[t_joints.len() - 1];
            let mut continuing = chains
                .iter()
                .filter(|(_, t, _)| parent(self.tgt, t[0]) == Some(last));
            if let (Some((_, t, s)), None) = (continuing.next(), continuing.next()) {
                next[last] = (t[0] as u32, s[0] as u32);
            }
        }
        Ok(Mapping {
            source_of,
            next,
            chains,
        })
    }

    /// Each unmapped joint's local rotation: its rest, or the profile's default.
    fn defaults(
        &self,
        profile: &RetargetProfile,
        map: &Mapping,
    ) -> Result<Vec<DQuat>, RetargetError> {
        let mut rotation: Vec<DQuat> = self
            .tgt
            .rest
            .iter()
            .map(|r| r.rotation.as_dquat())
            .collect();
        for (joint, q) in &profile.defaults {
            let t = self.target(&joint.value, joint.line, "defaults")?;
            if map.source_of[t] != NONE {
                let reason = format!(
                    "'{}' is mapped by a chain; a default is for an unmapped joint",
                    joint.value
                );
                return Err(self.err(joint.line, "defaults", reason));
            }
            rotation[t] = DQuat::from_array(*q);
        }
        Ok(rotation)
    }

    /// The twist share of every chain that has one.
    fn twists(
        &self,
        profile: &RetargetProfile,
        map: &Mapping,
        t_ref: &ScenePose,
    ) -> Result<Vec<Twist>, RetargetError> {
        let mut twists = Vec::new();
        for (c, (_, t_joints, _)) in profile.chains.iter().zip(&map.chains) {
            if c.twist == 0.0 {
                continue;
            }
            let key = format!("chains ({})", c.name);
            let (last, previous) = match t_joints.as_slice() {
                [.., p, l] if parent(self.tgt, *l) == Some(*p) => (*l, *p),
                _ => {
                    let reason = "twist needs a chain whose last two target joints are parent \
                                  and child";
                    return Err(self.err(c.line, &key, reason.into()));
                }
            };
            let axis = self.tgt.rest[last]
                .translation
                .as_dvec3()
                .normalize_or_zero();
            if axis == DVec3::ZERO {
                let reason = "twist needs the last joint away from its parent (a bone to twist \
                              about)";
                return Err(self.err(c.line, &key, reason.into()));
            }
            let reference = (t_ref.rotation[previous].inverse() * t_ref.rotation[last]).normalize();
            twists.push(Twist {
                last,
                previous,
                fraction: c.twist,
                axis,
                reference,
            });
        }
        Ok(twists)
    }

    /// (follower, followed, offset in the followed joint's reference frame) of each follower.
    fn followers(
        &self,
        profile: &RetargetProfile,
        t_ref: &ScenePose,
    ) -> Result<Vec<(usize, usize, DVec3)>, RetargetError> {
        let tgt = self.tgt;
        let inside = |j: usize, root: usize| (root..tgt.subtree_end[root] as usize).contains(&j);
        let mut follow: Vec<(usize, usize, DVec3)> = Vec::new();
        for (joint, of) in &profile.follow {
            let f = self.target(&joint.value, joint.line, "follow")?;
            let o = self.target(of, joint.line, "follow")?;
            if inside(o, f) {
                let reason = format!(
                    "'{}' cannot follow '{of}', which lies in its own subtree",
                    joint.value
                );
                return Err(self.err(joint.line, "follow", reason));
            }
            let nested = follow.iter().any(|&(g, p, _)| {
                g == f || (inside(f, g) && inside(o, g)) || (inside(g, f) && inside(p, f))
            });
            if nested {
                let reason = "a follower may not lie under another follower or follow twice";
                return Err(self.err(joint.line, "follow", reason.into()));
            }
            let offset = t_ref.affine[o]
                .inverse()
                .transform_point3(t_ref.position(f));
            follow.push((f, o, offset));
        }
        Ok(follow)
    }

    /// The target's translation joint and its source.
    fn translation_joint(
        &self,
        profile: &RetargetProfile,
        map: &Mapping,
    ) -> Result<(usize, usize), RetargetError> {
        let tj = &profile.translation.joint;
        let t = self.target(&tj.value, tj.line, "translation.joint")?;
        match map.source_of[t] {
            NONE => {
                let reason = format!(
                    "'{}' is in no chain: the translation joint needs a source joint",
                    tj.value
                );
                Err(self.err(tj.line, "translation.joint", reason))
            }
            s => Ok((t, s as usize)),
        }
    }

    fn leg_chains(
        &self,
        profile: &RetargetProfile,
        map: &Mapping,
    ) -> Result<LegChains, RetargetError> {
        let mut legs = Vec::new();
        for leg in &profile.translation.legs {
            let (_, t, s) = map
                .chains
                .iter()
                .find(|(name, ..)| *name == leg.value)
                .ok_or_else(|| {
                    let reason = format!("no chain is named '{}'", leg.value);
                    self.err(leg.line, "translation.legs", reason)
                })?;
            legs.push((t.clone(), s.clone()));
        }
        Ok(legs)
    }

    /// The `[[feet]]` (source, target) and the legs planted by IK.
    fn feet(
        &self,
        profile: &RetargetProfile,
        map: &Mapping,
        follow: &[(usize, usize, DVec3)],
    ) -> Result<Feet, RetargetError> {
        let tgt = self.tgt;
        let mut feet = Vec::new();
        let mut legs = Vec::new();
        for foot in &profile.feet {
            let s = self.source(&foot.source, foot.line, "feet")?;
            let t = self.target(&foot.target, foot.line, "feet")?;
            feet.push((s, t));
            if !foot.ik {
                continue;
            }
            let chain = map
                .chains
                .iter()
                .map(|(_, j, _)| j)
                .find(|j| j.last() == Some(&t));
            let Some([.., thigh, calf, _]) = chain.map(|j| j.as_slice()) else {
                let reason = format!(
                    "ik needs a chain of at least three joints ending at '{}'",
                    foot.target
                );
                return Err(self.err(foot.line, "feet", reason));
            };
            let leg = Leg {
                thigh: *thigh,
                calf: *calf,
                foot: t,
                source_foot: s,
                watch: Vec::new(),
                height: foot.height,
            };
            let follows_calf = follow
                .iter()
                .any(|&(f, o, _)| f == leg.foot && o == leg.calf);
            if parent(tgt, leg.calf) != Some(leg.thigh)
                || !(parent(tgt, leg.foot) == Some(leg.calf) || follows_calf)
            {
                let reason = format!(
                    "ik needs '{}' under the joint before it and '{}' under (or following) that one",
                    tgt.names[leg.calf], foot.target
                );
                return Err(self.err(foot.line, "feet", reason));
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
        Ok((feet, legs))
    }
}

/// The scene pose of one side's reference: rest, bind, or a frame of one of its clips.
fn reference_pose(
    side: &profile::Side,
    package: &Package,
    clip: Option<Motion>,
    file: &str,
) -> Result<ScenePose, RetargetError> {
    let skeleton = &package.skeletons[0];
    let mut local = skeleton.rest.clone();
    match &side.reference {
        Reference::Rest => {}
        Reference::Clip { name, time } => {
            let motion = clip.ok_or_else(|| RetargetError::Source {
                file: file.to_string(),
                reason: format!(
                    "has no clip '{name}' on its first skeleton for the profile's reference pose"
                ),
            })?;
            motion.sample(skeleton, *time, &mut local);
        }
        Reference::Bind => return bind_pose(package, file),
    }
    let mut pose = ScenePose::default();
    pose.compute(skeleton, &local);
    Ok(pose)
}

/// Per target joint: the carry rotation `C` and its bone direction in its own reference frame.
fn carry_rotations(
    map: &Mapping,
    s_ref: &ScenePose,
    t_ref: &ScenePose,
    facing: DQuat,
) -> (Vec<DQuat>, Vec<DVec3>) {
    let n = map.source_of.len();
    let mut carry = vec![DQuat::IDENTITY; n];
    let mut bone_local = vec![DVec3::ZERO; n];
    for t in 0..n {
        let s = map.source_of[t];
        if s == NONE {
            continue;
        }
        let s = s as usize;
        let (tn, sn) = map.next[t];
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
    (carry, bone_local)
}

/// The translation scale ([`Scale`]); a non-finite or non-positive one is 1 with a warning.
fn scale(
    profile: &RetargetProfile,
    legs: &LegChains,
    (s_ref, t_ref): (&ScenePose, &ScenePose),
    clearance: (f64, f64),
    warnings: &mut Vec<String>,
) -> f64 {
    let (scale, why) = match &profile.translation.scale {
        Scale::Fixed(x) => (
            *x,
            format!("translation scale {x} is not a finite positive number"),
        ),
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
            for (t_joints, s_joints) in legs {
                lt += path(t_ref, t_joints) + clearance.1;
                ls += path(s_ref, s_joints) + clearance.0;
            }
            (
                lt / ls,
                format!("the leg chains give no length (target {lt}, source {ls})"),
            )
        }
    };
    if scale.is_finite() && scale > 0.0 {
        scale
    } else {
        warnings.push(format!("{}: {why}; using 1", profile.file));
        1.0
    }
}

impl Binding {
    /// Resolves `profile` against the source's and the target's first skeletons. A clip
    /// reference names one of that side's clips. Errors name the profile line.
    pub fn new(
        profile: &RetargetProfile,
        source: &Source,
        target: &Imported,
    ) -> Result<Binding, RetargetError> {
        let src = source.skeleton()?;
        let tgt = target
            .package
            .skeletons
            .first()
            .ok_or_else(|| RetargetError::Source {
                file: target.source.clone(),
                reason: "has no skeleton".into(),
            })?;
        let r = Resolver {
            file: &profile.file,
            src,
            tgt,
        };
        let map = r.chains(profile)?;
        let clip_named = |side: &profile::Side| match &side.reference {
            Reference::Clip { name, .. } => Some(name.clone()),
            _ => None,
        };
        let source_clip = clip_named(&profile.source).and_then(|name| {
            (source.clips.iter().map(|(m, _)| m))
                .find(|m| m.name() == name)
                .cloned()
        });
        let target_clip = clip_named(&profile.target).and_then(|name| {
            (target.source_clips.iter())
                .find(|c| c.skeleton == 0 && c.name == name)
                .cloned()
                .map(Motion::Curves)
        });
        let s_ref = reference_pose(&profile.source, &source.package, source_clip, &source.file)?;
        let t_ref = reference_pose(
            &profile.target,
            &target.package,
            target_clip,
            &target.source,
        )?;

        let yaw = |f: [f64; 3]| f[0].atan2(f[2]);
        let facing =
            DQuat::from_rotation_y(yaw(profile.target.forward) - yaw(profile.source.forward));
        let (carry, bone_local) = carry_rotations(&map, &s_ref, &t_ref, facing);
        let rest_rotation = r.defaults(profile, &map)?;
        let twists = r.twists(profile, &map, &t_ref)?;
        let follow = r.followers(profile, &t_ref)?;
        let (translation_t, translation_s) = r.translation_joint(profile, &map)?;

        let leg_chains = r.leg_chains(profile, &map)?;
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
        let scale = scale(
            profile,
            &leg_chains,
            (&s_ref, &t_ref),
            clearance,
            &mut warnings,
        );
        let (feet, legs) = r.feet(profile, &map, &follow)?;

        Ok(Binding {
            source_of: map.source_of,
            next: map.next,
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
            chains: map.chains,
            feet,
            legs,
            warnings,
        })
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
