//! One pose retargeted ([`Binding::pose`]): goal rotations, translation, twist, followers and
//! planted feet, in the order the module doc of [`super`] gives.

use std::ops::Range;

use glam::{DAffine3, DMat3, DQuat, DVec3};
use throng_cpu_ref::{Skeleton, Trs};

use super::binding::{Leg, Twist, NONE};
use super::report;
use super::scene::{affine, arc, parent, parent_frame, refresh, store, twist, ScenePose};
use super::{Binding, Motion, TranslationPolicy};

/// How long a planted foot's IK eases in before a contact and out after it, seconds.
pub const PLANT_EASE_S: f64 = 0.1;

/// How fast the hips' twist ([`Shift::twist`]) returns to the source's turn where the feet
/// leave it free (single support, no contact): its time constant, seconds.
pub const TWIST_RELAX_S: f64 = 0.5;

/// How strongly the hips' twist keeps its course against the planted feet, as a length: the
/// fraction of the leg roots' mean ground-plane distance from the translation joint that one
/// radian of twist counts for against a foot's drift.
const TWIST_STIFFNESS: f64 = 0.1;

/// One IK leg's plant at one time: how far (0 to 1) its foot reaches for its goal, and the
/// ground-plane offset (target scene space; y is 0) added to the source foot's position to make
/// that goal.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Plant {
    pub weight: f64,
    pub offset: DVec3,
}

/// How the translation joint moves off the source's at one time to keep the planted feet in
/// place ([`Binding::plants`]). Neither turns a bone: the offset moves the joint, the twist turns
/// it about its own bone (the legs keep their scene rotations, so only their roots move).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Shift {
    /// Target scene space.
    pub offset: DVec3,
    /// Radians, about the joint's bone (to the next joint of its chain; +Y without one).
    pub twist: f64,
}

/// Per time of a clip: each IK leg's [`Plant`] and the translation joint's [`Shift`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// Per IK leg of the profile, per time.
    pub legs: Vec<Vec<Plant>>,
    /// Per time.
    pub hips: Vec<Shift>,
}

/// Reusable per-pose buffers of [`Binding::pose`].
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    source: ScenePose,
    target: ScenePose,
}

impl Binding {
    /// Retargets one source local pose onto the target: `target_local` gets every joint's local
    /// transform (rest scale everywhere).
    /// `plant`: per IK leg of the profile, how far its foot reaches for the source's, offset;
    /// missing entries do not plant. `hips`: the translation joint's shift ([`Binding::plants`]
    /// gives both).
    pub fn pose(
        &self,
        source: &Skeleton,
        source_local: &[Trs],
        target: &Skeleton,
        target_local: &mut [Trs],
        (plant, hips): (&[Plant], Shift),
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
                if j == tj && hips.twist != 0.0 {
                    let axis = (goal * self.bone_local[j])
                        .try_normalize()
                        .unwrap_or(DVec3::Y);
                    goal = DQuat::from_axis_angle(axis, hips.twist) * goal;
                }
                rotation = (pq.inverse() * goal).normalize();
                if self.policy == TranslationPolicy::All && j != tj {
                    translation = source_local[src].translation.as_dvec3() * self.scale;
                }
            }
            if j == tj && self.policy != TranslationPolicy::None {
                let position = self.hips(s, pq * rotation) + hips.offset;
                translation = pa.inverse().transform_point3(position);
            }
            if let Some(&Twist {
                previous,
                fraction,
                axis,
                reference,
                ..
            }) = self.twists.iter().find(|tw| tw.last == j)
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
            for (leg, plant) in self.legs.iter().zip(plant) {
                if plant.weight > 0.0 {
                    let mut goal = self.foot_goal(leg, s, t) + plant.offset;
                    if !leg.height {
                        goal.y = t.position(leg.foot).y;
                    }
                    self.reach(leg, plant.weight, goal, target, t, target_local);
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

    /// The plan of every time of `times`: per IK leg its [`Plant`], and the translation joint's
    /// [`Shift`].
    ///
    /// A leg's weight is 1 while the source foot or its toe (the `[[feet]]` on it) is in contact
    /// (the report's detector, [`report::contact_runs`]), easing to 0 over [`PLANT_EASE_S`]
    /// either side. A first pass poses the clip without IK and takes, per leg and time, `D`:
    /// the target's own foot less the source foot's goal. The two rigs' legs swing their feet
    /// alike in direction, not in length, so while a foot is planted its `D` drifts on the
    /// ground plane: the hips' shift takes that drift out (`follow`), so the legs keep
    /// the source's bone directions. IK then reaches, per contact, for the source foot's goal
    /// plus where the shift put the target's foot on the contact's first frame: it only takes
    /// out what the shift could not (the feet's drift against each other in double support,
    /// and the floor height the lift leaves; a foot whose `height` is off reaches on the ground
    /// plane only).
    pub fn plants(
        &self,
        source: &Skeleton,
        motion: &Motion,
        target: &Skeleton,
        times: &[f64],
    ) -> Plan {
        let n = times.len();
        if self.legs.is_empty() {
            return Plan {
                legs: Vec::new(),
                hips: vec![Shift::default(); n],
            };
        }
        let mut source_local = source.rest.clone();
        let mut target_local = target.rest.clone();
        let mut scratch = Scratch::default();
        let watched: Vec<usize> = self.legs.iter().flat_map(|l| l.watch.clone()).collect();
        let mut paths = vec![Vec::with_capacity(n); watched.len()];
        let tj = self.translation_joint.0;
        let mut free = Free {
            apart: vec![Vec::with_capacity(n); self.legs.len()],
            roots: vec![Vec::with_capacity(n); self.legs.len()],
            axes: Vec::with_capacity(n),
        };
        for &time in times {
            motion.sample(source, time, &mut source_local);
            self.pose(
                source,
                &source_local,
                target,
                &mut target_local,
                (&[], Shift::default()),
                &mut scratch,
            );
            let (s, t) = (&scratch.source, &scratch.target);
            for (&joint, path) in watched.iter().zip(&mut paths) {
                path.push(s.position(joint));
            }
            for (k, leg) in self.legs.iter().enumerate() {
                free.apart[k].push(t.position(leg.foot) - self.foot_goal(leg, s, t));
                free.roots[k].push(t.position(leg.thigh) - t.position(tj));
            }
            let axis = t.rotation[tj] * self.bone_local[tj];
            free.axes.push(axis.try_normalize().unwrap_or(DVec3::Y));
        }
        // Per leg and time: the weight and the contact nearest.
        let contacts: Vec<Vec<Contact>> = self
            .legs
            .iter()
            .map(|leg| {
                let runs: Vec<_> = watched
                    .iter()
                    .zip(&paths)
                    .filter(|(j, _)| leg.watch.contains(j))
                    .flat_map(|(_, path)| report::contact_runs(path, times))
                    .collect();
                let runs = merged(runs);
                times
                    .iter()
                    .map(|&t| {
                        let gap = |r: &Range<usize>| {
                            (times[r.start] - t).max(t - times[r.end - 1]).max(0.0)
                        };
                        let Some((gap, run)) = runs
                            .iter()
                            .map(|r| (gap(r), r))
                            .min_by(|a, b| a.0.total_cmp(&b.0))
                        else {
                            return (0.0, None);
                        };
                        let x = (1.0 - gap / PLANT_EASE_S).clamp(0.0, 1.0);
                        (x * x * (3.0 - 2.0 * x), Some(run.clone()))
                    })
                    .collect()
            })
            .collect();
        let (hips, turned) = self.follow(&free, &contacts, times);
        let legs = contacts
            .iter()
            .enumerate()
            .map(|(k, leg)| {
                leg.iter()
                    .enumerate()
                    .map(|(i, (weight, run))| match run {
                        Some(r) if *weight > 0.0 => {
                            let at =
                                free.apart[k][r.start] + turned[k][r.start] + hips[r.start].offset
                                    - hips[i].offset;
                            Plant {
                                weight: *weight,
                                offset: flat(at),
                            }
                        }
                        _ => Plant::default(),
                    })
                    .collect()
            })
            .collect();
        Plan { legs, hips }
    }

    /// The hips' [`Shift`] per time, and per leg and time the ground-plane displacement of its
    /// foot by the shift's twist. Integrated frame by frame: each step solves, in least
    /// squares, for the change of offset (on the ground plane) and twist that cancels the step
    /// of every planted foot's `D` (a foot counts while its source is in contact), with the
    /// twist held to its course by [`TWIST_STIFFNESS`] and returning to 0 over
    /// [`TWIST_RELAX_S`]. With one foot planted the offset holds it exactly; with two the twist
    /// takes out their drift about each other, as far as a turn of the hips can. Vertically the
    /// offset lifts the hips so the planted feet's (weighted) mean stands at its goal height.
    /// Under translation policy `none` the hips keep their rest translation: no shift.
    fn follow(
        &self,
        free: &Free,
        contacts: &[Vec<Contact>],
        times: &[f64],
    ) -> (Vec<Shift>, Vec<Vec<DVec3>>) {
        let n = times.len();
        let legs = contacts.len();
        let mut hips = vec![Shift::default(); n];
        let mut turned = vec![vec![DVec3::ZERO; n]; legs];
        if self.policy == TranslationPolicy::None {
            // The translation joint keeps its rest translation: nothing to shift.
            return (hips, turned);
        }
        let turn = |i: usize, k: usize, twist: f64| {
            let r = free.roots[k][i];
            flat(DQuat::from_axis_angle(free.axes[i], twist) * r - r)
        };
        let reach = free
            .roots
            .iter()
            .flatten()
            .map(|r| flat(*r).length())
            .sum::<f64>()
            / (legs * n).max(1) as f64;
        let reach = reach.max(1e-9);
        let planted = |k: usize, i: usize| match &contacts[k][i].1 {
            Some(r) => r.contains(&i) && r.contains(&(i - 1)),
            None => false,
        };
        for i in 1..n {
            let twist = hips[i - 1].twist;
            let dt = times[i] - times[i - 1];
            // Rows (unknowns: the offset's x and z steps, the twist's step) of the weighted
            // least squares, accumulated into its normal equations.
            let mut m = DMat3::ZERO;
            let mut b = DVec3::ZERO;
            let mut row = |a: DVec3, rhs: f64, w: f64| {
                m += DMat3::from_cols(a * a.x, a * a.y, a * a.z) * (w * w);
                b += a * rhs * (w * w);
            };
            // The offset holds where no foot is planted; the twist relaxes.
            row(DVec3::X, 0.0, 1e-6 * reach);
            row(DVec3::Y, 0.0, 1e-6 * reach);
            row(
                DVec3::Z,
                -twist * dt / TWIST_RELAX_S,
                TWIST_STIFFNESS * reach,
            );
            for (k, turned) in turned.iter().enumerate() {
                if !planted(k, i) {
                    continue;
                }
                let step =
                    free.apart[k][i] - free.apart[k][i - 1] + turn(i, k, twist) - turned[i - 1];
                let root = DQuat::from_axis_angle(free.axes[i], twist) * free.roots[k][i];
                let j = free.axes[i].cross(root);
                row(DVec3::new(1.0, 0.0, j.x), -step.x, 1.0);
                row(DVec3::new(0.0, 1.0, j.z), -step.z, 1.0);
            }
            let x = m.inverse() * b;
            let offset = hips[i - 1].offset + DVec3::new(x.x, 0.0, x.y);
            hips[i] = Shift {
                offset,
                twist: twist + x.z,
            };
            for (k, turned) in turned.iter_mut().enumerate() {
                turned[i] = turn(i, k, hips[i].twist);
            }
        }
        for (i, h) in hips.iter_mut().enumerate() {
            let (mut sum, mut total) = (0.0, 0.0);
            for (contacts, apart) in contacts.iter().zip(&free.apart) {
                let w = contacts[i].0;
                sum += w * apart[i].y;
                total += w;
            }
            h.offset.y = -sum / total.max(1.0);
        }
        (hips, turned)
    }

    /// The source foot's position on the target (scene space): horizontally relative to the
    /// hips, turned and scaled; vertically its height above the floor, scaled (relative to the
    /// hips too when the hips keep their height).
    fn foot_goal(&self, leg: &Leg, source: &ScenePose, t: &ScenePose) -> DVec3 {
        let (tj, sj) = self.translation_joint;
        let foot = source.position(leg.source_foot);
        let mut goal = t.position(tj) + self.facing * (foot - source.position(sj)) * self.scale;
        if self.policy == TranslationPolicy::RootPelvisHeight
            || self.policy == TranslationPolicy::All
        {
            let (s_clear, t_clear) = self.clearance;
            goal.y = self.floors.1 + t_clear + (foot.y - self.floors.0 - s_clear) * self.scale;
        }
        goal
    }

    /// Two-bone IK of `leg` (at `weight`) toward `goal` (scene space). The bend plane is kept
    /// (law of cosines, as `throng_cpu_ref::ik::solve_two_bone`, for a foot that may follow the
    /// calf instead of hanging under it). The foot keeps its scene rotation.
    fn reach(
        &self,
        leg: &Leg,
        weight: f64,
        goal: DVec3,
        target: &Skeleton,
        t: &mut ScenePose,
        target_local: &mut [Trs],
    ) {
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

/// A leg's plant weight at one time and the contact nearest (frames), if it has any.
type Contact = (f64, Option<Range<usize>>);

/// Per IK leg and time of the first pass ([`Binding::plants`]), what the hips' shift works with.
struct Free {
    /// The target's foot less the source foot's goal (`D`).
    apart: Vec<Vec<DVec3>>,
    /// The leg's root less the translation joint.
    roots: Vec<Vec<DVec3>>,
    /// Per time: the translation joint's bone direction, the axis of its twist.
    axes: Vec<DVec3>,
}

fn flat(v: DVec3) -> DVec3 {
    DVec3::new(v.x, 0.0, v.z)
}

/// `runs` sorted, with the ones that overlap or touch joined: a foot's contact and its toe's are
/// one plant.
fn merged(mut runs: Vec<Range<usize>>) -> Vec<Range<usize>> {
    runs.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(runs.len());
    for r in runs {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::merged;

    #[test]
    fn a_foots_and_its_toes_overlapping_contacts_are_one_plant() {
        let runs = vec![10..20, 0..4, 15..30, 30..33, 40..41];
        assert_eq!(merged(runs), vec![0..4, 10..33, 40..41]);
        assert_eq!(merged(Vec::new()), Vec::<std::ops::Range<usize>>::new());
    }
}
