//! Root-motion extraction at cook time (DESIGN.md §5; docs/events-and-root-motion.md).
//!
//! At each clip sample the motion joint `m`'s component transform comes from the sampled source
//! pose: translation `c` = the translation of `local[0] · … · local[m]`, rotation
//! `Q` = `q[0] · … · q[m]` (the rotation of that product when the ancestors' scales are uniform).
//! Its turn away from rest is `D = Q · Q_rest⁻¹`, with `Q_rest` the same product over the rest
//! pose, so a joint whose rest frame is tilted (a Z-up export's hips) still reads its heading.
//! The trajectory `R = (t, r)`:
//! - `Full`: `t = c`, `r = D`;
//! - `Planar`: `t = (c.x, 0, c.z)`, `r` = the twist of `D` about +Y: `D = r · s` with `r` a
//!   rotation about +Y and the swing `s` about a horizontal axis, `r = normalize(0, D.y, 0, D.w)`
//!   (identity when `D` is a half turn about a horizontal axis and the twist is undefined).
//!   Swing-twist after Dobrowolski, "Swing-twist decomposition in Clifford algebra",
//!   <https://arxiv.org/abs/1506.05481>.
//!
//! Rotations are kept on one hemisphere from sample to sample. The trajectory is rounded to f32
//! first, and then removed from the pose exactly once, at the skeleton's root joint:
//! `local[0] ← R⁻¹ · local[0]` (`t₀ ← r⁻¹(t₀ − t)`, `q₀ ← r⁻¹ q₀`, scale unchanged), so every joint's
//! component transform becomes `R⁻¹ · C` and `R · residual` is the source pose. For `Planar` the
//! motion joint keeps its height, pitch and roll in the pose; its x, z and yaw go.

use glam::{DAffine3, DQuat, DVec3, Quat, Vec3};
use throng_cpu_ref::{RootMotion, RootMotionPolicy, Skeleton, Trs, NO_PARENT};

/// Takes the trajectory of `joint` out of `poses` (sample-major, `joints` per sample) and returns
/// it. `joint` must be a joint of `skeleton`, and every pose must hold `joints` entries.
pub fn extract(
    poses: &mut [Trs],
    joints: usize,
    skeleton: &Skeleton,
    joint: u32,
    policy: RootMotionPolicy,
) -> RootMotion {
    let chain = chain(skeleton, joint);
    let (_, rest_rotation) = compose(&chain, &skeleton.rest);
    let mut motion = RootMotion {
        joint,
        policy,
        translations: Vec::new(),
        rotations: Vec::new(),
    };
    let mut previous: Option<DQuat> = None;
    for pose in poses.chunks_exact_mut(joints.max(1)) {
        let (c, q) = compose(&chain, pose);
        let turn = q * rest_rotation.inverse();
        let (t, mut r) = match policy {
            RootMotionPolicy::Full => (c, turn.normalize()),
            RootMotionPolicy::Planar => (DVec3::new(c.x, 0.0, c.z), yaw(turn)),
        };
        if previous.is_some_and(|p| p.dot(r) < 0.0) {
            r = match policy {
                RootMotionPolicy::Full => -r,
                RootMotionPolicy::Planar => DQuat::from_xyzw(0.0, -r.y, 0.0, -r.w),
            };
        }
        previous = Some(r);
        let (t, r) = (t.as_vec3(), r.as_quat().normalize());
        if let Some(root) = pose.first_mut() {
            *root = remove(*root, t, r);
        }
        motion.translations.push(t);
        motion.rotations.push(r);
    }
    motion
}

/// The joints from the root down to `joint`, root first.
fn chain(skeleton: &Skeleton, joint: u32) -> Vec<usize> {
    let mut chain = Vec::new();
    let mut at = joint;
    while let Some(&parent) = skeleton.parents.get(at as usize) {
        chain.push(at as usize);
        if parent == NO_PARENT {
            break;
        }
        at = parent;
    }
    chain.reverse();
    chain
}

/// Component translation and rotation at the end of `chain` (root first) in `pose`, in f64.
fn compose(chain: &[usize], pose: &[Trs]) -> (DVec3, DQuat) {
    let mut affine = DAffine3::IDENTITY;
    let mut rotation = DQuat::IDENTITY;
    for local in chain.iter().filter_map(|&j| pose.get(j)) {
        let q = local.rotation.as_dquat();
        affine *= DAffine3::from_scale_rotation_translation(
            local.scale.as_dvec3(),
            q,
            local.translation.as_dvec3(),
        );
        rotation = (rotation * q).normalize();
    }
    (affine.translation, rotation)
}

/// The twist of `d` about +Y, with w ≥ 0 (x = z = 0 exactly).
fn yaw(d: DQuat) -> DQuat {
    let length = d.y.hypot(d.w);
    if length < 1e-12 {
        return DQuat::IDENTITY;
    }
    let sign = if d.w < 0.0 { -1.0 } else { 1.0 };
    DQuat::from_xyzw(0.0, sign * d.y / length, 0.0, sign * d.w / length)
}

/// `R⁻¹ · local` for the rigid `R = (t, r)`, computed in f64.
fn remove(local: Trs, t: Vec3, r: Quat) -> Trs {
    let inverse = r.as_dquat().inverse();
    Trs {
        translation: (inverse * (local.translation.as_dvec3() - t.as_dvec3())).as_vec3(),
        rotation: (inverse * local.rotation.as_dquat()).normalize().as_quat(),
        scale: local.scale,
    }
}
