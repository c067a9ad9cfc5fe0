//! Choosing, per segment, the quantisation shift of every animated sub-track by the error it
//! causes at virtual vertices (docs/codec.md "Choosing precision").
//!
//! Joints are visited parent first. A joint's sub-tracks are judged through the hierarchy with
//! the CPU reference's own FK: its ancestors already decompressed (their final choice), the joint
//! at the candidate shifts, and its descendants exact, so the error a joint's choice causes at
//! every joint below it counts, and errors cannot pile up unnoticed down a chain. A candidate
//! passes when, at every sample of the segment, each virtual vertex of the joint is within the
//! joint's threshold and each vertex of a descendant within [`DESCENDANT_SHARE`] of that
//! descendant's threshold. The search first finds the coarsest shift shared by the joint's
//! sub-tracks (bisection), then coarsens each sub-track alone while the joint still passes
//! (greedy). A rotation candidate must also keep the hemisphere choice of the cooked sampler
//! between neighbouring samples: where the reference jumps by nearly 180° between two samples (a
//! flip in the source), a small quantisation error could otherwise send the decoder's
//! nlerp-shortest the other way round. This is in the spirit of ACL's per-track bit-rate search (Frechette, "Animation Compression
//! Library", https://github.com/nfrechette/acl). A joint that fails even at shift 0 (the 24-bit
//! clip grid) keeps shift 0 and is counted by the first check it failed there ([`Unmet`]).

use glam::{Affine3A, Quat};
use throng_cpu_ref::codec::rotation_from_stored;
use throng_cpu_ref::error_metric::{virtual_vertex_errors_cm, VERTICES_PER_JOINT};
use throng_cpu_ref::{Skeleton, Trs};

use super::quantize::{Range, SegmentRange, COARSEST};

/// Share of a descendant's threshold that the choice of an ancestor's sub-tracks may use; the
/// rest is left to the descendant. Measured on the CMU clips: 0.5 costs 7 % more bytes, 1.0 saves
/// 1 % but leaves children with nothing when errors line up.
pub const DESCENDANT_SHARE: f32 = 0.9;

/// Joint-segments that kept shift 0 without passing, by the first check they failed there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Unmet {
    /// A vertex of the joint itself beyond the joint's threshold.
    pub own: usize,
    /// A vertex of a descendant beyond [`DESCENDANT_SHARE`] of the descendant's threshold.
    pub descendant: usize,
    /// A rotation's neighbouring samples in other hemispheres than the reference's (a flip in
    /// the source that even the finest grid moves across).
    pub hemisphere: usize,
}

impl Unmet {
    pub fn total(&self) -> usize {
        self.own + self.descendant + self.hemisphere
    }

    fn count(&mut self, miss: Miss) {
        match miss {
            Miss::Own => self.own += 1,
            Miss::Descendant => self.descendant += 1,
            Miss::Hemisphere => self.hemisphere += 1,
        }
    }

    pub fn add(&mut self, other: Unmet) {
        self.own += other.own;
        self.descendant += other.descendant;
        self.hemisphere += other.hemisphere;
    }
}

/// The check a candidate failed first ([`Segment::passes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Miss {
    Own,
    Descendant,
    Hemisphere,
}

/// An animated sub-track to encode.
pub struct Track {
    pub joint: usize,
    /// 0 translation, 1 rotation (three components, `rebuilt` the fourth), 2 scale.
    pub component: usize,
    /// The rebuilt component of a rotation (0 x, 1 y, 2 z, 3 w).
    pub rebuilt: u32,
    pub ranges: [Range; 3],
    /// Clip-level integers per sample.
    pub ks: Vec<[u32; 3]>,
}

impl Track {
    /// Decoded components of sample `i` after a round trip through `segment` at `shift`.
    pub fn value(&self, i: usize, segment: &[SegmentRange; 3], shift: u32) -> [f32; 3] {
        let k = self.ks.get(i).copied().unwrap_or_default();
        std::array::from_fn(|c| self.ranges[c].value(segment[c].round_trip(k[c], shift)))
    }

    /// `local` with this sub-track replaced by `value`.
    fn apply(&self, local: &mut Trs, value: [f32; 3]) {
        match self.component {
            0 => local.translation = value.into(),
            1 => local.rotation = rotation_from_stored(value, self.rebuilt),
            _ => local.scale = value.into(),
        }
    }
}

/// The choice for one animated sub-track in one segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentChoice {
    pub shift: u32,
    pub ranges: [SegmentRange; 3],
}

/// What the search needs of a clip: the reference locals sample-major
/// (`locals[i * joints + j]`), its animated sub-tracks and each joint's threshold in cm.
pub struct Problem<'a> {
    pub skeleton: &'a Skeleton,
    pub locals: &'a [Trs],
    pub tracks: &'a [Track],
    pub thresholds: &'a [f32],
}

/// Per segment of `segment_length` samples, the choice of every track (in track order), and
/// the joint-segments that kept shift 0 without passing.
pub fn choose(
    problem: &Problem,
    samples: usize,
    segment_length: usize,
) -> (Vec<Vec<SegmentChoice>>, Unmet) {
    let n = problem.skeleton.joint_count();
    let mut by_joint = vec![Vec::new(); n];
    for (t, track) in problem.tracks.iter().enumerate() {
        if let Some(list) = by_joint.get_mut(track.joint) {
            list.push(t);
        }
    }
    let segment_length = segment_length.max(1);
    let mut segment = Segment::new(n, segment_length);
    let mut unmet = Unmet::default();
    let choices = (0..samples)
        .step_by(segment_length)
        .map(|first| {
            let m = segment_length.min(samples - first);
            let (choice, missed) = segment.choose(problem, &by_joint, first, m);
            unmet.add(missed);
            choice
        })
        .collect();
    (choices, unmet)
}

/// Scratch of one segment's search, reused across segments.
struct Segment {
    joints: usize,
    /// Reference local and component transforms, `[i * joints + j]`.
    reference_local: Vec<Affine3A>,
    reference: Vec<Affine3A>,
    /// Decompressed component transforms of the joints chosen so far.
    decoded: Vec<Affine3A>,
    /// A candidate's component transforms of one sample, per joint.
    trial: Vec<Affine3A>,
    errors: Vec<f32>,
    /// Per track, the decoded rotation of the previous segment's last sample.
    last: Vec<Option<Quat>>,
}

impl Segment {
    fn new(joints: usize, samples: usize) -> Segment {
        Segment {
            joints,
            reference_local: vec![Affine3A::IDENTITY; joints * samples],
            reference: vec![Affine3A::IDENTITY; joints * samples],
            decoded: vec![Affine3A::IDENTITY; joints * samples],
            trial: vec![Affine3A::IDENTITY; joints],
            errors: vec![0.0; joints * VERTICES_PER_JOINT],
            last: Vec::new(),
        }
    }

    /// Chooses the tracks of samples `first .. first + m`; returns the choices and the joints
    /// that failed even at shift 0.
    fn choose(
        &mut self,
        p: &Problem,
        by_joint: &[Vec<usize>],
        first: usize,
        m: usize,
    ) -> (Vec<SegmentChoice>, Unmet) {
        let n = self.joints;
        let parents = &p.skeleton.parents;
        for i in 0..m {
            for j in 0..n {
                let local = p
                    .locals
                    .get((first + i) * n + j)
                    .copied()
                    .unwrap_or_default()
                    .to_affine();
                self.reference_local[i * n + j] = local;
                self.reference[i * n + j] = match parent_of(parents, j) {
                    Some(q) => self.reference[i * n + q] * local,
                    None => local,
                };
            }
        }
        let mut choices: Vec<SegmentChoice> = p
            .tracks
            .iter()
            .map(|t| {
                let ks = t.ks.get(first..first + m).unwrap_or_default();
                let ranges = std::array::from_fn(|c| SegmentRange::of(ks.iter().map(|k| k[c])));
                SegmentChoice { shift: 0, ranges }
            })
            .collect();
        self.last.resize(p.tracks.len(), None);
        let mut missed = Unmet::default();
        for (j, mine) in by_joint.iter().enumerate() {
            if !mine.is_empty() {
                if let Err(miss) = self.search(p, j, mine, first, m, &mut choices) {
                    missed.count(miss);
                }
            }
            for &t in mine {
                if let (Some(track), Some(c), Some(last)) =
                    (p.tracks.get(t), choices.get(t), self.last.get_mut(t))
                {
                    *last = (track.component == 1 && m > 0).then(|| {
                        rotation_from_stored(
                            track.value(first + m - 1, &c.ranges, c.shift),
                            track.rebuilt,
                        )
                    });
                }
            }
            for i in 0..m {
                let local = candidate(p, j, mine, first + i, &choices).to_affine();
                self.decoded[i * n + j] = match parent_of(parents, j) {
                    Some(q) => self.decoded[i * n + q] * local,
                    None => local,
                };
            }
        }
        (choices, missed)
    }

    /// Sets the shifts of joint `j`'s tracks `mine`; the check that shift 0 failed, if it did.
    fn search(
        &mut self,
        p: &Problem,
        j: usize,
        mine: &[usize],
        first: usize,
        m: usize,
        choices: &mut [SegmentChoice],
    ) -> Result<(), Miss> {
        let set = |choices: &mut [SegmentChoice], shifts: &[u32]| {
            for (&t, &s) in mine.iter().zip(shifts) {
                choices[t].shift = s;
            }
        };
        let mut shifts = [0u32; 3];
        let shifts = &mut shifts[..mine.len()];
        set(choices, shifts);
        self.passes(p, j, mine, first, m, choices)?;
        // Bisection for the coarsest common shift: `lo` passes, `hi` fails (or is past the end).
        let (mut lo, mut hi) = (0, COARSEST + 1);
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            shifts.fill(mid);
            set(choices, shifts);
            if self.passes(p, j, mine, first, m, choices).is_ok() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        shifts.fill(lo);
        // Greedy: coarsen each track alone while the joint passes.
        let mut changed = true;
        while changed {
            changed = false;
            for k in 0..shifts.len() {
                if shifts[k] >= COARSEST {
                    continue;
                }
                shifts[k] += 1;
                set(choices, shifts);
                if self.passes(p, j, mine, first, m, choices).is_ok() {
                    changed = true;
                } else {
                    shifts[k] -= 1;
                }
            }
        }
        set(choices, shifts);
        Ok(())
    }

    /// Whether joint `j` with its tracks at `choices` keeps every vertex of its subtree within
    /// budget at every sample of the segment, and its rotation the reference's hemisphere choices;
    /// the first check that failed, if one did.
    fn passes(
        &mut self,
        p: &Problem,
        j: usize,
        mine: &[usize],
        first: usize,
        m: usize,
        choices: &[SegmentChoice],
    ) -> Result<(), Miss> {
        if !self.keeps_hemispheres(p, mine, first, m, choices) {
            return Err(Miss::Hemisphere);
        }
        let n = self.joints;
        let end = p
            .skeleton
            .subtree_end
            .get(j)
            .map_or(j + 1, |&e| e as usize)
            .clamp(j + 1, n);
        let parents = &p.skeleton.parents;
        for i in 0..m {
            let local = candidate(p, j, mine, first + i, choices).to_affine();
            self.trial[j] = match parent_of(parents, j) {
                Some(q) => self.decoded[i * n + q] * local,
                None => local,
            };
            for d in j + 1..end {
                let q = parent_of(parents, d).unwrap_or(j);
                self.trial[d] = self.trial[q] * self.reference_local[i * n + d];
            }
            let errors = &mut self.errors[..(end - j) * VERTICES_PER_JOINT];
            virtual_vertex_errors_cm(
                &p.skeleton.root_transform,
                &self.reference[i * n + j..i * n + end],
                &self.trial[j..end],
                errors,
            );
            for (d, e) in (j..end).zip(errors.chunks_exact(VERTICES_PER_JOINT)) {
                let threshold = p.thresholds.get(d).copied().unwrap_or(0.0);
                let (budget, miss) = if d == j {
                    (threshold, Miss::Own)
                } else {
                    (DESCENDANT_SHARE * threshold, Miss::Descendant)
                };
                // NaN fails.
                if !e.iter().all(|&e| e <= budget) {
                    return Err(miss);
                }
            }
        }
        Ok(())
    }
}

impl Segment {
    /// For each rotation track of `mine`, every two neighbouring samples (the first paired with
    /// the previous segment's last) lie in the same or in opposite hemispheres as decoded and as
    /// in the reference, so nlerp-shortest interpolates both the same way.
    fn keeps_hemispheres(
        &self,
        p: &Problem,
        mine: &[usize],
        first: usize,
        m: usize,
        choices: &[SegmentChoice],
    ) -> bool {
        let n = p.skeleton.joint_count();
        for &t in mine {
            let (Some(track), Some(c)) = (p.tracks.get(t), choices.get(t)) else {
                continue;
            };
            if track.component != 1 {
                continue;
            }
            let reference = |i: usize| {
                p.locals
                    .get(i * n + track.joint)
                    .map_or(Quat::IDENTITY, |l| l.rotation)
            };
            let mut previous = self.last.get(t).copied().flatten().filter(|_| first > 0);
            for i in first..first + m {
                let decoded =
                    rotation_from_stored(track.value(i, &c.ranges, c.shift), track.rebuilt);
                if let Some(before) = previous {
                    let same = reference(i - 1).dot(reference(i)) >= 0.0;
                    if (before.dot(decoded) >= 0.0) != same {
                        return false;
                    }
                }
                previous = Some(decoded);
            }
        }
        true
    }
}

/// Parent of joint `j` when it comes before `j`.
fn parent_of(parents: &[u32], j: usize) -> Option<usize> {
    parents.get(j).map(|&q| q as usize).filter(|&q| q < j)
}

/// The local transform of joint `j` at sample `i` with its tracks `mine` decoded at `choices`.
fn candidate(p: &Problem, j: usize, mine: &[usize], i: usize, choices: &[SegmentChoice]) -> Trs {
    let n = p.skeleton.joint_count();
    let mut local = p.locals.get(i * n + j).copied().unwrap_or_default();
    for &t in mine {
        if let (Some(track), Some(choice)) = (p.tracks.get(t), choices.get(t)) {
            track.apply(&mut local, track.value(i, &choice.ranges, choice.shift));
        }
    }
    local
}
