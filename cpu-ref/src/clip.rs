//! Cooked clips: uniformly sampled local sub-tracks (DESIGN.md §3).
//!
//! Sample `i` lies at `min(i / sample_rate, duration)`: the last sample is at the duration even
//! when the duration is not a whole number of sample periods. Sub-tracks are laid out per joint
//! in the order translation, rotation, scale: sub-track `3 * joint + k` with k = 0 (t), 1 (q), 2 (s).

use glam::{Affine3A, Quat, Vec3};

use crate::codec::batch::{self, Batch, Kind};
use crate::codec::{self, CompressedClip, Part};
use crate::transform::nlerp_shortest;
use crate::{Skeleton, Trs};

/// How a sub-track is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SubTrackKind {
    /// Equal to the rest pose (or additive identity for additive clips): stores nothing.
    Default = 0,
    /// One value for the whole clip.
    Constant = 1,
    /// `sample_count` values.
    Animated = 2,
}

/// One sub-track (t, q or s of one joint). `offset` indexes `Clip::values` (in floats); a value
/// is 3 floats (t, s) or 4 floats (q as x, y, z, w). Samples of an animated sub-track are contiguous.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubTrack {
    pub kind: SubTrackKind,
    pub offset: u32,
}

/// What happens past the end of the clip; control applies it, sampling always clamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LoopPolicy {
    Once = 0,
    Loop = 1,
}

/// A named instant of a clip, delivered by control (DESIGN.md §5): forward playback delivers
/// events in `(old, new]`; reverse playback delivers reversible events in `[new, old)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipEvent {
    pub name: String,
    /// Seconds from the clip start, in [0, duration].
    pub time: f64,
    /// Delivered when playing backwards too.
    pub reversible: bool,
}

/// A named phase point of a clip; sync groups align clips by their markers. On a looping clip a
/// marker lies in [0, duration): the cook canonicalises one at the duration to 0.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncMarker {
    pub name: String,
    /// Seconds from the clip start.
    pub time: f64,
}

/// How much of the motion joint's movement the cook moves into the trajectory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RootMotionPolicy {
    /// Ground-plane translation (x, z) and yaw about +Y; height, pitch and roll stay in the pose.
    Planar = 0,
    /// The whole translation and rotation.
    Full = 1,
}

/// The trajectory `R(t)` taken out of a clip at cook time (docs/events-and-root-motion.md).
///
/// One rigid transform per clip sample (same sample times as the clip), in the skeleton's
/// component space (below `Skeleton::root_transform`): `translations[i]` and `rotations[i]`
/// (unit) map the character's placement frame at sample `i` into component space, `p ↦ q·p + t`.
/// The clip's sub-tracks hold the residual: the source pose is `R(t) · residual(t)`, so the
/// motion is in exactly one of them. `R` is absolute (not relative to the first sample): control
/// moves an instance by `inverse(R(old)) * R(new)` per tick, and a loop crossing composes
/// `inverse(R(old)) * R(end)`, then `inverse(R(0)) * R(end)` per whole cycle, then
/// `inverse(R(0)) * R(new)` ([`root_motion_delta`], [`compose_root_motion`]). For `Planar`,
/// every translation has y = 0 and every rotation is about +Y only (x = z = 0).
#[derive(Clone, Debug, PartialEq)]
pub struct RootMotion {
    /// Skeleton joint whose motion was extracted.
    pub joint: u32,
    pub policy: RootMotionPolicy,
    pub translations: Vec<Vec3>,
    pub rotations: Vec<Quat>,
}

impl RootMotion {
    /// `inverse(R(0)) * R(duration)`: the motion of one whole pass of the clip, start to end.
    /// Identity for an empty trajectory.
    pub fn cycle(&self) -> (Vec3, Quat) {
        let first = self.translations.first().zip(self.rotations.first());
        let last = self.translations.last().zip(self.rotations.last());
        match first.zip(last) {
            Some(((&t0, &q0), (&t1, &q1))) => root_motion_delta((t0, q0), (t1, q1)),
            None => (Vec3::ZERO, Quat::IDENTITY),
        }
    }
}

/// A cooked clip for one skeleton, in the uncompressed reference encoding (`values`) or the
/// compressed one (`compressed`, DESIGN.md §7); both sample the same way ([`sample_clip`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub name: String,
    /// Index of the skeleton in the package.
    pub skeleton: u32,
    /// That skeleton's identity hash at cook time.
    pub skeleton_hash: u64,
    /// Seconds; the time of the last sample.
    pub duration: f64,
    /// Samples per second.
    pub sample_rate: f32,
    /// Number of uniform samples (at least 1).
    pub sample_count: u32,
    pub loop_policy: LoopPolicy,
    /// Quality profile name it was cooked with.
    pub profile: String,
    /// `3 * joint_count` sub-tracks (t, q, s per joint).
    pub sub_tracks: Vec<SubTrack>,
    /// Sample values, f32.
    pub values: Vec<f32>,
    /// Sorted by time, then name; no two share both.
    pub events: Vec<ClipEvent>,
    /// Sorted by time, then name; no two share both.
    pub markers: Vec<SyncMarker>,
    /// The extracted trajectory, when the cook was asked for one; the sub-tracks then hold the
    /// residual (visual) pose.
    pub root_motion: Option<RootMotion>,
    /// `None`: the reference encoding, samples in `values`. `Some`: the compressed encoding
    /// ([`crate::codec`]); `values` is empty and each sub-track's `offset` indexes the codec
    /// stream (its index among animated sub-tracks, or the word of its constant).
    pub compressed: Option<CompressedClip>,
}

/// How a clip's samples are stored: the package's clip records and the GPU's clip headers carry
/// one of these.
pub mod encoding {
    /// Uniform f32 samples in `Clip::values`.
    pub const REFERENCE: u32 = 1;
    /// The codec stream of `Clip::compressed` (docs/codec.md).
    pub const COMPRESSED: u32 = 2;
}

impl Clip {
    /// [`encoding::REFERENCE`] or [`encoding::COMPRESSED`].
    pub fn encoding(&self) -> u32 {
        match self.compressed {
            None => encoding::REFERENCE,
            Some(_) => encoding::COMPRESSED,
        }
    }
}

/// Version of the clip encoding written by this build (the uncompressed reference encoding).
pub const REFERENCE_CODEC_VERSION: u32 = 1;

impl Clip {
    /// Time of sample `i` in seconds.
    /// The last sample is at the duration even when f32 key times put the duration a hair past
    /// `(sample_count - 1) / sample_rate`.
    pub fn sample_time(&self, i: u32) -> f64 {
        if i + 1 >= self.sample_count {
            self.duration
        } else {
            (i as f64 / self.sample_rate as f64).min(self.duration)
        }
    }
}

/// The two samples bracketing a time and the fraction between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bracket {
    pub(crate) i0: u32,
    pub(crate) i1: u32,
    pub(crate) u: f32,
}

/// `x as f32`, without the false dependency x86-64's conversion has on its destination register
/// (`cvtsd2ss` keeps that register's upper lanes, so it waits for whatever last wrote it; at the
/// start of a function the compiler assumes nothing recent did). The explicit zero upper lanes
/// have the register cleared first. Measured: sampling root motion 24 → 15 ns a call back to
/// back, where the conversion waited for the previous call's square root.
#[inline(always)]
pub fn f64_to_f32(x: f64) -> f32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_cvtsd_ss, _mm_cvtss_f32, _mm_set_sd, _mm_setzero_ps};
        // SAFETY: SSE2 is part of x86-64.
        unsafe { _mm_cvtss_f32(_mm_cvtsd_ss(_mm_setzero_ps(), _mm_set_sd(x))) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        x as f32
    }
}

impl Clip {
    /// Bracketing samples of `time`, clamped to [0, duration] (NaN reads as 0). In f32, as the
    /// GPU computes it: `i0 = floor(time * rate)`, `u = (time - t(i0)) / (t(i1) - t(i0))`, so the
    /// last interval may be shorter than a sample period.
    pub(crate) fn bracket(&self, time: f32) -> Bracket {
        let last = self.sample_count.saturating_sub(1);
        let duration = f64_to_f32(self.duration);
        let time = if time.is_nan() {
            0.0
        } else {
            time.clamp(0.0, duration.max(0.0))
        };
        let rate = self.sample_rate;
        // `floor(time * rate)`: `as u32` truncates, which is the floor for the non-negative
        // products of a good rate, and saturates: a NaN, negative or infinite product (bad
        // rate) reads as sample 0 or the last, as its floor would (no library `floorf`).
        let i0 = ((time * rate) as u32).min(last);
        let i1 = (i0 + 1).min(last);
        let t0 = i0 as f32 / rate;
        let t1 = (i1 as f32 / rate).min(duration);
        let u = if t1 > t0 {
            ((time - t0) / (t1 - t0)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        Bracket { i0, i1, u }
    }

    /// Sub-track `track` at `b`: `None` for a Default sub-track or one whose values lie outside
    /// `values` (a malformed clip reads as rest), the stored value for a Constant one, else
    /// `interpolate(value at i0, value at i1, u)`.
    fn sub_track<const N: usize>(
        &self,
        track: usize,
        b: Bracket,
        interpolate: impl Fn([f32; N], [f32; N], f32) -> [f32; N],
    ) -> Option<[f32; N]> {
        let st = self.sub_tracks.get(track)?;
        let offset = st.offset as usize;
        let at = |start: usize| -> Option<[f32; N]> {
            self.values
                .get(start..start.checked_add(N)?)?
                .try_into()
                .ok()
        };
        match st.kind {
            SubTrackKind::Default => None,
            SubTrackKind::Constant => at(offset),
            SubTrackKind::Animated => {
                let v0 = at(offset.checked_add(b.i0 as usize * N)?)?;
                let v1 = at(offset.checked_add(b.i1 as usize * N)?)?;
                Some(interpolate(v0, v1, b.u))
            }
        }
    }

    fn vec3(&self, track: usize, b: Bracket) -> Option<Vec3> {
        let lerp = |a, c, u| Vec3::from_array(a).lerp(Vec3::from_array(c), u).to_array();
        self.sub_track(track, b, lerp).map(Vec3::from_array)
    }

    fn quat(&self, track: usize, b: Bracket) -> Option<Quat> {
        let nlerp =
            |a, c, u| nlerp_shortest(Quat::from_array(a), Quat::from_array(c), u).to_array();
        self.sub_track(track, b, nlerp).map(Quat::from_array)
    }

    /// Joint `j` at bracket `b`; Default sub-tracks (and malformed ones) come from `rest`.
    fn joint(&self, j: usize, b: Bracket, rest: &Trs) -> Trs {
        if let Some(c) = &self.compressed {
            let at = codec::PairAt::new(c, b.i0, b.i1);
            let mut out = *rest;
            self.compressed_joint(c, j, b, at.as_ref(), rest, &mut out);
            return out;
        }
        self.reference_joint(j, b, rest)
    }

    /// [`Clip::joint`] of the reference encoding.
    // Inlined: it runs for every joint of a pose. Left to the compiler it was a call per joint
    // (its 48-byte result returned through memory), which cost as much as the sampling itself.
    #[inline(always)]
    fn reference_joint(&self, j: usize, b: Bracket, rest: &Trs) -> Trs {
        Trs {
            translation: self.vec3(3 * j, b).unwrap_or(rest.translation),
            rotation: self.quat(3 * j + 1, b).unwrap_or(rest.rotation),
            scale: self.vec3(3 * j + 2, b).unwrap_or(rest.scale),
        }
    }

    /// [`Clip::joint`] of compressed data `c` into `out`, where `at` locates the bracket's
    /// samples.
    // Inlined: it runs for every joint of a pose, most of them a few instructions each.
    #[inline(always)]
    fn compressed_joint(
        &self,
        c: &CompressedClip,
        j: usize,
        b: Bracket,
        at: Option<&codec::PairAt>,
        rest: &Trs,
        out: &mut Trs,
    ) {
        let track = |k: usize| self.sub_tracks.get(3 * j + k).copied();
        out.translation =
            (track(0).and_then(|st| codec::vec3_at(c, st, at, b.u))).unwrap_or(rest.translation);
        out.rotation =
            (track(1).and_then(|st| codec::quat_at(c, st, at, b.u))).unwrap_or(rest.rotation);
        out.scale = (track(2).and_then(|st| codec::vec3_at(c, st, at, b.u))).unwrap_or(rest.scale);
    }

    /// [`sample_clip`] of compressed data `c` whose bracket's samples lie at `at`, on a CPU that
    /// decodes in batches ([`codec::batch`]), by the clip's [`codec::PosePlan`]: constants,
    /// animated rotations together, animated translations and scales together when a clip has
    /// many; joints past the plan (or all, where the plan is not this table's) one by one.
    // Out of line: inlined into `sample_clip`, it changed how the reference encoding's loop there
    // was compiled, and that loop ran 6 % slower on the dance clip. (How the compiler lays out
    // these loops moves either encoding by 5–15 % in one binary or another, with the same
    // instructions: compare binaries in `throng bench`, not a scratch loop.)
    #[inline(never)]
    fn compressed_pose(
        &self,
        c: &CompressedClip,
        b: Bracket,
        at: &codec::PairAt,
        rest: &[Trs],
        local: &mut [Trs],
    ) {
        let n = local.len().min(rest.len());
        // Rest first: most sub-tracks of most clips are Default and need nothing more.
        local[..n].copy_from_slice(&rest[..n]);
        let plan = &c.plan;
        let whole = (n.min(self.sub_tracks.len() / 3)).min(Skeleton::MAX_JOINTS);
        // The plan's joints are below `whole`, so within `local`.
        let planned = if plan.joints == whole { whole } else { 0 };
        if planned > 0 {
            for k in &plan.constants {
                let out = &mut local[k.joint as usize];
                let word = k.word;
                match k.part {
                    Part::Translation => {
                        out.translation =
                            codec::constant(c, word).map_or(out.translation, Vec3::from)
                    }
                    Part::Rotation => {
                        out.rotation =
                            codec::constant(c, word).map_or(out.rotation, Quat::from_array)
                    }
                    Part::Scale => {
                        out.scale = codec::constant(c, word).map_or(out.scale, Vec3::from)
                    }
                }
            }
            for batch in &plan.vec3s {
                finish(c, b.u, at, batch, plan.batch_vec3s, rest, local);
            }
            for batch in &plan.rotations {
                finish(c, b.u, at, batch, true, rest, local);
            }
        }
        for j in planned..n {
            self.compressed_joint(c, j, b, Some(at), &rest[j], &mut local[j]);
        }
    }
}

/// Writes `batch`'s sub-tracks into their joints of `local`: decoded together when `together`
/// and that can be, else one by one (rest for a malformed one).
fn finish(
    c: &CompressedClip,
    u: f32,
    at: &codec::PairAt,
    batch: &Batch,
    together: bool,
    rest: &[Trs],
    local: &mut [Trs],
) {
    let n = batch.len;
    if n == 0 || together && batch::write(c, at, u, batch, local) {
        return;
    }
    for (l, (&j, &offset)) in batch.joints[..n].iter().zip(&batch.tracks[..n]).enumerate() {
        let (j, at) = (j as usize, Some(at));
        let st = SubTrack {
            kind: SubTrackKind::Animated,
            offset,
        };
        let (out, rest) = (&mut local[j], &rest[j]);
        match batch.kind {
            Kind::Rotations => out.rotation = codec::quat_at(c, st, at, u).unwrap_or(rest.rotation),
            Kind::Vec3s if batch.scales >> l & 1 == 1 => {
                out.scale = codec::vec3_at(c, st, at, u).unwrap_or(rest.scale)
            }
            Kind::Vec3s => {
                out.translation = codec::vec3_at(c, st, at, u).unwrap_or(rest.translation)
            }
        }
    }
}

/// Local pose of `skeleton` from the cooked samples at `time` (clamped to [0, duration]):
/// lerp t/s and nlerp-shortest q between the two bracketing samples; Default sub-tracks are rest.
/// Either encoding: a compressed clip decodes the two bracketing samples of each sub-track
/// (no cursor, no state). `local` should hold one entry per joint; joints past its end are not
/// written. For a clip with root motion this is the residual (visual) pose, without the trajectory.
pub fn sample_clip(clip: &Clip, skeleton: &Skeleton, time: f32, local: &mut [Trs]) {
    if let Some(c) = clip.compressed.as_ref().filter(|_| batch::available()) {
        let b = clip.bracket(time);
        if let Some(at) = codec::PairAt::new(c, b.i0, b.i1) {
            return clip.compressed_pose(c, b, &at, &skeleton.rest, local);
        }
    }
    let joints = local.iter_mut().zip(&skeleton.rest).enumerate();
    sample_each(clip, time, joints.map(|(j, (out, rest))| (j, rest, out)));
}

/// Samples each `(joint, rest, out)` of `joints` at `time`: the bracket, and a compressed clip's
/// segments, found once for them all.
#[inline(always)]
fn sample_each<'a>(
    clip: &Clip,
    time: f32,
    joints: impl Iterator<Item = (usize, &'a Trs, &'a mut Trs)>,
) {
    let b = clip.bracket(time);
    match &clip.compressed {
        Some(c) => {
            let at = codec::PairAt::new(c, b.i0, b.i1);
            let at = at.as_ref();
            joints.for_each(|(j, rest, out)| clip.compressed_joint(c, j, b, at, rest, out));
        }
        None => joints.for_each(|(j, rest, out)| *out = clip.reference_joint(j, b, rest)),
    }
}

/// Joint `joint` of [`sample_clip`]'s pose alone (random access to one joint's sub-tracks);
/// rest for a joint outside the skeleton's rest pose.
pub fn sample_joint(clip: &Clip, skeleton: &Skeleton, joint: usize, time: f32) -> Trs {
    let rest = skeleton.rest.get(joint).copied().unwrap_or_default();
    clip.joint(joint, clip.bracket(time), &rest)
}

/// [`sample_joint`] of each of `joints` into `out` (one each, in order; joints past `out`'s end
/// are not written), the bracket and a compressed clip's segments found once for them all.
pub fn sample_joints(
    clip: &Clip,
    skeleton: &Skeleton,
    joints: &[usize],
    time: f32,
    out: &mut [Trs],
) {
    let rest = |j: usize| skeleton.rest.get(j).unwrap_or(&Trs::IDENTITY);
    sample_each(
        clip,
        time,
        joints.iter().zip(out).map(|(&j, o)| (j, rest(j), o)),
    );
}

/// The trajectory `R(time)` of a clip with root motion, with the same bracketing and
/// interpolation as [`sample_clip`] (clamped to [0, duration]; lerp t, nlerp-shortest q).
/// `None` when the clip has no root motion or a trajectory shorter than its samples.
pub fn sample_root_motion(clip: &Clip, time: f32) -> Option<(Vec3, Quat)> {
    let motion = clip.root_motion.as_ref()?;
    let b = clip.bracket(time);
    let (i0, i1) = (b.i0 as usize, b.i1 as usize);
    let t = motion
        .translations
        .get(i0)?
        .lerp(*motion.translations.get(i1)?, b.u);
    let q = nlerp_shortest(*motion.rotations.get(i0)?, *motion.rotations.get(i1)?, b.u);
    Some((t, q))
}

/// `inverse(from) * to` for rigid transforms `(t, q)` (`p ↦ q·p + t`): the motion from `from` to
/// `to`, expressed in `from`'s frame. Playing backwards, `from` is the later time.
pub fn root_motion_delta(from: (Vec3, Quat), to: (Vec3, Quat)) -> (Vec3, Quat) {
    let inv = from.1.conjugate();
    (inv * (to.0 - from.0), (inv * to.1).normalize())
}

/// `a * b` for rigid transforms `(t, q)`: `b` applied in `a`'s frame. Deltas compose in time
/// order: `compose_root_motion(first, second)`.
pub fn compose_root_motion(a: (Vec3, Quat), b: (Vec3, Quat)) -> (Vec3, Quat) {
    (a.0 + a.1 * b.0, (a.1 * b.1).normalize())
}

/// `inverse(R(from)) * R(to)` within one pass of the clip (no loop crossing; `from > to` for
/// reverse playback). `None` when the clip has no root motion.
pub fn root_motion_between(clip: &Clip, from: f32, to: f32) -> Option<(Vec3, Quat)> {
    Some(root_motion_delta(
        sample_root_motion(clip, from)?,
        sample_root_motion(clip, to)?,
    ))
}

/// `R(time)` as an affine transform, identity for a clip without root motion: pre-multiplying
/// the residual pose's component transforms by it gives the source pose back.
pub fn root_motion_affine(clip: &Clip, time: f32) -> Affine3A {
    sample_root_motion(clip, time).map_or(Affine3A::IDENTITY, |(t, q)| {
        Affine3A::from_rotation_translation(q, t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_to_f32_converts_as_as_does_bit_for_bit() {
        let edges = [
            0.0,
            -0.0,
            1.0 / 3.0,
            1e-40,
            -1e40,
            f64::MAX,
            f64::INFINITY,
            0.1 + 0.2,
        ];
        for x in edges
            .into_iter()
            .chain((0..1000).map(|i| i as f64 * 0.0137 - 5.0))
        {
            assert_eq!(f64_to_f32(x).to_bits(), (x as f32).to_bits(), "{x}");
        }
        assert!(f64_to_f32(f64::NAN).is_nan());
    }

    /// Three samples at 10 Hz (0, 0.1, 0.2 s), no sub-tracks needed for the trajectory.
    fn clip(root_motion: Option<RootMotion>) -> Clip {
        Clip {
            name: "t".into(),
            skeleton: 0,
            skeleton_hash: 0,
            duration: 0.2,
            sample_rate: 10.0,
            sample_count: 3,
            loop_policy: LoopPolicy::Once,
            profile: "test".into(),
            sub_tracks: Vec::new(),
            values: Vec::new(),
            events: Vec::new(),
            markers: Vec::new(),
            root_motion,
            compressed: None,
        }
    }

    fn motion() -> RootMotion {
        RootMotion {
            joint: 0,
            policy: RootMotionPolicy::Planar,
            translations: vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 0.0, 2.0)],
            rotations: vec![
                Quat::IDENTITY,
                Quat::from_rotation_y(0.5),
                Quat::from_rotation_y(1.0),
            ],
        }
    }

    fn affine((t, q): (Vec3, Quat)) -> Affine3A {
        Affine3A::from_rotation_translation(q, t)
    }

    fn assert_close(a: Affine3A, b: Affine3A) {
        let d = (a.to_cols_array().iter().zip(b.to_cols_array()))
            .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()));
        assert!(d < 1e-6, "{a:?} vs {b:?}");
    }

    #[test]
    fn sampling_brackets_lerps_and_clamps_like_the_pose() {
        let c = clip(Some(motion()));
        let (t, q) = sample_root_motion(&c, 0.05).unwrap();
        assert!((t - Vec3::new(0.5, 0.0, 0.0)).length() < 1e-6, "{t}");
        assert!(q.angle_between(Quat::from_rotation_y(0.25)) < 1e-6, "{q}");
        let (t, _) = sample_root_motion(&c, 0.15).unwrap();
        assert!((t - Vec3::new(1.0, 0.0, 1.0)).length() < 1e-6, "{t}");
        assert_eq!(
            sample_root_motion(&c, -1.0),
            Some((Vec3::ZERO, Quat::IDENTITY))
        );
        assert_eq!(
            sample_root_motion(&c, 9.0),
            Some((Vec3::new(1.0, 0.0, 2.0), Quat::from_rotation_y(1.0)))
        );
        assert_eq!(
            sample_root_motion(&c, f32::NAN),
            Some((Vec3::ZERO, Quat::IDENTITY))
        );
    }

    #[test]
    fn no_or_short_trajectories_sample_as_none() {
        assert_eq!(sample_root_motion(&clip(None), 0.1), None);
        assert_eq!(root_motion_affine(&clip(None), 0.1), Affine3A::IDENTITY);
        let mut short = motion();
        short.translations.pop();
        assert_eq!(sample_root_motion(&clip(Some(short)), 0.2), None);
    }

    #[test]
    fn delta_and_compose_are_the_rigid_transform_algebra() {
        let a = (
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_euler(glam::EulerRot::YXZ, 0.7, -0.2, 0.4),
        );
        let b = (
            Vec3::new(-2.0, 0.5, 1.0),
            Quat::from_euler(glam::EulerRot::YXZ, -1.1, 0.3, 0.1),
        );
        assert_close(
            affine(root_motion_delta(a, b)),
            affine(a).inverse() * affine(b),
        );
        assert_close(affine(compose_root_motion(a, b)), affine(a) * affine(b));
        assert_close(
            affine(compose_root_motion(a, root_motion_delta(a, b))),
            affine(b),
        );
    }

    #[test]
    fn a_pass_and_its_parts_compose() {
        let c = clip(Some(motion()));
        let whole = c.root_motion.as_ref().unwrap().cycle();
        let (r0, r2) = (
            affine((Vec3::ZERO, Quat::IDENTITY)),
            affine((Vec3::new(1.0, 0.0, 2.0), Quat::from_rotation_y(1.0))),
        );
        assert_close(affine(whole), r0.inverse() * r2);
        let split = compose_root_motion(
            root_motion_between(&c, 0.0, 0.13).unwrap(),
            root_motion_between(&c, 0.13, 0.2).unwrap(),
        );
        assert_close(affine(split), affine(whole));
        assert_close(
            affine(root_motion_between(&c, 0.2, 0.0).unwrap()),
            affine(whole).inverse(),
        );
        assert_close(root_motion_affine(&c, 0.2), r2);
    }
}
