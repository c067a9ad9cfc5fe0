//! Building a motion-matching database ([`throng_cpu_ref::motion_db`]) from cooked clips: each
//! clip sampled at the database's rate through the CPU reference (its in-place pose and its
//! root-motion trajectory), the features of every frame measured, normalised and tagged.
//!
//! Space: a clip's pose is in component space with its root motion extracted, so component
//! space at time t *is* the trajectory space of that frame; trajectory features come from the
//! clip's root-motion trajectory, velocities are central differences of positions carried by the
//! trajectory (so a foot planted on the ground has zero velocity), rotated into the frame's
//! trajectory space. Past a clip's end the trajectory goes on straight at its last 0.1 s's
//! velocity and facing (locomotion clips end mid-stride). Rows in the last `tail` seconds are
//! kept but not searchable: a match there could not play until the next query.
//!
//! Tags from the trajectory's horizontal speed `s(t)` and facing: idle `s < 0.25` m/s, walk
//! below 2.2 m/s, run above; start where `s(t - 0.3) < 0.25 <= s(t + 0.3)`, stop where
//! `s(t - 0.3) >= 0.25 > s(t + 0.3)`; turn where the facing turns more than 30° over the next
//! 0.5 s.

use glam::{Affine3A, Quat, Vec3};
use thiserror::Error;
use throng_cpu_ref::clip::{sample_clip, sample_root_motion};
use throng_cpu_ref::fk::local_to_component;
use throng_cpu_ref::hero::find_legs;
use throng_cpu_ref::motion_db::{
    tag, DatabaseClip, DatabaseError, MotionDatabase, FEATURES, GROUPS, HORIZONS,
};
use throng_cpu_ref::{Package, Trs};

/// How a database is built.
#[derive(Clone, Debug, PartialEq)]
pub struct DatabaseSettings {
    /// Rows per second.
    pub rate: f32,
    /// Seconds ahead of the trajectory features.
    pub horizons: [f32; HORIZONS],
    /// Weights of the feature groups ([`GROUPS`] order).
    pub weights: [f32; GROUPS.len()],
    /// Seconds at each clip's end that are not searchable.
    pub tail: f32,
}

impl Default for DatabaseSettings {
    /// 60 rows a second; horizons 1/3, 2/3 and 1 s (Holden's 20, 40 and 60 frames at 60 Hz);
    /// every group weighted 1; a 0.25 s tail.
    fn default() -> Self {
        DatabaseSettings {
            rate: 60.0,
            horizons: [1.0 / 3.0, 2.0 / 3.0, 1.0],
            weights: [1.0; GROUPS.len()],
            tail: 0.25,
        }
    }
}

/// Why [`cook_database`] could not make its package.
#[derive(Debug, Error)]
pub enum CookDatabaseError {
    #[error("the database needs root motion; give the retarget profile a `root_motion` request")]
    NoRootMotionRequest,
    #[error("idle clip '{name}': the target has no clip of that name (it has {names:?})")]
    NoIdle { name: String, names: Vec<String> },
    #[error(transparent)]
    Retarget(#[from] crate::retarget::RetargetError),
    #[error(transparent)]
    Cook(#[from] crate::CookError),
    #[error(transparent)]
    Build(#[from] BuildError),
}

/// The package of `target` with every clip of `sources` retargeted onto it with `profile`,
/// cooked and compressed with `quality`, and a motion database (settings `settings`) of those
/// clips and of the target's own clips named in `idle` (which stand still), idles first.
pub fn cook_database(
    mut target: crate::Imported,
    sources: &[crate::Imported],
    profile: &crate::retarget::RetargetProfile,
    quality: &crate::Profile,
    idle: &[String],
    settings: &DatabaseSettings,
) -> Result<Package, CookDatabaseError> {
    if profile.root_motion.is_none() {
        return Err(CookDatabaseError::NoRootMotionRequest);
    }
    let own = target.source_clips.len();
    for source in sources {
        let source = crate::retarget::Source::from_imported(source);
        target = crate::retarget::retarget(profile, &source, &target, &[])?.0;
    }
    let (mut package, mut cooked) = crate::cook(&target, quality)?;
    crate::compress(&mut package, &mut cooked, quality);
    // The cook keeps the import's clip order: the target's own clips, then the new ones.
    let own_names = || {
        package.clips[..own]
            .iter()
            .map(|c| c.name.clone())
            .collect()
    };
    let mut still = Vec::new();
    for name in idle {
        let found = package.clips[..own].iter().position(|c| &c.name == name);
        still.push(found.ok_or_else(|| CookDatabaseError::NoIdle {
            name: name.clone(),
            names: own_names(),
        })? as u32);
    }
    let clips: Vec<u32> = (still.iter().copied())
        .chain(own as u32..package.clips.len() as u32)
        .collect();
    let database = build_database(&package, 0, &clips, &still, settings)?;
    package.motion_databases = vec![database];
    Ok(package)
}

/// Why a database could not be built.
#[derive(Debug, Error)]
pub enum BuildError {
    #[error("motion database: skeleton {0} is not in the package")]
    NoSkeleton(u32),
    #[error(
        "motion database: the skeleton has no pelvis and two legs named as throng_cpu_ref::hero::find_legs knows (pelvis/hips, thigh/upperleg, calf/lowerleg, foot/ankle with _l/_r)"
    )]
    NoLegs,
    #[error("motion database: clip '{0}' has no root motion; cook it with a root-motion request (the retarget profile's `root_motion`)")]
    NoRootMotion(String),
    #[error("motion database: clip {0} is not a clip of the skeleton")]
    BadClip(u32),
    #[error("motion database: no frames (give at least one clip longer than the tail)")]
    Empty,
    #[error(transparent)]
    Invalid(#[from] DatabaseError),
}

/// The trajectory of a clip: root-motion position and rotation at any time, extrapolated past the
/// end (a clip standing still has none: the origin, facing +Z, throughout).
struct Trajectory<'a> {
    clip: &'a throng_cpu_ref::Clip,
    duration: f32,
    /// Velocity and rotation at the end, for extrapolation.
    end_velocity: Vec3,
}

impl<'a> Trajectory<'a> {
    /// `None` when the clip has no root motion and does not stand `still`.
    fn new(clip: &'a throng_cpu_ref::Clip, still: bool) -> Option<Trajectory<'a>> {
        let duration = clip.duration as f32;
        if still && clip.root_motion.is_none() {
            return Some(Trajectory {
                clip,
                duration,
                end_velocity: Vec3::ZERO,
            });
        }
        let back = (duration - 0.1).max(0.0);
        let (p1, _) = sample_root_motion(clip, duration)?;
        let (p0, _) = sample_root_motion(clip, back)?;
        let end_velocity = if duration > back {
            (p1 - p0) / (duration - back)
        } else {
            Vec3::ZERO
        };
        Some(Trajectory {
            clip,
            duration,
            end_velocity,
        })
    }

    fn at(&self, t: f32) -> (Vec3, Quat) {
        if self.clip.root_motion.is_none() {
            return (Vec3::ZERO, Quat::IDENTITY);
        }
        let (p, q) = sample_root_motion(self.clip, t.clamp(0.0, self.duration))
            .unwrap_or((Vec3::ZERO, Quat::IDENTITY));
        if t > self.duration {
            (p + self.end_velocity * (t - self.duration), q)
        } else if t < 0.0 {
            let (p1, _) = sample_root_motion(self.clip, (0.1f32).min(self.duration))
                .unwrap_or((Vec3::ZERO, Quat::IDENTITY));
            let v = if self.duration > 0.0 {
                (p1 - p) / 0.1f32.min(self.duration)
            } else {
                Vec3::ZERO
            };
            (p + v * t, q)
        } else {
            (p, q)
        }
    }

    fn speed(&self, t: f32) -> f32 {
        let h = 0.05;
        let d = self.at(t + h).0 - self.at(t - h).0;
        Vec3::new(d.x, 0.0, d.z).length() / (2.0 * h)
    }
}

/// Builds the database of `clips` (package clip indices) of skeleton `skeleton`; the clips of
/// `still` among them may have no root motion (they stand still: idles).
pub fn build_database(
    package: &Package,
    skeleton: u32,
    clips: &[u32],
    still: &[u32],
    settings: &DatabaseSettings,
) -> Result<MotionDatabase, BuildError> {
    let rig = package
        .skeletons
        .get(skeleton as usize)
        .ok_or(BuildError::NoSkeleton(skeleton))?;
    let (pelvis, legs) = find_legs(rig).ok_or(BuildError::NoLegs)?;
    let joints = [legs[0].foot, legs[1].foot, pelvis];
    let n = rig.joint_count();
    let (mut local, mut component) = (vec![Trs::IDENTITY; n], vec![Affine3A::IDENTITY; n]);
    // World positions of the feet and hips (trajectory applied) at time t.
    let mut world = |clip: &throng_cpu_ref::Clip, traj: &Trajectory, t: f32| -> [Vec3; 3] {
        let tc = t.clamp(0.0, clip.duration as f32);
        sample_clip(clip, rig, tc, &mut local);
        local_to_component(rig, &local, &mut component);
        let (p, q) = traj.at(t);
        joints.map(|j| p + q * Vec3::from(component[j].translation))
    };
    let mut entries = Vec::new();
    let mut raw: Vec<[f32; FEATURES]> = Vec::new();
    let mut tags = Vec::new();
    let dt = 1.0 / settings.rate;
    for &c in clips {
        let clip = package
            .clips
            .get(c as usize)
            .filter(|x| x.skeleton == skeleton)
            .ok_or(BuildError::BadClip(c))?;
        let traj = Trajectory::new(clip, still.contains(&c))
            .ok_or_else(|| BuildError::NoRootMotion(clip.name.clone()))?;
        let frames = (traj.duration * settings.rate).floor() as u32 + 1;
        let playable = ((traj.duration - settings.tail).max(0.0) * settings.rate).floor() as u32;
        entries.push(DatabaseClip {
            clip: c,
            first: raw.len() as u32,
            frames,
            playable: playable.min(frames),
        });
        for k in 0..frames {
            let t = k as f32 * dt;
            let (p, q) = traj.at(t);
            let inverse = q.inverse();
            let mut row = [0.0f32; FEATURES];
            for (h, &ahead) in settings.horizons.iter().enumerate() {
                let (ph, qh) = traj.at(t + ahead);
                let d = inverse * (ph - p);
                let facing = inverse * (qh * Vec3::Z);
                let facing = Vec3::new(facing.x, 0.0, facing.z).normalize_or(Vec3::Z);
                row[2 * h] = d.x;
                row[2 * h + 1] = d.z;
                row[6 + 2 * h] = facing.x;
                row[6 + 2 * h + 1] = facing.z;
            }
            let now = world(clip, &traj, t);
            let before = world(clip, &traj, t - dt);
            let after = world(clip, &traj, t + dt);
            for (i, w) in now.iter().enumerate() {
                let local = inverse * (*w - p);
                let velocity = inverse * ((after[i] - before[i]) / (2.0 * dt));
                match i {
                    0 | 1 => {
                        row[12 + 3 * i..15 + 3 * i].copy_from_slice(&local.to_array());
                        row[18 + 3 * i..21 + 3 * i].copy_from_slice(&velocity.to_array());
                    }
                    _ => row[24..27].copy_from_slice(&velocity.to_array()),
                }
            }
            raw.push(row);
            tags.push(frame_tags(&traj, t));
        }
    }
    if raw.is_empty() || entries.iter().all(|e| e.playable == 0) {
        return Err(BuildError::Empty);
    }
    let (mean, scale) = normalisation(&raw, &settings.weights);
    let rows = raw
        .iter()
        .map(|r| std::array::from_fn(|f| (r[f] - mean[f]) * scale[f]))
        .collect();
    Ok(MotionDatabase::new(
        skeleton,
        settings.rate,
        settings.horizons,
        settings.weights,
        entries,
        mean,
        scale,
        rows,
        tags,
    )?)
}

fn frame_tags(traj: &Trajectory, t: f32) -> u8 {
    const MOVING: f32 = 0.25;
    let s = traj.speed(t);
    let mut bits = if s < MOVING {
        tag::IDLE
    } else if s < 2.2 {
        tag::WALK
    } else {
        tag::RUN
    };
    let (before, after) = (traj.speed(t - 0.3), traj.speed(t + 0.3));
    if before < MOVING && after >= MOVING {
        bits |= tag::START;
    }
    if before >= MOVING && after < MOVING {
        bits |= tag::STOP;
    }
    let (q0, q1) = (traj.at(t).1, traj.at(t + 0.5).1);
    let (f0, f1) = (q0 * Vec3::Z, q1 * Vec3::Z);
    let turn = Vec3::new(f0.x, 0.0, f0.z).angle_between(Vec3::new(f1.x, 0.0, f1.z));
    if turn > 30f32.to_radians() {
        bits |= tag::TURN;
    }
    bits
}

/// Per-float means and `weight / group deviation` scales; a group with no spread gets scale 0.
fn normalisation(
    raw: &[[f32; FEATURES]],
    weights: &[f32; GROUPS.len()],
) -> ([f32; FEATURES], [f32; FEATURES]) {
    let n = raw.len() as f64;
    let mut mean = [0.0f64; FEATURES];
    for r in raw {
        for f in 0..FEATURES {
            mean[f] += f64::from(r[f]) / n;
        }
    }
    let mut var = [0.0f64; FEATURES];
    for r in raw {
        for f in 0..FEATURES {
            let d = f64::from(r[f]) - mean[f];
            var[f] += d * d / n;
        }
    }
    let mut scale = [0.0f32; FEATURES];
    for ((_, range), &w) in GROUPS.iter().zip(weights) {
        let deviation = range.clone().map(|f| var[f].sqrt()).sum::<f64>() / range.len() as f64;
        for f in range.clone() {
            scale[f] = if deviation > 1e-9 {
                (f64::from(w) / deviation) as f32
            } else {
                0.0
            };
        }
    }
    (mean.map(|m| m as f32), scale)
}
