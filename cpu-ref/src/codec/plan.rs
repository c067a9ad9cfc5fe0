//! A compressed clip's sub-tracks grouped by how a whole pose decodes them: constants, animated
//! translations and scales, animated rotations in batches of [`super::batch::MOST`]. Derived from
//! the clip's sub-track table once, when the clip is cooked or read, so that a pose does not walk
//! the table joint by joint to find them (the walk cost about a tenth of the compressed pose on
//! dense mocap, docs/benchmark.md, "The codec table").

use super::batch::{Batch, Kind};
use crate::clip::{SubTrack, SubTrackKind};
use crate::Skeleton;

/// The joint's part a sub-track sets: its place in the joint's (t, q, s) triple.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Translation,
    Rotation,
    Scale,
}

/// One constant sub-track: the joint, the part it sets and the word of its value in the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Constant {
    pub joint: u16,
    pub part: Part,
    pub word: u32,
}

/// The sub-tracks of the first [`PosePlan::joints`] joints, grouped ([`PosePlan::new`]); Default
/// sub-tracks are in none of the groups (a pose starts from rest). A plan belongs to the table
/// it was made from: a clip whose sub-tracks change needs a new one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PosePlan {
    /// Joints covered: `sub_tracks.len() / 3`, at most [`Skeleton::MAX_JOINTS`].
    pub(crate) joints: usize,
    pub(crate) constants: Vec<Constant>,
    /// Animated translations and scales (a batch's `scales` marks the scales).
    pub(crate) vec3s: Vec<Batch>,
    /// Whether `vec3s` decode together: only from three more animated sub-tracks than joints,
    /// since a batch costs about what three cost one by one and most clips animate only the
    /// root's translation.
    pub(crate) batch_vec3s: bool,
    pub(crate) rotations: Vec<Batch>,
}

impl PosePlan {
    /// The plan of `sub_tracks` (t, q, s per joint) of a clip with `animated` animated
    /// sub-tracks. Allocates.
    pub fn new(sub_tracks: &[SubTrack], animated: u32) -> Self {
        let joints = (sub_tracks.len() / 3).min(Skeleton::MAX_JOINTS);
        let mut plan = PosePlan {
            joints,
            batch_vec3s: animated as usize >= joints + 3,
            ..PosePlan::default()
        };
        let (mut vec3s, mut rotations) = (Batch::new(Kind::Vec3s), Batch::new(Kind::Rotations));
        let parts = [Part::Translation, Part::Rotation, Part::Scale];
        for (j, triple) in sub_tracks.chunks_exact(3).take(joints).enumerate() {
            // `joints` is at most `MAX_JOINTS`, so a joint index fits a u16.
            let joint = j as u16;
            for (&st, part) in triple.iter().zip(parts) {
                match (st.kind, part) {
                    (SubTrackKind::Default, _) => {}
                    (SubTrackKind::Constant, _) => plan.constants.push(Constant {
                        joint,
                        part,
                        word: st.offset,
                    }),
                    (SubTrackKind::Animated, Part::Rotation) => {
                        if rotations.push(st.offset, joint, false) {
                            plan.rotations.push(rotations);
                            rotations.clear();
                        }
                    }
                    (SubTrackKind::Animated, _) => {
                        if vec3s.push(st.offset, joint, part == Part::Scale) {
                            plan.vec3s.push(vec3s);
                            vec3s.clear();
                        }
                    }
                }
            }
        }
        for (batches, last) in [(&mut plan.vec3s, vec3s), (&mut plan.rotations, rotations)] {
            if last.len > 0 {
                batches.push(last);
            }
        }
        plan
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::batch::MOST;

    fn table(kinds: &[SubTrackKind]) -> Vec<SubTrack> {
        (kinds.iter().zip(0..))
            .map(|(&kind, offset)| SubTrack { kind, offset })
            .collect()
    }

    #[test]
    fn a_plan_groups_constants_vec3s_and_rotations_in_batches_and_leaves_defaults_out() {
        use SubTrackKind::{Animated as A, Constant as C, Default as D};
        // 40 joints: the root's translation and scale animated, joint 1's translation constant,
        // every rotation animated but joint 2's (Default) and joint 3's (constant); a trailing
        // partial joint is outside the plan.
        let mut kinds = vec![A, A, A, C, A, D, D, D, D, D, C, D];
        kinds.extend([D, A, D].repeat(36));
        kinds.extend([A, A]);
        let animated = kinds.iter().filter(|&&k| k == A).count() as u32;
        let plan = PosePlan::new(&table(&kinds), animated);
        assert_eq!(plan.joints, 40);
        let constants: Vec<_> = plan.constants.iter().map(|k| (k.joint, k.part)).collect();
        assert_eq!(constants, [(1, Part::Translation), (3, Part::Rotation)]);
        assert_eq!(plan.vec3s.len(), 1);
        let v = &plan.vec3s[0];
        assert_eq!(
            (v.len, &v.joints[..2], &v.tracks[..2], v.scales),
            (2, &[0, 0][..], &[0, 2][..], 0b10)
        );
        let rotations: Vec<usize> = plan.rotations.iter().map(|b| b.len).collect();
        assert_eq!(rotations, [MOST, 38 - MOST], "joints 0, 1 and 4..40");
        let first = &plan.rotations[0];
        assert_eq!(
            (first.joints[0], first.joints[2], first.tracks[2]),
            (0, 4, 13)
        );
        assert!(plan
            .rotations
            .iter()
            .all(|b| b.kind == Kind::Rotations && b.scales == 0));
        assert!(
            !plan.batch_vec3s,
            "42 animated: not 3 more than the 40 joints"
        );
        assert!(PosePlan::new(&table(&kinds), 43).batch_vec3s);
    }
}
