//! A demo crowd: one skin of a package, instanced on a grid, each instance with its own program
//! shape, clips, time offset, rate and blend weight (deterministic from the instance number).
//!
//! Program shapes (registers r0..r2; every program ends `ToComponent(final); Palette(skin)`):
//!
//! | [`Shape`] | ops | final |
//! |---|---|---|
//! | `Single` | `r0 = Sample(clip, t)` | r0 |
//! | `Blend` | `r0 = Sample(a, φ·dur a); r1 = Sample(b, φ·dur b); r2 = Blend(r0..r2; 1−w, w)` | r2 |
//! | `Masked` | `r0 = Sample(base, t); r1 = Sample(layer, t'); Override(r0 ← r1, w, mask 0)` | r0 |
//! | `Additive` | `r0 = Sample(base, t); r1 = Sample(layer, t'); r2 = Sample(layer, 0); Additive(r0, r1, r2, w)` | r0 |
//!
//! `t = (offset + rate · time) mod duration`. `Blend` is phase-matched: φ is the fraction of a
//! cycle whose length is the weighted mean of both durations, so feet stay in step. `Masked`
//! overrides the subtree of the right clavicle (mask 0 of [`Crowd::masks`]); `Additive` layers a
//! clip relative to its own first sample (the generated character's `breathe` is at rest there).
//!
//! Clips are chosen by role from their names (case-insensitive): bases are the clips not named
//! like `wave` or `breathe`; the blend pair is `walk`/`run`, else the first two bases; the masked
//! layer is `wave`, else another base; the additive layer is `breathe`, else the base itself
//! (weighted 0.2–0.4 then, as it doubles the base's motion).
//! The masked subtree is the first joint named like a right clavicle or shoulder, else the joint
//! whose subtree holds closest to a fifth of the skeleton.

use crate::random::SplitMix64;
use glam::{Affine3A, Quat, Vec3};
use thiserror::Error;
use throng_cpu_ref::{
    clip::sample_clip, fk, palette, skinning, Mask, Package, PoseOp, Program, NO_PARENT,
};

use crate::raster::Bounds;

/// Why a package cannot make a crowd.
#[derive(Debug, Error, PartialEq)]
pub enum CrowdError {
    #[error("the package has no skin {skin} (it has {count})")]
    NoSkin { skin: u32, count: usize },
    #[error("skin {skin} binds skeleton {skeleton}, which has no clips")]
    NoClips { skin: u32, skeleton: u32 },
}

/// The program shape of one instance (see the module table). Clip fields are package clip
/// indices; weights are in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Single { clip: u32 },
    Blend { a: u32, b: u32, weight: f32 },
    Masked { base: u32, layer: u32, weight: f32 },
    Additive { base: u32, layer: u32, weight: f32 },
}

/// One instance: its shape, clock and place.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Member {
    pub shape: Shape,
    /// Seconds added to the crowd's time before `rate`.
    pub offset: f32,
    /// Playback rate (1 = authored speed).
    pub rate: f32,
    /// Component space → scene: grid position, a yaw about +Y, feet on y = 0, the skeleton's
    /// `root_transform`.
    pub placement: Affine3A,
}

/// A crowd of one skin of one package.
#[derive(Clone, Debug, PartialEq)]
pub struct Crowd {
    pub skeleton: u32,
    pub skin: u32,
    pub members: Vec<Member>,
    /// Masks of the crowd's skeleton: pass as `masks[skeleton]` to `Runtime::add_package`.
    pub masks: Vec<Mask>,
    /// Distance between grid cells, metres.
    pub spacing: f32,
    /// Component space → scene for an instance standing at the origin facing +Z (feet on
    /// y = 0, the skeleton's `root_transform` included): every placement is a grid translation
    /// and a yaw times this.
    pub ground: Affine3A,
    /// Component-space bounds of the skin at the first base clip's first sample, padded by 10%
    /// of the diagonal for motion (except below: the lowest point stays on the ground).
    pub local_bounds: Bounds,
    /// `local_bounds` grown by the skin's bounds at nine times across every clip of the
    /// skeleton: where an instance may reach, even when a clip travels (root motion kept in the
    /// pose).
    pub motion_bounds: Bounds,
    durations: Vec<f32>,
}

/// Intervals per clip at which [`Crowd::motion_bounds`] poses the skin.
const MOTION_SAMPLES: usize = 8;

/// Columns over rows of the grid: wider than deep, for a landscape view from the front.
const ASPECT: f64 = 1.6;

/// Names that mark a right clavicle or shoulder in common rigs.
const RIGHT_SHOULDER: [&str; 8] = [
    "clavicle_r",
    "clavicle.r",
    "r_clavicle",
    "rightshoulder",
    "shoulder_r",
    "shoulder.r",
    "r_shoulder",
    "upperarm_r",
];

impl Crowd {
    /// `count` instances of skin `skin` of `package` on a grid about 1.6 times wider (x) than
    /// deep (z), centred on the origin, facing +Z.
    pub fn new(package: &Package, skin: u32, count: usize) -> Result<Crowd, CrowdError> {
        let binding = package.skins.get(skin as usize).ok_or(CrowdError::NoSkin {
            skin,
            count: package.skins.len(),
        })?;
        let skeleton_index = binding.skeleton;
        let no_clips = CrowdError::NoClips {
            skin,
            skeleton: skeleton_index,
        };
        let clips: Vec<u32> = (0..package.clips.len() as u32)
            .filter(|&c| package.clips[c as usize].skeleton == skeleton_index)
            .collect();
        let (Some(skeleton), Some(roles)) = (
            package.skeletons.get(skeleton_index as usize),
            Roles::new(package, &clips),
        ) else {
            return Err(no_clips);
        };
        let joint = shoulder(skeleton);
        let masks = Mask::subtree("right arm", skeleton, joint, 1.0)
            .into_iter()
            .collect();
        let first = posed_bounds(package, skin, roles.bases[0], 0.0);
        let pad = (first.max - first.min).length() * 0.1;
        let padded = |b: Bounds| Bounds {
            min: b.min - Vec3::new(pad, 0.0, pad),
            max: b.max + Vec3::splat(pad),
        };
        let local_bounds = padded(first);
        let motion_bounds = padded(clips.iter().fold(first, |b, &c| {
            let duration = package.clips[c as usize].duration as f32;
            (0..=MOTION_SAMPLES).fold(b, |b, i| {
                let t = duration * i as f32 / MOTION_SAMPLES as f32;
                b.union(&posed_bounds(package, skin, c, t))
            })
        }));
        let scene = local_bounds.transformed(&skeleton.root_transform);
        let extent = scene.max - scene.min;
        let spacing = extent.x.max(extent.z).max(0.5 * extent.y).max(1e-3) * 1.3;
        let feet = Vec3::new(scene.centre().x, scene.min.y, scene.centre().z);
        let ground = Affine3A::from_translation(-feet) * skeleton.root_transform;
        let columns = (count as f64 * ASPECT).sqrt().ceil().max(1.0) as usize;
        let rows = count.div_ceil(columns);
        let members = (0..count)
            .map(|i| {
                let mut r = SplitMix64::new(i as u64);
                let (col, row) = (i % columns, i / columns);
                // The last row, when partial, is centred.
                let in_row = (count - row * columns).min(columns);
                let col = col as f32 + (columns - in_row) as f32 * 0.5;
                let row = row as f32;
                let x = (col - (columns as f32 - 1.0) * 0.5 + r.range(-0.15, 0.15)) * spacing;
                let z = (row - (rows as f32 - 1.0) * 0.5 + r.range(-0.15, 0.15)) * spacing;
                let yaw = Quat::from_rotation_y(r.range(-0.4, 0.4));
                Member {
                    shape: roles.shape(&mut r),
                    offset: r.range(0.0, 10.0),
                    rate: r.range(0.85, 1.15),
                    placement: Affine3A::from_rotation_translation(yaw, Vec3::new(x, 0.0, z))
                        * ground,
                }
            })
            .collect();
        Ok(Crowd {
            skeleton: skeleton_index,
            skin,
            members,
            masks,
            spacing,
            ground,
            local_bounds,
            motion_bounds,
            durations: package.clips.iter().map(|c| c.duration as f32).collect(),
        })
    }

    /// Scene-space bounds of every member's `motion_bounds`.
    pub fn bounds(&self) -> Bounds {
        self.members.iter().fold(Bounds::EMPTY, |b, m| {
            b.union(&self.motion_bounds.transformed(&m.placement))
        })
    }

    /// Masks per skeleton of `package` for `Runtime::add_package`: this crowd's on its skeleton.
    pub fn package_masks(&self, package: &Package) -> Vec<Vec<Mask>> {
        (0..package.skeletons.len() as u32)
            .map(|s| {
                if s == self.skeleton {
                    self.masks.clone()
                } else {
                    Vec::new()
                }
            })
            .collect()
    }

    /// Writes the program of member `i` at crowd time `time` (seconds) into `out`, reusing its
    /// storage. Does nothing when `i` is out of range.
    pub fn program(&self, i: usize, time: f64, out: &mut Program) {
        let Some(m) = self.members.get(i) else { return };
        out.ops.clear();
        out.weights.clear();
        let local = (f64::from(m.offset) + f64::from(m.rate) * time) as f32;
        let at = |clip: u32| wrap(local, self.duration(clip));
        let last = match m.shape {
            Shape::Single { clip } => {
                out.ops.push(PoseOp::sample(0, clip, at(clip)));
                0
            }
            Shape::Blend { a, b, weight } => {
                let (da, db) = (self.duration(a), self.duration(b));
                let cycle = da + (db - da) * weight;
                let phase = if cycle > 0.0 {
                    (local / cycle).rem_euclid(1.0)
                } else {
                    0.0
                };
                out.ops.push(PoseOp::sample(0, a, phase * da));
                out.ops.push(PoseOp::sample(1, b, phase * db));
                out.ops.push(PoseOp::blend(2, 0, 2, 0));
                out.weights.extend([1.0 - weight, weight]);
                2
            }
            Shape::Masked {
                base,
                layer,
                weight,
            } => {
                out.ops.push(PoseOp::sample(0, base, at(base)));
                out.ops.push(PoseOp::sample(1, layer, at(layer)));
                let mask = if self.masks.is_empty() {
                    throng_cpu_ref::program::NO_MASK
                } else {
                    0
                };
                out.ops.push(PoseOp::overriding(0, 1, weight, mask));
                0
            }
            Shape::Additive {
                base,
                layer,
                weight,
            } => {
                out.ops.push(PoseOp::sample(0, base, at(base)));
                out.ops.push(PoseOp::sample(1, layer, at(layer)));
                out.ops.push(PoseOp::sample(2, layer, 0.0));
                out.ops.push(PoseOp::additive(
                    0,
                    1,
                    2,
                    weight,
                    throng_cpu_ref::program::NO_MASK,
                ));
                0
            }
        };
        out.ops.push(PoseOp::to_component(last));
        out.ops.push(PoseOp::palette(self.skin));
    }

    fn duration(&self, clip: u32) -> f32 {
        self.durations.get(clip as usize).copied().unwrap_or(0.0)
    }
}

/// `t` wrapped into [0, duration) (0 for an empty clip).
fn wrap(t: f32, duration: f32) -> f32 {
    if duration > 0.0 {
        t.rem_euclid(duration)
    } else {
        0.0
    }
}

/// Clips of the crowd's skeleton by role.
struct Roles {
    bases: Vec<u32>,
    blend: (u32, u32),
    wave: Option<u32>,
    breathe: Option<u32>,
}

impl Roles {
    fn new(package: &Package, clips: &[u32]) -> Option<Roles> {
        let name = |c: u32| package.clips[c as usize].name.to_lowercase();
        let find = |word: &str| clips.iter().copied().find(|&c| name(c).contains(word));
        let (wave, breathe) = (find("wave"), find("breath"));
        let mut bases: Vec<u32> = clips
            .iter()
            .copied()
            .filter(|&c| Some(c) != wave && Some(c) != breathe)
            .collect();
        if bases.is_empty() {
            bases = clips.to_vec();
        }
        let first = *bases.first()?;
        let blend = match (find("walk"), find("run")) {
            (Some(w), Some(r)) => (w, r),
            _ => (first, bases.get(1).copied().unwrap_or(first)),
        };
        Some(Roles {
            bases,
            blend,
            wave,
            breathe,
        })
    }

    /// A shape drawn from `r`: 30% single clips, 25% walk/run blends, 25% masked waves, 20%
    /// additive breathing.
    fn shape(&self, r: &mut SplitMix64) -> Shape {
        let base = self.bases[r.index(self.bases.len())];
        let other = self.bases[r.index(self.bases.len())];
        match r.index(20) {
            0..=5 => Shape::Single { clip: base },
            6..=10 => Shape::Blend {
                a: self.blend.0,
                b: self.blend.1,
                weight: r.range(0.0, 1.0),
            },
            11..=15 => Shape::Masked {
                base,
                layer: self.wave.unwrap_or(other),
                weight: r.range(0.7, 1.0),
            },
            // Without a breathing clip the base is layered on itself, which doubles its motion:
            // lightly.
            _ => Shape::Additive {
                base,
                layer: self.breathe.unwrap_or(base),
                weight: if self.breathe.is_some() {
                    r.range(0.6, 1.0)
                } else {
                    r.range(0.2, 0.4)
                },
            },
        }
    }
}

/// The masked joint: a right clavicle or shoulder by name, else the non-root joint whose subtree
/// is closest to a fifth of the skeleton.
fn shoulder(skeleton: &throng_cpu_ref::Skeleton) -> usize {
    let names: Vec<String> = skeleton.names.iter().map(|n| n.to_lowercase()).collect();
    for pattern in RIGHT_SHOULDER {
        if let Some(j) = names.iter().position(|n| n.contains(pattern)) {
            return j;
        }
    }
    let target = skeleton.joint_count() / 5;
    (0..skeleton.joint_count())
        .filter(|&j| skeleton.parents[j] != NO_PARENT)
        .min_by_key(|&j| (skeleton.subtree_end[j] as usize - j).abs_diff(target))
        .unwrap_or(0)
}

/// Component-space bounds of skin `skin` posed at `clip`'s time `time` on the CPU reference
/// (joint positions when the skin has no vertices).
fn posed_bounds(package: &Package, skin: u32, clip: u32, time: f32) -> Bounds {
    let Some(binding) = package.skins.get(skin as usize) else {
        return Bounds::EMPTY;
    };
    let Some(skeleton) = package.skeletons.get(binding.skeleton as usize) else {
        return Bounds::EMPTY;
    };
    let mut local = skeleton.rest.clone();
    if let Some(c) = package.clips.get(clip as usize) {
        sample_clip(c, skeleton, time, &mut local);
    }
    let mut component = vec![Affine3A::IDENTITY; local.len()];
    fk::local_to_component(skeleton, &local, &mut component);
    let mut pal = vec![Affine3A::IDENTITY; binding.joints.len()];
    palette::build_palette(binding, &component, &mut pal);
    let mut bounds = Bounds::EMPTY;
    for mesh in package.meshes.iter().filter(|m| m.skin == skin) {
        let mut positions = vec![Vec3::ZERO; mesh.positions.len()];
        let mut normals = vec![Vec3::ZERO; mesh.normals.len()];
        skinning::skin_mesh(mesh, &pal, &mut positions, &mut normals);
        bounds = bounds.union(&Bounds::of_points(positions));
    }
    if bounds.is_empty() {
        bounds = Bounds::of_points(component.iter().map(|c| Vec3::from(c.translation)));
    }
    bounds
}


#[cfg(test)]
mod tests {
    use super::*;
    use throng_cpu_ref::{program::op, Assets, ProgramLimits};

    fn character() -> Package {
        let imported =
            throng_cook::import_slice(&throng_fixtures::character_glb(), "character").unwrap();
        throng_cook::cook(&imported, &throng_cook::Profile::DEFAULT)
            .unwrap()
            .0
    }

    #[test]
    fn every_program_is_valid_and_every_shape_is_used() {
        let package = character();
        let crowd = Crowd::new(&package, 0, 200).unwrap();
        let skeleton = &package.skeletons[0];
        let assets = Assets {
            skeleton,
            skeleton_index: 0,
            clips: &package.clips,
            skins: &package.skins,
            masks: &crowd.masks,
        };
        let mut program = Program::default();
        let mut kinds = [0; 4];
        for (i, m) in crowd.members.iter().enumerate() {
            for time in [0.0, 0.5, 3.7, 100.0] {
                crowd.program(i, time, &mut program);
                program
                    .validate(&ProgramLimits::default(), &assets)
                    .unwrap_or_else(|e| panic!("member {i} ({:?}) at {time}: {e}", m.shape));
                for o in program.ops.iter().filter(|o| o.code == op::SAMPLE) {
                    let duration = package.clips[o.a as usize].duration as f32;
                    assert!((0.0..=duration).contains(&o.time), "{o:?}");
                }
            }
            let clip = |name: &str| package.find_clip(name).unwrap() as u32;
            kinds[match m.shape {
                Shape::Single { .. } => 0,
                Shape::Blend { a, b, .. } => {
                    assert_eq!((a, b), (clip("walk"), clip("run")));
                    1
                }
                Shape::Masked { layer, .. } => {
                    assert_eq!(layer, clip("wave"));
                    2
                }
                Shape::Additive { layer, .. } => {
                    assert_eq!(layer, clip("breathe"));
                    3
                }
            }] += 1;
        }
        assert!(kinds.iter().all(|&k| k >= 20), "shape counts {kinds:?}");
    }

    #[test]
    fn the_wave_mask_is_the_right_clavicle_subtree() {
        let package = character();
        let crowd = Crowd::new(&package, 0, 1).unwrap();
        let skeleton = &package.skeletons[0];
        let clavicle = skeleton.find("clavicle_r").unwrap();
        let end = skeleton.subtree_end[clavicle] as usize;
        assert_eq!(crowd.masks.len(), 1);
        for (j, &w) in crowd.masks[0].weights.iter().enumerate() {
            assert_eq!(
                w,
                if (clavicle..end).contains(&j) {
                    1.0
                } else {
                    0.0
                },
                "joint {j}"
            );
        }
        assert!(end - clavicle > 10, "the subtree holds the arm and fingers");
    }

    #[test]
    fn members_stand_apart_on_the_ground() {
        let package = character();
        let crowd = Crowd::new(&package, 0, 50).unwrap();
        assert!(
            crowd.spacing > 0.8 && crowd.spacing < 3.0,
            "{}",
            crowd.spacing
        );
        let feet: Vec<Vec3> = crowd
            .members
            .iter()
            .map(|m| crowd.local_bounds.transformed(&m.placement).min)
            .collect();
        for (i, a) in crowd.members.iter().enumerate() {
            for b in &crowd.members[i + 1..] {
                let d = Vec3::from(a.placement.translation - b.placement.translation);
                assert!(d.length() > 0.5 * crowd.spacing, "members {d:?} apart");
            }
        }
        // The lowest point of the first base clip's first pose sits on y = 0 (up to the yaw).
        assert!(feet.iter().all(|f| f.y.abs() < 0.05), "{feet:?}");
        let bounds = crowd.bounds();
        assert!(bounds.max.y > 1.7 && bounds.max.y < 2.5, "{bounds:?}");
    }

    #[test]
    fn the_crowd_bounds_hold_every_joint_of_every_member() {
        let package = character();
        let crowd = Crowd::new(&package, 0, 60).unwrap();
        let skeleton = &package.skeletons[0];
        let assets = Assets {
            skeleton,
            skeleton_index: 0,
            clips: &package.clips,
            skins: &package.skins,
            masks: &crowd.masks,
        };
        let mut evaluator = throng_cpu_ref::Evaluator::new(
            ProgramLimits::default(),
            skeleton.joint_count(),
            package.skins[0].joints.len(),
        );
        let bounds = crowd.bounds();
        let mut program = Program::default();
        for (i, m) in crowd.members.iter().enumerate() {
            for time in [0.3, 1.7, 4.05] {
                crowd.program(i, time, &mut program);
                evaluator.run(&program, &assets).unwrap();
                for c in evaluator.component() {
                    let p = m.placement.transform_point3(Vec3::from(c.translation));
                    assert!(
                        p.cmpge(bounds.min).all() && p.cmple(bounds.max).all(),
                        "member {i} at {time}: joint at {p} outside {bounds:?}"
                    );
                }
            }
        }
        let (l, m) = (crowd.local_bounds, crowd.motion_bounds);
        assert!(m.min.cmple(l.min).all() && m.max.cmpge(l.max).all());
    }

    #[test]
    fn a_package_without_the_skin_or_clips_is_refused() {
        let mut package = character();
        assert_eq!(
            Crowd::new(&package, 3, 1),
            Err(CrowdError::NoSkin { skin: 3, count: 1 })
        );
        package.clips.clear();
        assert_eq!(
            Crowd::new(&package, 0, 1),
            Err(CrowdError::NoClips {
                skin: 0,
                skeleton: 0
            })
        );
    }

    #[test]
    fn wrap_keeps_time_inside_the_clip() {
        assert_eq!(wrap(2.5, 1.0), 0.5);
        assert_eq!(wrap(-0.25, 1.0), 0.75);
        assert_eq!(wrap(3.0, 0.0), 0.0);
    }

    #[test]
    fn random_range_stays_inside() {
        let mut r = SplitMix64::new(7);
        for _ in 0..1000 {
            let x = r.range(-0.4, 0.4);
            assert!((-0.4..0.4).contains(&x), "{x}");
            assert!(r.index(3) < 3);
        }
    }
}
